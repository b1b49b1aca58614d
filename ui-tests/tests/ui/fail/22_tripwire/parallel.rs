use agentix::{hook, model::ModelRequest, verdict::Trip};

/// Tripwires already run beside the call and each other: `parallel` is `pre`'s.
#[hook(tripwire, parallel)]
async fn moderation(request: &ModelRequest) -> Trip {
    let _ = request;
    Trip::Pass
}

fn main() {}
