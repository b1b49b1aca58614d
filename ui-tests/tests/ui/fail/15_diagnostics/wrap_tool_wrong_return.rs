use agentix::{ToolCall, Turn, hook, tool::NextTool};

#[hook(wrap_tool)]
async fn retry(call: &ToolCall, _turn: &Turn, next: &impl NextTool) -> Option<String> {
    let result = next.call(call).await;
    Some(result.output)
}

fn main() {}
