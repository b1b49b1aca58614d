//! The core types serialize with serde and read back equal.

use std::sync::{Arc, Mutex};

use agentix::event::{EventKind, EventSet, Pre};
use agentix::{
    AssistantMessage, Entry, Hook, Message, Part, ToolCall, ToolResult, Turn, Verdict,
    conversation::TurnRef,
    message::{Role, ToolFailure},
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::json;

fn round_trip<T: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug>(
    value: &T,
) -> serde_json::Value {
    let json = serde_json::to_value(value).unwrap();
    let back: T = serde_json::from_value(json.clone()).unwrap();
    assert_eq!(&back, value);
    json
}

#[test]
fn messages_parts_calls_and_results_round_trip() {
    let call = ToolCall::new("call_1", "get_weather", json!({ "city": "Oslo" }));
    let ok = ToolResult::success(&call, "sunny");
    let failed =
        ToolResult::failure(&call, ToolFailure::UnknownTool { available: vec!["a".into()] });
    let assistant = AssistantMessage::text("checking").with_tool_call(call.clone());

    assert_eq!(round_trip(&Role::Assistant), json!("assistant"));
    assert_eq!(round_trip(&Part::text("hi")), json!({ "text": "hi" }));
    assert_eq!(
        round_trip(&call),
        json!({ "id": "call_1", "name": "get_weather", "arguments": { "city": "Oslo" } })
    );
    assert_eq!(
        round_trip(&ok),
        json!({ "call_id": "call_1", "name": "get_weather", "output": "sunny" }),
        "a success carries no error field"
    );
    assert_eq!(round_trip(&failed)["error"], json!({ "kind": "unknown_tool", "available": ["a"] }));
    round_trip(&assistant);
    round_trip(&Message::user("hello"));
    round_trip(&Entry::Halted {
        turn: TurnRef(3),
        event: EventKind::BeforeTool,
        hook: "guard".into(),
        reason: "no".into(),
    });
}

/// Serializes the turn it sees, then injects, to show both.
struct Snapshot(Arc<Mutex<Option<serde_json::Value>>>);

#[agentix::hook]
impl Hook for Snapshot {
    const EVENTS: EventSet = EventSet::of(EventKind::Pre);

    async fn pre(&self, turn: &mut Turn) -> Verdict<Pre> {
        turn.inject("context");
        *self.0.lock().unwrap() = Some(serde_json::to_value(&*turn).unwrap());
        Verdict::Continue
    }
}

#[tokio::test]
async fn a_turn_in_flight_serializes_and_reads_back() {
    let seen = Arc::new(Mutex::new(None));
    let agent = agentix::Agent::builder(agentix::ScriptedModel::new().text("ok"))
        .hook(Snapshot(seen.clone()))
        .build();
    agent.run(&mut agentix::Conversation::new(), "hi").await.unwrap();
    let json = seen.lock().unwrap().take().unwrap();
    let turn: Turn = serde_json::from_value(json.clone()).unwrap();
    assert_eq!(turn.turn_ref(), TurnRef(1));
    assert_eq!(turn.user_message().text(), "hi");
    assert_eq!(turn.injections()[0].part, Part::text("context"));
    assert_eq!(turn.injections()[0].hook, "Snapshot");
    assert_eq!(serde_json::to_value(&turn).unwrap(), json);
}

/// Every model error and every tool failure reads back exactly as it was — durations to the
/// nanosecond included: a journal that records one replays the same error.
#[test]
fn model_errors_and_tool_failures_round_trip_exactly() {
    use agentix::model::ModelError;
    use std::time::Duration;
    let odd = Duration::new(3, 250_000_001);
    let errors = [
        ModelError::ScriptExhausted { call: 3 },
        ModelError::Transport("connection reset".into()),
        ModelError::Provider {
            provider: "openai".into(),
            status: 429,
            message: "slow down".into(),
            retry_after: Some(odd),
        },
        ModelError::Provider {
            provider: "anthropic".into(),
            status: 500,
            message: "oops".into(),
            retry_after: None,
        },
        ModelError::InvalidResponse { provider: "gemini".into(), message: "bad json".into() },
        ModelError::Refused { provider: "openai".into(), reason: "SAFETY".into() },
        ModelError::TimedOut { after: odd },
        ModelError::DuplicateCallId { id: "call_1".into() },
        ModelError::Aborted,
        ModelError::Other("something else".into()),
    ];
    for error in &errors {
        round_trip(error);
    }
    assert_eq!(round_trip(&ModelError::Aborted), json!("aborted"));
    assert_eq!(round_trip(&ModelError::Transport("reset".into())), json!({ "transport": "reset" }));

    let failures = [
        ToolFailure::UnknownTool { available: vec!["a".into()] },
        ToolFailure::InvalidArguments { message: "missing city".into() },
        ToolFailure::Failed { message: "down".into() },
        ToolFailure::Panicked { message: "boom".into() },
        ToolFailure::TimedOut { after: odd },
        ToolFailure::TimedOut { after: Duration::from_millis(1500) },
        ToolFailure::Rejected { by: "guard".into(), reason: "no".into() },
        ToolFailure::NotRun { reason: "halted".into() },
        ToolFailure::Interrupted { reason: "dropped".into() },
    ];
    for failure in &failures {
        round_trip(failure);
    }
    // Whole milliseconds stay a number, as logs written before read them; the rest is exact.
    assert_eq!(
        round_trip(&ToolFailure::TimedOut { after: Duration::from_millis(1500) }),
        json!({ "kind": "timed_out", "after_ms": 1500 })
    );
    assert_eq!(
        round_trip(&ToolFailure::TimedOut { after: odd }),
        json!({ "kind": "timed_out", "after_ms": "3250.000001" })
    );
    let config = agentix::Config { tool_timeout: Some(odd), ..agentix::Config::default() };
    round_trip(&config);
}

/// A tool's idempotency key, as a `wrap_tool` hook reads it.
#[derive(Clone, Default)]
struct Keys(Arc<Mutex<Vec<String>>>);

impl agentix::on::WrapTool for Keys {
    async fn wrap_tool(
        &self,
        call: &ToolCall,
        turn: &Turn,
        next: &impl agentix::tool::NextTool,
    ) -> ToolResult {
        self.0.lock().unwrap().push(turn.idempotency_key(call));
        next.call(call).await
    }
}

/// A conversation keeps its id through serde, and says which entries it gained since it was
/// read back: what a backend writes, and only those.
#[tokio::test]
async fn a_conversation_has_an_id_and_knows_its_unsaved_entries() {
    let model = agentix::ScriptedModel::new()
        .tool_call("get_weather", json!({ "city": "Oslo" }))
        .text("sunny")
        .text("still sunny");
    let keys = Keys::default();
    let agent =
        agentix::Agent::builder(&model).tool(tests::Weather::default()).hook(keys.clone()).build();
    let mut conversation = agentix::Conversation::new().with_id("chat-7");
    assert_eq!(conversation.id(), Some("chat-7"));
    agent.run(&mut conversation, "weather?").await.unwrap();
    assert_eq!(conversation.unsaved().len(), 4, "a new conversation's whole log");
    assert_eq!(*keys.0.lock().unwrap(), ["chat-7/1/call_1"]);

    let stored = serde_json::to_string(&conversation).unwrap();
    let mut revived: agentix::Conversation = serde_json::from_str(&stored).unwrap();
    assert_eq!(revived.id(), Some("chat-7"));
    assert!(revived.unsaved().is_empty(), "read back: nothing new");
    agent.run(&mut revived, "and now?").await.unwrap();
    assert_eq!(revived.unsaved().len(), 2, "the second turn's user message and answer");
    assert_eq!(revived.unsaved(), &revived.log()[4..]);
    revived.mark_saved();
    assert!(revived.unsaved().is_empty());
    let anonymous = agentix::Conversation::new();
    assert_eq!(anonymous.id(), None);
}

#[test]
fn a_task_written_with_turins_max_turns_reads_as_max_steps() {
    let task: agentix::session::Task =
        serde_json::from_value(json!({ "prompt": "Plan the trip.", "max_turns": 4 })).unwrap();
    assert_eq!(task.max_steps, Some(4));
    assert_eq!(serde_json::to_value(&task).unwrap()["max_steps"], json!(4));
    let status: agentix::session::TaskStatus = serde_json::from_value(json!("max_turns")).unwrap();
    assert_eq!(status, agentix::session::TaskStatus::MaxSteps);
    assert_eq!((round_trip(&status), status.to_string()), (json!("max_turns"), "max_turns".into()));
}
