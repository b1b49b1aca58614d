use agentix::{AssistantMessage, hook};

#[hook(before_final, durable)]
async fn keep(_message: &AssistantMessage) {}

fn main() {}
