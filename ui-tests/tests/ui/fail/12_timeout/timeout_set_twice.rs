use agentix::{Outcome, hook};

#[hook(post, timeout = "1s", timeout_ms = 1000)]
async fn meter(_outcome: &Outcome) {}

fn main() {}
