use agentix::{Turn, hook};

#[hook(pre, parallel)]
async fn warm_cache(_turn: &Turn) {}

fn main() {}
