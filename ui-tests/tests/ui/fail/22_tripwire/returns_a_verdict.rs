use agentix::event::BeforeModel;
use agentix::{Verdict, hook, model::ModelRequest};

/// A tripwire can only pass or trip: it has no verdicts.
#[hook(tripwire)]
async fn moderation(request: &ModelRequest) -> Verdict<BeforeModel> {
    let _ = request;
    Verdict::halt("no")
}

fn main() {}
