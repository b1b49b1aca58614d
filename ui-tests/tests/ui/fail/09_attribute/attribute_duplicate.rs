use agentix::{Turn, hook};

#[hook(pre, parallel, parallel)]
async fn retrieve(_turn: &Turn) -> String {
    String::new()
}

fn main() {}
