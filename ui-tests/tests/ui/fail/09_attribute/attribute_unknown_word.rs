use agentix::{AssistantMessage, hook};

#[hook(after_model, retryable)]
async fn check(_message: &AssistantMessage) {}

fn main() {}
