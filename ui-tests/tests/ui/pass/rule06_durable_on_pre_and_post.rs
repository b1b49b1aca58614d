//! Rule 6: `durable` on the events whose output can join the log.

use agentix::{Outcome, Part, Turn, hook};

#[hook(pre, durable)]
async fn remember(turn: &mut Turn) {
    turn.inject("the user said hello before");
}

#[hook(pre, parallel, durable)]
async fn recall(_turn: &Turn) -> Part {
    Part::text("a memory")
}

#[hook(post, durable)]
async fn summarize(_outcome: &Outcome) {}

fn main() {
    use agentix::on::{ParallelPre, Post, Pre};
    assert!(<remember as Pre>::DURABLE);
    assert!(<recall as ParallelPre>::DURABLE);
    assert!(<summarize as Post>::DURABLE);
}
