use agentix::event::AfterTool;
use agentix::{AssistantMessage, ToolResult, Verdict, hook};

#[hook(after_tool)]
async fn done(_result: &ToolResult) -> Verdict<AfterTool> {
    Verdict::stop(AssistantMessage::text("that will do"))
}

fn main() {}
