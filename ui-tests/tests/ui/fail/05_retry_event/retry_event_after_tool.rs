use agentix::event::AfterTool;
use agentix::{ToolResult, Verdict, hook};

#[hook(after_tool)]
async fn again(result: &ToolResult) -> Verdict<AfterTool> {
    if result.output.is_empty() { Verdict::retry("the tool said nothing") } else { Verdict::Continue }
}

fn main() {}
