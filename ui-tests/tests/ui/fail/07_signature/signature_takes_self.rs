use agentix::{AssistantMessage, hook};

struct Checker;

impl Checker {
    #[hook(after_model)]
    async fn check(&self, _message: &AssistantMessage) {}
}

fn main() {}
