use agentix::{Outcome, hook};

#[hook(post)]
async fn rewrite(outcome: &Outcome) -> Outcome {
    outcome.clone()
}

fn main() {}
