use agentix::{Turn, hook, model::ModelRequest, verdict::Trip};

/// A tripwire cannot inject: the request it checks is already on its way.
#[hook(tripwire)]
async fn moderation(request: &ModelRequest, turn: &Turn) -> Trip {
    turn.inject("Be careful.");
    let _ = request;
    Trip::Pass
}

fn main() {}
