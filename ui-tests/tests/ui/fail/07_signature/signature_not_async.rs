use agentix::event::AfterModel;
use agentix::{AssistantMessage, Verdict, hook};

#[hook(after_model)]
fn require_plan(_message: &AssistantMessage) -> Verdict<AfterModel> {
    Verdict::Continue
}

fn main() {}
