use agentix::{AssistantMessage, hook};

#[hook(after_llm_call)]
async fn check(_message: &AssistantMessage) {}

fn main() {}
