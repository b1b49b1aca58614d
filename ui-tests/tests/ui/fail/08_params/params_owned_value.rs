use agentix::{AssistantMessage, hook};

#[hook(after_model)]
async fn check(_message: AssistantMessage) {}

fn main() {}
