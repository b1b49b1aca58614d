//! Call limits on the real loop: model calls and tool calls counted per turn and per
//! conversation, and what a reached limit does — an error naming it, an answer, or (tools) a
//! rejected call.

use std::sync::{Arc, Mutex};

use agentix::event::EventKind;
use agentix::{Agent, Conversation, Error, ScriptedModel, message::ToolFailure};
use agentix_hooks::{ModelCallLimit, Reached, ToolCallLimit};
use serde_json::json;
use tests::{Weather, assert_log_consistent, logged_results};

fn weather(city: &str) -> serde_json::Value {
    json!({ "city": city })
}

/// A model that asks for the weather `steps` times, one call a step, then answers.
fn asks_weather(steps: usize) -> ScriptedModel {
    (0..steps)
        .fold(ScriptedModel::new(), |model, step| {
            model.tool_call("get_weather", weather(&format!("city {step}")))
        })
        .text("Sunny everywhere.")
}

fn halted_by(error: &Error) -> (EventKind, &'static str, String) {
    match error {
        Error::Halted { event, hook, reason } => (*event, *hook, reason.clone()),
        other => panic!("not a halt: {other:?}"),
    }
}

#[tokio::test]
async fn past_the_model_calls_of_a_turn_the_turn_ends_with_an_error_naming_the_limit() {
    let model = asks_weather(5);
    let agent = Agent::builder(&model)
        .tool(Weather::default())
        .hook(ModelCallLimit::new().per_turn(3))
        .build();
    let mut conversation = Conversation::new();
    let error = agent.run(&mut conversation, "weather?").await.unwrap_err();
    let (event, hook, reason) = halted_by(&error);
    assert_eq!((event, hook), (EventKind::BeforeModel, ModelCallLimit::NAME));
    assert_eq!(reason, "the turn reached its limit of 3 model calls");
    assert_eq!(model.calls(), 3);
    assert_log_consistent(conversation.log());
    assert_eq!(logged_results(&conversation).len(), 3, "the steps before the limit are kept");
}

#[tokio::test]
async fn past_a_limit_the_turn_can_end_with_an_answer_instead() {
    let model = asks_weather(5);
    let limit =
        ModelCallLimit::new().per_turn(2).when_reached(Reached::Answer("I stopped.".into()));
    let agent = Agent::builder(&model).tool(Weather::default()).hook(limit).build();
    let mut conversation = Conversation::new();
    let reply = agent.run(&mut conversation, "weather?").await.unwrap();
    assert_eq!(reply.joined_text(), "I stopped.");
    assert_eq!(model.calls(), 2);
    assert_log_consistent(conversation.log());
}

#[tokio::test]
async fn the_conversations_limit_counts_every_turn_and_survives_serialization() {
    // Turn 1: two calls (a tool step, an answer); turn 2: one; turn 3 would pass 4.
    let model = asks_weather(1).text("Still sunny.").text("never asked");
    let agent = Agent::builder(&model)
        .tool(Weather::default())
        .hook(ModelCallLimit::new().per_conversation(3))
        .build();
    let mut conversation = Conversation::new();
    agent.run(&mut conversation, "weather?").await.unwrap();
    // Stored and revived between turns, as a conversation in a store is.
    let json = serde_json::to_string(&conversation).unwrap();
    let mut conversation: Conversation = serde_json::from_str(&json).unwrap();
    agent.run(&mut conversation, "and now?").await.unwrap();
    let error = agent.run(&mut conversation, "and now?").await.unwrap_err();
    let (_, _, reason) = halted_by(&error);
    assert_eq!(reason, "the conversation reached its limit of 3 model calls");
    assert_eq!(model.calls(), 3);
}

#[tokio::test]
async fn a_call_is_counted_once_however_many_limits_watch_it_and_each_holds_it_to_its_own() {
    let model = asks_weather(1);
    let agent = Agent::builder(&model)
        .tool(Weather::default())
        .hook(ModelCallLimit::new().per_turn(2))
        .hook(ModelCallLimit::new().per_conversation(2))
        .build();
    agent.run(&mut Conversation::new(), "weather?").await.unwrap();
    assert_eq!(model.calls(), 2);

    // The second limit is the tighter: the call the first counted is held to it too.
    let model = asks_weather(1);
    let agent = Agent::builder(&model)
        .tool(Weather::default())
        .hook(ModelCallLimit::new().per_turn(10))
        .hook(ModelCallLimit::new().per_conversation(1))
        .build();
    let error = agent.run(&mut Conversation::new(), "weather?").await.unwrap_err();
    assert_eq!(halted_by(&error).2, "the conversation reached its limit of 1 model call");
    assert_eq!(model.calls(), 1);
}

#[tokio::test]
async fn a_tighter_tool_limit_after_a_looser_one_still_rejects() {
    let model = ScriptedModel::new()
        .tool_calls([("get_weather", weather("Oslo")), ("get_weather", weather("Bergen"))])
        .text("One of two.");
    let tool = Weather::default();
    let calls = Arc::clone(&tool.calls);
    let agent = Agent::builder(&model)
        .tool(tool)
        .hook(ToolCallLimit::all().per_turn(30))
        .hook(ToolCallLimit::of("get_weather").unwrap().per_turn(1))
        .build();
    agent.run(&mut Conversation::new(), "weather?").await.unwrap();
    assert_eq!(*calls.lock().unwrap(), ["Oslo"]);
}

