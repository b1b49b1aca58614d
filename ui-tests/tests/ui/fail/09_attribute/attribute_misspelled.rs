use agentix::{Part, Turn, hook};

#[hook(pre, paralel)]
async fn retrieve(_turn: &Turn) -> Part {
    Part::Text("notes".to_owned())
}

fn main() {}
