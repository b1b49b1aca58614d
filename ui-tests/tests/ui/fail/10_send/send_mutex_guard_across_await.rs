use std::sync::Mutex;

use agentix::{ToolCall, hook};

static SEEN: Mutex<Vec<String>> = Mutex::new(Vec::new());

async fn flush() {}

#[hook(before_tool)]
async fn remember(call: &ToolCall) {
    let mut seen = SEEN.lock().unwrap();
    seen.push(call.name.clone());
    flush().await;
    seen.clear();
}

fn main() {}
