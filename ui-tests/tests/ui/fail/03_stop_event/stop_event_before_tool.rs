use agentix::event::BeforeTool;
use agentix::{AssistantMessage, ToolCall, Verdict, hook};

#[hook(before_tool)]
async fn answer_instead(call: &ToolCall) -> Verdict<BeforeTool> {
    Verdict::stop(AssistantMessage::text(format!("not calling {}", call.name)))
}

fn main() {}
