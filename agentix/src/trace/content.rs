//! Content as the conventions write it on a span (only when captured): messages as
//! `[{"role", "parts": [{"type": "text" | "tool_call" | "tool_call_response", …}]}]`, the
//! system prompt as `[{"type": "text", "content"}]`, tools as `[{"type": "function", …}]`.

use serde_json::{Value, json};

use crate::message::{AssistantMessage, Message, Part, Role};
use crate::tool::spec::ToolSpec;

fn part(part: &Part) -> Value {
    match part {
        Part::Text(text) => json!({ "type": "text", "content": text }),
        Part::ToolCall(call) => json!({
            "type": "tool_call",
            "id": call.id,
            "name": call.name,
            "arguments": call.arguments,
        }),
        Part::ToolResult(result) => json!({
            "type": "tool_call_response",
            "id": result.call_id,
            "result": result.output,
        }),
    }
}

fn role(role: Role) -> &'static str {
    match role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    }
}

/// The messages a request sends.
pub(super) fn messages(messages: &[Message]) -> String {
    let messages: Vec<Value> = messages
        .iter()
        .map(|message| {
            let parts: Vec<Value> = message.content.iter().map(part).collect();
            json!({ "role": role(message.role), "parts": parts })
        })
        .collect();
    Value::Array(messages).to_string()
}

/// The model's answer, as the one output message; `finish_reason` as the loop reads it.
pub(super) fn answer(message: &AssistantMessage) -> String {
    let parts: Vec<Value> = message.content.iter().map(part).collect();
    let finish = if message.calls_tools() { "tool_call" } else { "stop" };
    json!([{ "role": "assistant", "parts": parts, "finish_reason": finish }]).to_string()
}

/// The system prompt.
pub(super) fn system(system: &str) -> String {
    json!([{ "type": "text", "content": system }]).to_string()
}

/// The tools a request offers.
pub(super) fn tools(tools: &[ToolSpec]) -> String {
    let tools: Vec<Value> = tools
        .iter()
        .map(|tool| {
            json!({
                "type": "function",
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.parameters,
            })
        })
        .collect();
    Value::Array(tools).to_string()
}
