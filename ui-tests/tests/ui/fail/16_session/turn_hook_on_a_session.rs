use agentix::session::Session;
use agentix::{Agent, ScriptedModel, Turn, hook};

#[hook(pre)]
async fn greet(turn: &mut Turn) {
    turn.inject("Be brief.");
}

fn main() {
    let agent = Agent::builder(ScriptedModel::new()).build();
    let _session = Session::builder(&agent).hook(greet).build();
}
