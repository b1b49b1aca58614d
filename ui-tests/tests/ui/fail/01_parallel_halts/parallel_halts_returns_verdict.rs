use agentix::event::Pre;
use agentix::{Turn, Verdict, hook};

#[hook(pre, parallel)]
async fn retrieve(turn: &Turn) -> Verdict<Pre> {
    if turn.user_message().text().is_empty() {
        return Verdict::halt("nothing to retrieve for");
    }
    Verdict::Continue
}

fn main() {}
