use agentix::{Part, Turn, hook};

#[hook(pre, parallel)]
async fn retrieve(_turn: &Turn) -> Result<Vec<Part>, String> {
    Err("the index is down".to_owned())
}

fn main() {}
