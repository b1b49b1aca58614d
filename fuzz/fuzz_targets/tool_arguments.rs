//! Arbitrary arguments for a typed tool, as a model might send them, through a whole turn: the
//! call either runs with arguments that decoded, or fails as invalid arguments (or an unknown
//! tool) — never a panic — and the log stays valid.

#![no_main]

use agentix::{Agent, Conversation, Entry, ScriptedModel, Tool, ToolCall, Turn, message::ToolFailure};
use libfuzzer_sys::fuzz_target;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Booking {
    city: String,
    nights: u8,
    guests: Option<Vec<String>>,
    breakfast: bool,
}

struct Book;

impl Tool for Book {
    const NAME: &'static str = "book";
    type Args = Booking;
    type Output = String;
    type Error = std::convert::Infallible;

    fn description(&self) -> &str {
        "Books a room."
    }

    async fn call(&self, args: Booking, _turn: &Turn) -> Result<String, Self::Error> {
        Ok(format!("booked {} nights in {}", args.nights, args.city))
    }
}

fuzz_target!(|data: &[u8]| {
    // The model's arguments: JSON if the bytes are, else the bytes as a JSON string.
    let arguments = serde_json::from_slice(data)
        .unwrap_or_else(|_| serde_json::Value::String(String::from_utf8_lossy(data).into_owned()));
    let name = if data.first().is_some_and(|byte| byte % 7 == 0) { "bok" } else { "book" };
    let answer = agentix::AssistantMessage::default()
        .with_tool_call(ToolCall::new("call_1", name, arguments));
    let model = ScriptedModel::new().message(answer).text("done");
    let agent = Agent::builder(model).tool(Book).build();
    let mut conversation = Conversation::new();
    let reply = futures::executor::block_on(agent.run(&mut conversation, "book it"));
    assert_eq!(reply.expect("the turn ends well").joined_text(), "done");
    conversation.validate().expect("the log is valid");
    let Some(Entry::ToolResults { results, .. }) = conversation.log().get(2) else {
        panic!("the call is answered: {:?}", conversation.log());
    };
    match &results[0].error {
        None => assert!(results[0].output.starts_with("booked ")),
        Some(ToolFailure::InvalidArguments { .. }) => assert_eq!(name, "book"),
        Some(ToolFailure::UnknownTool { .. }) => assert_eq!(name, "bok"),
        Some(other) => panic!("unexpected failure: {other:?}"),
    }
});
