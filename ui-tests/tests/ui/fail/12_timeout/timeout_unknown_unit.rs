use agentix::{Turn, hook};

#[hook(pre, parallel, timeout = "2 secs")]
async fn retrieve(_turn: &Turn) -> String {
    "documents".into()
}

fn main() {}
