use agentix::event::BeforeFinal;
use agentix::{AssistantMessage, Verdict, hook};

#[hook(before_final)]
async fn canned(_message: &AssistantMessage) -> Verdict<BeforeFinal> {
    Verdict::stop(String::from("a canned answer"))
}

fn main() {}
