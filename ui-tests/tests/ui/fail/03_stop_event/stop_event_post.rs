use agentix::event::Post;
use agentix::{AssistantMessage, Outcome, Verdict, hook};

#[hook(post)]
async fn replace(_outcome: &Outcome) -> Verdict<Post> {
    Verdict::stop(AssistantMessage::text("too late to change the answer"))
}

fn main() {}
