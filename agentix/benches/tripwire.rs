#![allow(missing_docs)] // criterion_group! generates an undocumented `pub fn`.

//! A tripwire beside the model call: a check that takes 50 ms against a model call that takes
//! 500 ms. Tripping, the turn should end at the check's 50 ms, the call cancelled; passing, at
//! the call's 500 ms, the check adding nothing. After criterion's report, each one's median
//! turn.

#[path = "support/median.rs"]
mod support;

use std::hint::black_box;
use std::time::Duration;

use agentix::{
    Agent, AssistantMessage, Conversation, Model, Turn,
    model::{ModelError, ModelRequest, ModelResponse},
    verdict::Trip,
};
use criterion::{Criterion, criterion_group};
use support::{RunTurn, median};
use tokio::runtime::Runtime;

const CALL: Duration = Duration::from_millis(500);
const CHECK: Duration = Duration::from_millis(50);

/// A model that takes [`CALL`] to answer.
struct Slow;

impl Model for Slow {
    async fn complete(&self, _: &ModelRequest) -> Result<ModelResponse, ModelError> {
        tokio::time::sleep(CALL).await;
        Ok(AssistantMessage::text("An answer.").into())
    }
}

/// A check that takes [`CHECK`], then trips or passes.
struct Check {
    trips: bool,
}

impl agentix::on::Tripwire for Check {
    async fn tripwire(&self, _: &ModelRequest, _: &Turn) -> Trip {
        tokio::time::sleep(CHECK).await;
        if self.trips { Trip::trip("flagged") } else { Trip::Pass }
    }
}

fn turn(trips: bool) -> RunTurn {
    let agent = Agent::builder(Slow).hook(Check { trips }).build();
    Box::new(move |runtime: &Runtime| {
        let mut conversation = Conversation::new();
        let outcome = runtime.block_on(agent.run(&mut conversation, "Check me"));
        assert_eq!(outcome.is_err(), trips);
        black_box(outcome).ok();
    })
}

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_current_thread().enable_time().build().expect("a runtime")
}

fn tripwire(c: &mut Criterion) {
    let runtime = runtime();
    let mut group = c.benchmark_group("tripwire_50ms_beside_a_500ms_call");
    group.sample_size(10);
    for (name, trips) in [("trips", true), ("passes", false)] {
        let run = turn(trips);
        group.bench_function(name, |bencher| bencher.iter(|| run(&runtime)));
    }
    group.finish();
}

criterion_group!(benches, tripwire);

fn main() {
    benches();
    criterion::Criterion::default().configure_from_args().final_summary();
    if std::env::args().any(|arg| arg == "--bench") {
        let runtime = runtime();
        println!("\n  a 50 ms tripwire beside a 500 ms call   median turn");
        for (name, trips) in [("trips", true), ("passes", false)] {
            let median = median(&turn(trips), &runtime, 7);
            println!("  {name:<38} {:>8.1}ms", median.as_secs_f64() * 1e3);
        }
    }
}
