#![allow(missing_docs)] // criterion_group! generates an undocumented `pub fn`.

//! What the store costs: committing one turn's step (a question and its answer, two entries)
//! to a conversation that already holds 10, 1,000 or 100,000 entries, and loading a
//! conversation of that many, over SQLite (a file) and PostgreSQL (on 127.0.0.1). A commit
//! appends: its cost should not grow with the log.
//!
//! PostgreSQL is the one `scripts/test` started (`AGENTIX_POSTGRES_URL`), or one this process
//! starts from the machine's `initdb`, as the tests do. The benchmark needs the
//! `postgres-tests` feature: `cargo bench -p agentix-store --features postgres-tests`.

use agentix_test_support as support;

use std::time::{Duration, Instant};

use agentix::{
    Agent, AssistantMessage, Config, Conversation, Entry, Message, Model,
    conversation::TurnRef,
    model::{ModelError, ModelRequest, ModelResponse},
    scope::Scope,
};
use criterion::{BenchmarkId, Criterion, criterion_group};

const SIZES: [u64; 3] = [10, 1_000, 100_000];

/// A conversation of `entries` entries: turns of a question and an answer.
fn conversation(entries: u64) -> Conversation {
    let mut log = Vec::with_capacity(entries as usize);
    for turn in 1..=entries / 2 {
        let turn = TurnRef(turn);
        log.push(Entry::User {
            turn,
            message: Message::user(format!("Question {turn}?")),
            task: None,
        });
        let answer =
            AssistantMessage::text(format!("The answer to question {turn}, in a sentence."));
        log.push(Entry::Assistant { turn, message: answer });
    }
    Conversation::from_parts(Config::default(), log, entries / 2, Scope::new()).unwrap()
}

/// A model that answers at once, the same every time.
struct Echo;

impl Model for Echo {
    async fn complete(&self, _: &ModelRequest) -> Result<ModelResponse, ModelError> {
        Ok(AssistantMessage::text("One more answer.").into())
    }
}

fn store_bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let mut group = c.benchmark_group("store");
    group.sample_size(20).measurement_time(Duration::from_secs(3));
    for backend in ["sqlite", "postgres"] {
        for size in SIZES {
            let name = format!("{backend}_{size}");
            let (store, _dir) = runtime.block_on(async {
                match backend {
                    "sqlite" => {
                        let (store, _, dir) = support::sqlite(&name).await;
                        (store, Some(dir))
                    }
                    _ => (support::postgres(&name).await.0, None),
                }
            });
            let base = conversation(size);
            runtime.block_on(store.create("loaded", &base)).unwrap();
            runtime.block_on(store.create("grown", &base)).unwrap();
            let mut version = runtime.block_on(store.load("grown")).unwrap().version;
            let mut current = base;
            let agent = Agent::builder(Echo).build();

            // Each sample commits a new turn's two entries; running the turn is not timed.
            group.bench_function(BenchmarkId::new(format!("{backend}/commit"), size), |b| {
                b.iter_custom(|iterations| {
                    let mut spent = Duration::ZERO;
                    for _ in 0..iterations {
                        let from = current.log().len();
                        runtime.block_on(agent.run(&mut current, "And one more?")).unwrap();
                        let start = Instant::now();
                        let committed = store.commit("grown", version, &current, from);
                        version = runtime.block_on(committed).unwrap();
                        spent += start.elapsed();
                    }
                    spent
                });
            });
            // The conversation loaded holds `size` entries, whatever the commits added to the
            // other.
            group.bench_function(BenchmarkId::new(format!("{backend}/load"), size), |b| {
                b.iter(|| runtime.block_on(store.load("loaded")).unwrap());
            });
            runtime.block_on(store.close());
        }
    }
    group.finish();
}

criterion_group!(benches, store_bench);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
