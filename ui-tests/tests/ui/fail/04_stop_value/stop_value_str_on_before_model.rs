use agentix::event::BeforeModel;
use agentix::{Verdict, hook, model::ModelRequest};

#[hook(before_model)]
async fn cache(_request: &ModelRequest) -> Verdict<BeforeModel> {
    Verdict::stop("cached answer")
}

fn main() {}
