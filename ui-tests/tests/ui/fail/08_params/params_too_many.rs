use agentix::{AssistantMessage, Turn, hook};

#[hook(after_model)]
async fn check(_message: &AssistantMessage, _turn: &Turn, _extra: u32) {}

fn main() {}
