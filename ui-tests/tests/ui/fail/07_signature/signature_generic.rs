use agentix::{AssistantMessage, hook};

#[hook(after_model)]
async fn check<T: Default>(_message: &AssistantMessage) {
    let _ = T::default();
}

fn main() {}
