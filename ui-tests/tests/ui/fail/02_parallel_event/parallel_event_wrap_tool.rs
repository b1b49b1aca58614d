use agentix::{ToolCall, ToolResult, hook, tool::NextTool};

#[hook(wrap_tool, parallel)]
async fn time_it(call: &ToolCall, next: &impl NextTool) -> ToolResult {
    next.call(call).await
}

fn main() {}
