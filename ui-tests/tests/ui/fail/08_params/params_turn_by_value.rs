use agentix::{AssistantMessage, Turn, hook};

#[hook(after_model)]
async fn check(_message: &AssistantMessage, _turn: Turn) {}

fn main() {}
