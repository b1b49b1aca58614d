use agentix::{Turn, hook};

#[hook(pre, name = greeting)]
async fn greet(_turn: &mut Turn) {}

fn main() {}
