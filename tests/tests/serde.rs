//! The core types serialize with serde and read back equal.

use std::sync::{Arc, Mutex};

use agentix::event::{EventKind, EventSet, Pre};
use agentix::{
    AssistantMessage, Entry, Hook, Message, Part, Role, ToolCall, ToolFailure, ToolResult, Turn,
    TurnRef, Verdict,
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
