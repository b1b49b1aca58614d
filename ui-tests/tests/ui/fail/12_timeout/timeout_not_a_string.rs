use agentix::{Outcome, hook};

#[hook(post, timeout = 2)]
async fn meter(_outcome: &Outcome) {}

fn main() {}
