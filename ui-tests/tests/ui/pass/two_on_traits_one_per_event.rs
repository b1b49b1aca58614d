//! A type that implements two `on::` traits is registered once per event, naming the event.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use agentix::event::{Post, Pre};
use agentix::prelude::*;
use agentix::{Outcome, on};

/// Counts turns in `pre` and finished turns in `post`.
#[derive(Clone, Default)]
struct Counter(Arc<(AtomicUsize, AtomicUsize)>);

impl on::Pre for Counter {
    async fn pre(&self, _turn: &mut Turn) -> Verdict<Pre> {
        self.0.0.fetch_add(1, Ordering::Relaxed);
        Verdict::Continue
    }
}

impl on::Post for Counter {
    async fn post(&self, _outcome: &Outcome, _turn: &mut Turn) -> Verdict<Post> {
        self.0.1.fetch_add(1, Ordering::Relaxed);
        Verdict::Continue
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let counter = Counter::default();
    let agent = Agent::builder(ScriptedModel::new().text("one").text("two"))
        .hook::<_, Pre, _>(counter.clone())
        .hook::<_, Post, _>(counter.clone())
        .build();
    let mut conversation = Conversation::new();
    agent.run(&mut conversation, "first").await.unwrap();
    agent.run(&mut conversation, "second").await.unwrap();
    assert_eq!(counter.0.0.load(Ordering::Relaxed), 2);
    assert_eq!(counter.0.1.load(Ordering::Relaxed), 2);
}
