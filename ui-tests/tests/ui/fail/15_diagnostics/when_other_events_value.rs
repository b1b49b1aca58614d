use agentix::{ToolCall, Turn, hook, AssistantMessage};

fn is_search(call: &ToolCall, _turn: &Turn) -> bool {
    call.name == "search"
}

#[hook(after_model, when = is_search)]
async fn check(_message: &AssistantMessage) {}

fn main() {}
