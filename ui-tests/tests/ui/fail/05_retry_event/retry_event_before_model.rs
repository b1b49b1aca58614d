use agentix::event::BeforeModel;
use agentix::{Verdict, hook, model::ModelRequest};

#[hook(before_model)]
async fn again(_request: &ModelRequest) -> Verdict<BeforeModel> {
    Verdict::retry("not yet")
}

fn main() {}
