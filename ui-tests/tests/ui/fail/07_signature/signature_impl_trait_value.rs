use agentix::hook;

#[hook(after_model)]
async fn check(_message: impl std::fmt::Debug) {}

fn main() {}
