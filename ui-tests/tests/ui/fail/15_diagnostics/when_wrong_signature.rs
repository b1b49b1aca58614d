use agentix::{AssistantMessage, Turn, hook};

fn has_plan(message: &AssistantMessage) -> bool {
    message.joined_text().contains("Plan")
}

#[hook(after_model, when = has_plan)]
async fn check(_message: &AssistantMessage, _turn: &Turn) {}

fn main() {}
