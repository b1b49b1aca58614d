use agentix::{AssistantMessage, hook};

#[hook(after_model, parallel)]
async fn score(_message: &AssistantMessage) {}

fn main() {}
