use agentix::{Part, Turn, hook};

#[hook(pre, parallel)]
async fn retrieve(turn: &mut Turn) -> Vec<Part> {
    turn.inject("parallel hooks cannot do this");
    Vec::new()
}

fn main() {}
