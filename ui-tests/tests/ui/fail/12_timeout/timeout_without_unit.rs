use agentix::{ToolCall, hook};

#[hook(before_tool, timeout = "500")]
async fn check(_call: &ToolCall) {}

fn main() {}
