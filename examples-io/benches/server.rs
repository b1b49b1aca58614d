#![allow(missing_docs)] // criterion_group! generates an undocumented `pub fn`.

//! Turns per second through the HTTP server (`examples_io::server`, axum on 127.0.0.1, a reqwest
//! client) against the same agent driven directly, each turn a task spawned on the same
//! two-worker tokio runtime, at 1, 50 and 500 conversations at once. A turn is a model call
//! asking for `get_weather`, the tool, and a model call answering (the demo model, no latency:
//! what is measured is the framework and the transport, not a model).
//!
//! The client runs on the server's runtime and cores: "through the server" includes the cost
//! of making and reading the requests, as a load test on one machine does. Creating the
//! conversations is not timed. Run with `cargo bench -p examples-io --bench server`; criterion
//! reports each figure as elements (turns) per second.

use std::sync::Arc;
use std::time::{Duration, Instant};

use agentix::pipeline::Pipeline;
use agentix::{Agent, Conversation, ToolSet};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use examples::weather::GetWeather;
use examples_io::server::{DemoModel, router};
use futures::future::join_all;
use serde_json::{Value, json};
use tokio::runtime::Runtime;

const CONCURRENT: [usize; 3] = [1, 50, 500];

fn agent() -> Agent<DemoModel, impl ToolSet, impl Pipeline> {
    Agent::builder(DemoModel::default()).tool(GetWeather).build()
}

const ANSWER: &str = "Here is the weather: Oslo: clear sky, 21.";

/// `n` turns at once on fresh conversations, run directly; the time they took.
async fn direct(
    agent: &Arc<Agent<DemoModel, impl ToolSet + 'static, impl Pipeline + 'static>>,
    n: usize,
) -> Duration {
    let conversations: Vec<Conversation> = (0..n).map(|_| Conversation::new()).collect();
    let start = Instant::now();
    let turns = conversations.into_iter().map(|mut conversation| {
        let agent = Arc::clone(agent);
        tokio::spawn(async move {
            let reply = agent.run(&mut conversation, "Oslo").await.unwrap();
            assert_eq!(reply.joined_text(), ANSWER);
        })
    });
    for turn in join_all(turns).await {
        turn.unwrap();
    }
    start.elapsed()
}

/// `n` turns at once on fresh conversations, through the server at `base`; the time they took.
async fn through_http(client: &reqwest::Client, base: &str, n: usize) -> Duration {
    let created = (0..n).map(|_| async {
        let response = client.post(format!("{base}/conversations")).send().await.unwrap();
        let body: Value = response.json().await.unwrap();
        body["id"].as_str().unwrap().to_owned()
    });
    let ids = join_all(created).await;
    let start = Instant::now();
    let turns = ids.into_iter().map(|id| {
        let (client, url) = (client.clone(), format!("{base}/conversations/{id}/messages"));
        tokio::spawn(async move {
            let response =
                client.post(url).json(&json!({ "message": "Oslo" })).send().await.unwrap();
            assert_eq!(response.status(), 200);
            let body: Value = response.json().await.unwrap();
            assert_eq!(body["text"], ANSWER);
        })
    });
    for turn in join_all(turns).await {
        turn.unwrap();
    }
    start.elapsed()
}

fn turns(c: &mut Criterion) {
    let runtime: Runtime =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let agent = Arc::new(agent());
    let base = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let app = router(self::agent());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        format!("http://{addr}")
    });
    let client = reqwest::Client::builder().no_proxy().build().unwrap();

    let mut group = c.benchmark_group("turns");
    for n in CONCURRENT {
        group.throughput(Throughput::Elements(n as u64));
        group.bench_with_input(BenchmarkId::new("direct", n), &n, |b, &n| {
            b.iter_custom(|iters| {
                runtime.block_on(async {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        total += direct(&agent, n).await;
                    }
                    total
                })
            });
        });
        group.bench_with_input(BenchmarkId::new("http", n), &n, |b, &n| {
            b.iter_custom(|iters| {
                runtime.block_on(async {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        total += through_http(&client, &base, n).await;
                    }
                    total
                })
            });
        });
    }
    group.finish();
}

criterion_group!(benches, turns);
criterion_main!(benches);
