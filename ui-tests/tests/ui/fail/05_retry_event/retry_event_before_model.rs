use agentix::event::BeforeModel;
use agentix::{ModelRequest, Verdict, hook};

#[hook(before_model)]
async fn again(_request: &ModelRequest) -> Verdict<BeforeModel> {
    Verdict::retry("not yet")
}

fn main() {}
