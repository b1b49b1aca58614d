use std::rc::Rc;

use agentix::{AssistantMessage, hook};

async fn audit(_text: &str) {}

#[hook(after_model)]
async fn log_answer(message: &AssistantMessage) {
    let text: Rc<str> = Rc::from(message.joined_text().as_ref());
    audit(&text).await;
}

fn main() {}
