//! Clearing old tool results on the real loop: the model reads stubs for all but the latest
//! results, cleared a batch at a time so the start of each request stays the same; the log
//! keeps every result whole.

use std::sync::Arc;

use agentix::{Agent, Conversation, ScriptedModel, model::ModelRequest};
use agentix_hooks::ClearToolResults;
use serde_json::json;
use tests::{Flaky, Weather, logged_results, tool_results};

fn city(step: usize) -> serde_json::Value {
    json!({ "city": format!("city {step}") })
}

/// What the model read of each result, request by request.
fn outputs(requests: &[ModelRequest]) -> Vec<Vec<String>> {
    requests
        .iter()
        .map(|request| tool_results(request).into_iter().map(|result| result.output).collect())
        .collect()
}

fn cleared(name: &str) -> String {
    format!("[result of {name} cleared to save context; call it again if you need it]")
}

#[tokio::test]
async fn older_results_are_stubbed_a_batch_at_a_time_and_the_log_keeps_them_whole() {
    let model = (0..5)
        .fold(ScriptedModel::new(), |model, step| model.tool_call("get_weather", city(step)))
        .text("Sunny everywhere.");
    let agent = Agent::builder(&model)
        .tool(Weather::default())
        .hook(ClearToolResults::keep(2).in_batches_of(2))
        .build();
    let mut conversation = Conversation::new();
    agent.run(&mut conversation, "weather?").await.unwrap();

    let requests = model.requests();
    let read = outputs(&requests);
    let whole = |step: usize| format!("sunny in city {step}");
    let stub = cleared("get_weather");
    // Three results: one past the two kept, not yet a batch. Four: two cleared. Five: still two.
    assert_eq!(read[3], [whole(0), whole(1), whole(2)]);
    assert_eq!(read[4], [stub.clone(), stub.clone(), whole(2), whole(3)]);
    assert_eq!(read[5], [stub.clone(), stub, whole(2), whole(3), whole(4)]);
    // Between batches, each request starts as the one before it did.
    assert_eq!(requests[5].messages[..requests[4].messages.len()], requests[4].messages[..]);
    // The log has every result whole.
    let logged: Vec<_> = logged_results(&conversation).iter().map(|r| r.output.clone()).collect();
    assert_eq!(logged, (0..5).map(whole).collect::<Vec<_>>());
}

#[tokio::test]
async fn the_results_of_excepted_tools_are_neither_cleared_nor_counted() {
    let model = ScriptedModel::new()
        .tool_call("flaky", city(0))
        .tool_call("get_weather", city(1))
        .tool_call("get_weather", city(2))
        .text("Done.");
    let agent = Agent::builder(&model)
        .tool(Weather::default())
        .tool(Flaky { failures: 0, calls: Arc::default() })
        .hook(ClearToolResults::keep(1).except(["fla*"]).unwrap())
        .build();
    agent.run(&mut Conversation::new(), "go").await.unwrap();
    let read = outputs(&model.requests());
    assert_eq!(
        read[3],
        ["reached city 0".to_owned(), cleared("get_weather"), "sunny in city 2".into()]
    );
}

#[tokio::test]
async fn results_of_earlier_turns_are_cleared_too() {
    let model = ScriptedModel::new()
        .tool_call("get_weather", city(0))
        .text("One.")
        .tool_call("get_weather", city(1))
        .text("Two.");
    let agent =
        Agent::builder(&model).tool(Weather::default()).hook(ClearToolResults::keep(1)).build();
    let mut conversation = Conversation::new();
    agent.run(&mut conversation, "one").await.unwrap();
    agent.run(&mut conversation, "two").await.unwrap();
    let read = outputs(&model.requests());
    assert_eq!(read[2], ["sunny in city 0"]);
    assert_eq!(read[3], [cleared("get_weather"), "sunny in city 1".into()]);
}
