use agentix::event::Pre;
use agentix::{Turn, Verdict, hook};

#[hook(pre)]
async fn again(_turn: &mut Turn) -> Verdict<Pre> {
    Verdict::retry_silently()
}

fn main() {}
