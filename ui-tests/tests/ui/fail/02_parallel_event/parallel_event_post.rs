use agentix::event::Post;
use agentix::{Outcome, Verdict, hook};

#[hook(post, parallel)]
async fn persist(_outcome: &Outcome) -> Verdict<Post> {
    Verdict::Continue
}

fn main() {}
