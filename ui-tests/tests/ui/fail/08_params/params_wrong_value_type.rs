use agentix::{ToolCall, hook};

#[hook(after_model)]
async fn check(_call: &ToolCall) {}

fn main() {}
