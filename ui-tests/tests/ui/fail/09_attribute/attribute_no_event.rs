use agentix::{Turn, hook};

#[hook(durable)]
async fn remember(_turn: &mut Turn) {}

fn main() {}
