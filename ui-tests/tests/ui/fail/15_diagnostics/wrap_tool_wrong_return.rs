use agentix::{NextTool, ToolCall, Turn, hook};

#[hook(wrap_tool)]
async fn retry(call: &ToolCall, _turn: &Turn, next: &impl NextTool) -> Option<String> {
    let result = next.call(call).await;
    Some(result.output)
}

fn main() {}
