//! Rule 10: hooks whose futures are `Send`: shared state in an `Arc`, guards dropped before any
//! `.await`.

use std::sync::{Arc, Mutex};

use agentix::{AssistantMessage, ToolCall, hook};

static SEEN: Mutex<Vec<String>> = Mutex::new(Vec::new());

async fn flush() {}

#[hook(before_tool)]
async fn remember(call: &ToolCall) {
    SEEN.lock().unwrap().push(call.name.clone());
    flush().await;
}

#[hook(after_model)]
async fn share(message: &AssistantMessage) {
    let text: Arc<str> = Arc::from(message.joined_text().as_ref());
    flush().await;
    assert!(!text.is_empty() || text.is_empty());
}

fn main() {
    fn assert_send<T: Send>(_: T) {}
    let call = ToolCall::new("1", "x", serde_json::json!({}));
    assert_send(remember::call(&call));
    let message = AssistantMessage::text("hi");
    assert_send(share::call(&message));
}
