#![allow(missing_docs)] // criterion_group! generates an undocumented `pub fn`.

//! A parallel `pre` group: k = 1, 2, 4 and 8 hooks, each awaiting a timer as a retrieval would
//! await the network. The slowest waits `SLOWEST`, the others less (hook `i` of `k` waits
//! `SLOWEST * (i + 1) / k`), so the turn should take as long as the slowest hook alone, not the
//! sum of the waits. After criterion's report, the bench prints each k's latency against the
//! slowest hook alone (the turn with k = 1) and against the sum.

#[path = "support/median.rs"]
mod support;

use std::hint::black_box;
use std::time::Duration;

use agentix::{
    Agent, AssistantMessage, Conversation, Model, Part, Turn,
    model::{ModelError, ModelRequest, ModelResponse},
    on,
};
use criterion::{Criterion, criterion_group};
use support::{RunTurn, median};
use tokio::runtime::Runtime;

/// What the slowest hook of every group waits.
const SLOWEST: Duration = Duration::from_millis(20);

const GROUP_SIZES: [u32; 4] = [1, 2, 4, 8];

/// A parallel `pre` hook standing in for a retrieval: it waits, then returns a document.
struct Retrieval(Duration);

impl on::ParallelPre for Retrieval {
    fn name(&self) -> &'static str {
        "retrieval"
    }

    async fn pre(&self, _turn: &Turn) -> Vec<Part> {
        tokio::time::sleep(self.0).await;
        vec![Part::text("a retrieved document")]
    }
}

/// Answers every request with the same text.
struct Answer;

impl Model for Answer {
    async fn complete(&self, _request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        Ok(AssistantMessage::text("ok").into())
    }
}

/// Hook `i` of `k` waits `SLOWEST * (i + 1) / k`.
fn retrieval(i: u32, k: u32) -> Retrieval {
    Retrieval(SLOWEST * (i + 1) / k)
}

/// One turn of an agent whose `pre` event is a parallel group of `k` retrievals.
fn group_of(k: u32) -> RunTurn {
    macro_rules! turn_with {
        ($($i:literal)*) => {{
            let agent = Agent::builder(Answer)$(.hook(retrieval($i, k)))*.build();
            Box::new(move |runtime: &Runtime| {
                let mut conversation = Conversation::new();
                let outcome = runtime.block_on(agent.run(&mut conversation, "What do we know?"));
                black_box(outcome.expect("the turn completes"));
            })
        }};
    }
    match k {
        1 => turn_with!(0),
        2 => turn_with!(0 1),
        4 => turn_with!(0 1 2 3),
        _ => turn_with!(0 1 2 3 4 5 6 7),
    }
}

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_current_thread().enable_time().build().expect("a runtime")
}

fn parallel(c: &mut Criterion) {
    let runtime = runtime();
    let mut group = c.benchmark_group("parallel_pre");
    group.sample_size(20);
    for k in GROUP_SIZES {
        let run = group_of(k);
        group.bench_function(format!("{k}_hooks"), |bencher| bencher.iter(|| run(&runtime)));
    }
    group.finish();
}

/// Prints each group's latency against the slowest hook alone and against the sum of the waits.
fn latencies() {
    let runtime = runtime();
    let alone = median(&group_of(1), &runtime, 31);
    println!("\n    k   latency   slowest alone   latency/slowest   sum of waits");
    for k in GROUP_SIZES {
        let latency = median(&group_of(k), &runtime, 31);
        let sum: Duration = (0..k).map(|i| retrieval(i, k).0).sum();
        println!(
            "{k:>5}  {:>7.2}ms  {:>12.2}ms  {:>16.3}  {:>11.2}ms",
            latency.as_secs_f64() * 1e3,
            alone.as_secs_f64() * 1e3,
            latency.as_secs_f64() / alone.as_secs_f64(),
            sum.as_secs_f64() * 1e3,
        );
    }
}

criterion_group!(benches, parallel);

fn main() {
    benches();
    criterion::Criterion::default().configure_from_args().final_summary();
    // Under `cargo test --benches` criterion runs each benchmark once; the table is for
    // `cargo bench`.
    if std::env::args().any(|arg| arg == "--bench") {
        latencies();
    }
}
