use agentix::{Part, Turn, hook};

#[hook(pre, parallel)]
async fn retrieve(turn: &Turn) -> Vec<Part> {
    turn.inject(Part::Text("notes".to_owned()));
    Vec::new()
}

fn main() {}
