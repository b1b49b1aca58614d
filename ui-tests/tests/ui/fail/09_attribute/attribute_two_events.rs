use agentix::{Turn, hook};

#[hook(pre, post)]
async fn bracket(_turn: &mut Turn) {}

fn main() {}
