use agentix::{Outcome, hook};

#[hook(post, timeout_ms = 0)]
async fn meter(_outcome: &Outcome) {}

fn main() {}
