use agentix::event::AfterModel;
use agentix::{AssistantMessage, Verdict, hook};

#[hook(after_model, on_error = skip)]
async fn moderate(_message: &AssistantMessage) -> Verdict<AfterModel> {
    Verdict::Continue
}

fn main() {}
