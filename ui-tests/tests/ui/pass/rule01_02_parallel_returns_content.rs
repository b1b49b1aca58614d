//! Rules 1 and 2: `parallel` on `pre`, returning content of every accepted shape.

use agentix::{Agent, Conversation, Part, ScriptedModel, Turn, hook};

#[hook(pre, parallel)]
async fn many(_turn: &Turn) -> Vec<Part> {
    vec![Part::text("a"), Part::text("b")]
}

#[hook(pre, parallel)]
async fn one(_turn: &Turn) -> Part {
    Part::text("c")
}

#[hook(pre, parallel)]
async fn maybe(turn: &Turn) -> Option<Part> {
    turn.user_message().text().contains("d").then(|| Part::text("d"))
}

#[hook(pre, parallel)]
async fn text(_turn: &Turn) -> String {
    "e".to_owned()
}

#[hook(pre, parallel)]
async fn no_turn() -> Option<Part> {
    None
}

fn main() {
    let model = ScriptedModel::new().text("ok");
    let agent = Agent::builder(&model).hook(many).hook(one).hook(maybe).hook(text).hook(no_turn).build();
    futures::executor::block_on(agent.run(&mut Conversation::new(), "abcd")).unwrap();
    let injected: Vec<String> =
        model.requests()[0].messages[1].content.iter().filter_map(|p| p.as_text().map(String::from)).collect();
    assert_eq!(injected, ["a", "b", "c", "d", "e"]);
}
