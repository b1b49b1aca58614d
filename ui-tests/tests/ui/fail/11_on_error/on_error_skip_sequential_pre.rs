use agentix::{Turn, hook};

#[hook(pre, on_error = skip)]
async fn load_profile(turn: &mut Turn) {
    turn.inject("profile");
}

fn main() {}
