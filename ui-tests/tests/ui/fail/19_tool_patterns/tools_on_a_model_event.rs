//! `tools = "..."` names tool calls: a hook on the model's answer has none.

use agentix::{AssistantMessage, hook};

#[hook(after_model, tools = "github__*")]
async fn github_answers(_message: &AssistantMessage) {}

fn main() {}
