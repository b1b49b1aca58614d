//! A turn is `Send`: parallel `pre` groups whose hooks await at once (two groups split by a
//! sequential hook), spawned with `tokio::spawn`.

use std::sync::Arc;
use std::time::Duration;

use agentix::{Agent, Part, ScriptedModel, Turn, hook};
use ui_tests::{finished, spawn_each_run};

#[hook(pre, parallel)]
async fn slow(_turn: &Turn) -> String {
    tokio::time::sleep(Duration::from_millis(2)).await;
    "slow".into()
}

#[hook(pre, parallel)]
async fn fast(turn: &Turn) -> Vec<Part> {
    tokio::task::yield_now().await;
    vec![Part::text(format!("fast: {}", turn.user_message().text()))]
}

#[hook(pre)]
async fn between(turn: &mut Turn) {
    tokio::task::yield_now().await;
    turn.inject("between");
}

#[hook(pre, parallel, durable)]
async fn remembered(_turn: &Turn) -> Option<Part> {
    tokio::task::yield_now().await;
    Some(Part::text("remembered"))
}

fn main() {
    let model = Arc::new(ScriptedModel::new().text("one").text("two").text("three"));
    let agent = Agent::builder(Arc::clone(&model)).hook(slow).hook(fast).hook(between).hook(remembered).build();
    let (run, observed, streamed) = spawn_each_run!(agent);
    assert_eq!(run.unwrap().joined_text(), "one");
    assert_eq!(observed.unwrap().joined_text(), "two");
    assert_eq!(finished(&streamed).as_ref().unwrap().joined_text(), "three");
    // Every request carries the groups' content in declaration order, whatever order it came in.
    for (request, message) in model.requests().iter().zip(["run", "observed", "streamed"]) {
        let injected: Vec<String> = request.messages.last().unwrap().content.iter().map(|part| part.as_text().unwrap().to_owned()).collect();
        assert_eq!(injected, ["slow", format!("fast: {message}").as_str(), "between", "remembered"]);
    }
}