#[tokio::test]
async fn a_message_sent_back_is_a_model_call_of_its_own() {
    let model = ScriptedModel::new().text("First.").text("Second.");
    let agent = Agent::builder(&model)
        .hook(tests::answer_again_once)
        .hook(ModelCallLimit::new().per_turn(1))
        .build();
    let error = agent.run(&mut Conversation::new(), "hi").await.unwrap_err();
    assert_eq!(halted_by(&error).2, "the turn reached its limit of 1 model call");
    assert_eq!(model.calls(), 1);
}

#[tokio::test]
async fn a_tools_calls_past_its_limit_are_rejected_and_the_turn_goes_on() {
    let model = ScriptedModel::new()
        .tool_calls([
            ("get_weather", weather("Oslo")),
            ("get_weather", weather("Bergen")),
            ("get_weather", weather("Tromsø")),
        ])
        .text("Two of three.");
    let tool = Weather::default();
    let calls = Arc::clone(&tool.calls);
    let agent = Agent::builder(&model)
        .tool(tool)
        .hook(ToolCallLimit::of("get_weather").unwrap().per_turn(2))
        .build();
    let mut conversation = Conversation::new();
    let reply = agent.run(&mut conversation, "weather?").await.unwrap();
    assert_eq!(reply.joined_text(), "Two of three.");
    assert_eq!(*calls.lock().unwrap(), ["Oslo", "Bergen"]);
    let results = logged_results(&conversation);
    match &results[2].error {
        Some(ToolFailure::Rejected { reason, .. }) => {
            assert_eq!(reason, "the turn reached its limit of 2 calls of `get_weather`; not run")
        }
        other => panic!("the third call was not rejected: {other:?}"),
    }
    // The model read why.
    let last = model.requests().pop().unwrap();
    let read = tests::tool_results(&last);
    assert!(read[2].output.contains("limit of 2 calls of `get_weather`"), "{read:?}");
}

#[tokio::test]
async fn a_limit_on_all_tools_per_conversation_counts_across_turns_and_tools() {
    let model = ScriptedModel::new()
        .tool_call("get_weather", weather("Oslo"))
        .text("One.")
        .tool_calls([("flaky", weather("Bergen")), ("get_weather", weather("Tromsø"))])
        .text("Done.");
    let agent = Agent::builder(&model)
        .tool(Weather::default())
        .tool(tests::Flaky { failures: 0, calls: Arc::default() })
        .hook(ToolCallLimit::all().per_conversation(2))
        .build();
    let mut conversation = Conversation::new();
    agent.run(&mut conversation, "one").await.unwrap();
    agent.run(&mut conversation, "two").await.unwrap();
    let results = logged_results(&conversation);
    assert_eq!(results.len(), 3);
    assert!(results[1].error.is_none(), "the second call of the conversation ran");
    assert!(
        matches!(&results[2].error, Some(ToolFailure::Rejected { reason, .. })
            if reason.starts_with("the conversation reached its limit of 2 tool calls")),
        "{:?}",
        results[2]
    );
}

#[tokio::test]
async fn a_limit_that_ends_the_turn_runs_none_of_a_message_that_asks_past_it() {
    for reached in [Reached::Error, Reached::Answer("Enough weather.".into())] {
        let model = ScriptedModel::new()
            .tool_call("get_weather", weather("Oslo"))
            .tool_calls([("get_weather", weather("Bergen")), ("get_weather", weather("Bodø"))])
            .text("never asked");
        let tool = Weather::default();
        let calls = Arc::clone(&tool.calls);
        let limit = ToolCallLimit::of("get_*").unwrap().per_turn(2).when_reached(reached.clone());
        let agent = Agent::builder(&model).tool(tool).hook(limit).build();
        let mut conversation = Conversation::new();
        let outcome = agent.run(&mut conversation, "weather?").await;
        assert_eq!(*calls.lock().unwrap(), ["Oslo"], "{reached:?}");
        match reached {
            Reached::Error => {
                let (event, hook, reason) = halted_by(&outcome.unwrap_err());
                assert_eq!((event, hook), (EventKind::AfterModel, ToolCallLimit::NAME));
                assert_eq!(reason, "the turn reached its limit of 2 calls of `get_*`");
            }
            _ => assert_eq!(outcome.unwrap().joined_text(), "Enough weather."),
        }
        assert_eq!(model.calls(), 2);
        assert_log_consistent(conversation.log());
    }
}

#[tokio::test]
async fn each_turn_starts_its_own_count() {
    let model = asks_weather(2).tool_call("get_weather", weather("x")).text("Again.");
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let tool = Weather { calls: Arc::clone(&seen) };
    let agent = Agent::builder(&model)
        .tool(tool)
        .hook(ToolCallLimit::of("get_weather").unwrap().per_turn(2))
        .build();
    let mut conversation = Conversation::new();
    agent.run(&mut conversation, "one").await.unwrap();
    agent.run(&mut conversation, "two").await.unwrap();
    assert_eq!(seen.lock().unwrap().len(), 3, "no call was rejected");
}
