use agentix::event::AfterModel;
use agentix::{AssistantMessage, ToolCall, Verdict, hook};

#[hook(after_model)]
async fn force_tool(_message: &AssistantMessage) -> Verdict<AfterModel> {
    Verdict::stop(ToolCall::new("1", "search", Default::default()))
}

fn main() {}
