use agentix::{Turn, hook};

#[hook(pre, parallel, on_error = ignore)]
async fn retrieve(_turn: &Turn) -> String {
    "documents".into()
}

fn main() {}
