use agentix::{hook, model::ModelRequest, verdict::Trip};

/// A tripwire produces nothing for the log.
#[hook(tripwire, durable)]
async fn moderation(request: &ModelRequest) -> Trip {
    let _ = request;
    Trip::Pass
}

fn main() {}
