//! Rule 9: every attribute word, in any order: `name` and `when` take effect.

use std::future::IntoFuture;
use agentix::{Agent, AssistantMessage, Conversation, ScriptedModel, Turn, Verdict, hook, observe::Observation};
use agentix::event::AfterModel;

fn is_short(message: &AssistantMessage, _turn: &Turn) -> bool {
    message.joined_text().len() < 5
}

fn always(_turn: &Turn) -> bool {
    true
}

#[hook(name = "length_guard", when = is_short, after_model)]
async fn too_short(_message: &AssistantMessage) -> Verdict<AfterModel> {
    Verdict::retry("say more")
}

#[hook(pre, when = always, name = "greeter", durable)]
async fn greet(turn: &mut Turn) {
    turn.inject("hello");
}

#[hook(parallel, pre)]
async fn note(_turn: &Turn) -> String {
    "note".into()
}

fn main() {
    let model = ScriptedModel::new().text("hm").text("a longer answer");
    let agent = Agent::builder(&model).hook(greet).hook(note).hook(too_short).build();
    let names = std::sync::Mutex::new(Vec::new());
    let observer = |observation: &Observation<'_>| {
        if let Observation::Hook { hook, .. } = observation {
            names.lock().unwrap().push(hook.to_string());
        }
    };
    let reply = futures::executor::block_on(agent.turn(&mut Conversation::new(), "hi").observe(&observer).into_future()).unwrap();
    assert_eq!(reply.joined_text(), "a longer answer");
    // `too_short` ran only while the answer was short: once to retry, then skipped by `when`.
    assert_eq!(*names.lock().unwrap(), ["greeter", "note", "length_guard", "length_guard"]);
}
