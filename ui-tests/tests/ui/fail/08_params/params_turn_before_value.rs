//! A hook that takes the turn before the event's value: one error, at the turn.

use agentix::event::AfterModel;
use agentix::{AssistantMessage, Turn, Verdict, hook};

#[hook(after_model)]
async fn checked(turn: &mut Turn, message: &AssistantMessage) -> Verdict<AfterModel> {
    let _ = (turn, message);
    Verdict::Continue
}

fn main() {}
