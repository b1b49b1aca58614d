use agentix::{hook, model::ModelRequest, verdict::Trip};

/// A tripwire runs beside the model call, whose request is already sent: it cannot edit it.
#[hook(tripwire)]
async fn strip_secrets(request: &mut ModelRequest) -> Trip {
    request.messages.clear();
    Trip::Pass
}

fn main() {}
