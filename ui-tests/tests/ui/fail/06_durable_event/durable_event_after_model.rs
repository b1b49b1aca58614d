use agentix::{AssistantMessage, hook};

#[hook(after_model, durable)]
async fn remember(_message: &AssistantMessage) {}

fn main() {}
