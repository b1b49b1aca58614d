//! A plain `async fn` registered as a hook, without `#[hook(...)]`.

use agentix::event::AfterModel;
use agentix::{Agent, AssistantMessage, ScriptedModel, Verdict};

async fn checked(message: &AssistantMessage) -> Verdict<AfterModel> {
    let _ = message;
    Verdict::Continue
}

fn main() {
    let _agent = Agent::builder(ScriptedModel::new()).hook(checked).build();
}
