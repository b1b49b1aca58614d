use agentix::{Turn, hook, model::ModelRequest, verdict::Trip};

/// A tripwire reads the turn: it cannot change it.
#[hook(tripwire)]
async fn moderation(request: &ModelRequest, turn: &mut Turn) -> Trip {
    let _ = (request, turn);
    Trip::Pass
}

fn main() {}
