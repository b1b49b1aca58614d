//! What surviving a crash costs per turn: turns per second and p50/p99 latency of a trivial
//! model → tool → model turn, one at a time and 8 and 32 at once, through
//!
//! - agentix alone (`Agent::run`, nothing kept);
//! - the PostgreSQL journal (`agentix-store`: load, `Store::journal`, `agent.turn(..).journal(..)`,
//!   `Store::finish_turn` — each step its own transaction);
//! - Restate (`Conversations` served with `TCP_NODELAY`, each turn an ingress call), and at one
//!   at a time restate-sdk's own `HttpServer` (Nagle's algorithm on) for comparison.
//!
//! Not criterion: a turn here is a round of processes and a database, timed by its
//! latencies under load. `cargo bench -p agentix-restate --bench durable` needs
//! restate-server (`AGENTIX_RESTATE_SERVER`, as `scripts/restate.sh --path` prints) and
//! PostgreSQL (`AGENTIX_POSTGRES_URL`, or one this process starts from the machine's
//! `initdb`); `scripts/durable-bench.sh` gives both. Run by `cargo test --benches`, it runs
//! a few turns of agentix alone, as a check.

#![allow(missing_docs)]

use agentix_test_support::restate;

use std::sync::Arc;
use std::time::{Duration, Instant};

use agentix::{
    Agent, AssistantMessage, Conversation, Model, ToolCall, Turn,
    model::{ModelError, ModelRequest, ModelResponse},
};
use agentix_restate::Conversations;
use agentix_store::Store;
use restate_sdk::prelude::{Endpoint, HttpServer};
use serde_json::json;

/// Calls `send` until it has its result, then answers.
struct Trivial;

impl Model for Trivial {
    async fn complete(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        let sent = request.messages.iter().any(|message| {
            message.content.iter().any(|part| matches!(part, agentix::Part::ToolResult(_)))
        });
        let answer = if sent {
            AssistantMessage::text("Done.")
        } else {
            let call = ToolCall::new("call_1", "send", json!({ "to": "boss" }));
            AssistantMessage::default().with_tool_call(call)
        };
        Ok(answer.into())
    }
}

/// Does nothing, as a tool.
struct Send;

impl agentix::Tool for Send {
    const NAME: &'static str = "send";
    type Args = serde_json::Value;
    type Output = String;
    type Error = std::convert::Infallible;

    fn description(&self) -> &str {
        "Sends a message."
    }

    async fn call(&self, _: serde_json::Value, _: &Turn) -> Result<String, Self::Error> {
        Ok("sent".into())
    }
}

fn agent() -> Agent<Trivial, impl agentix::ToolSet + 'static> {
    Agent::builder(Trivial).tool(Send).build()
}

/// Each client's turn latencies, and the wall time of the whole.
struct Run {
    latencies: Vec<Duration>,
    wall: Duration,
}

impl Run {
    fn report(mut self, backend: &str, clients: usize) -> String {
        self.latencies.sort();
        let at = |q: f64| {
            let i = ((self.latencies.len() as f64 * q).ceil() as usize).saturating_sub(1);
            self.latencies[i].as_secs_f64() * 1e3
        };
        let line = format!(
            "| {backend} | {clients} | {} | {:.0} | {:.2} | {:.2} |",
            self.latencies.len(),
            self.latencies.len() as f64 / self.wall.as_secs_f64(),
            at(0.50),
            at(0.99),
        );
        println!("{line}");
        line
    }
}

/// Runs `turns` turns on each of `clients` tasks, each its own conversation `n`.
async fn measure<F, Fut>(clients: usize, turns: usize, turn: F) -> Run
where
    F: Fn(usize, usize) -> Fut + Clone + std::marker::Send + 'static,
    Fut: Future<Output = ()> + std::marker::Send,
{
    let start = Instant::now();
    let tasks: Vec<_> = (0..clients)
        .map(|client| {
            let turn = turn.clone();
            tokio::spawn(async move {
                let mut latencies = Vec::with_capacity(turns);
                for n in 0..turns {
                    let begun = Instant::now();
                    turn(client, n).await;
                    latencies.push(begun.elapsed());
                }
                latencies
            })
        })
        .collect();
    let mut latencies = Vec::new();
    for task in tasks {
        latencies.extend(task.await.unwrap());
    }
    Run { latencies, wall: start.elapsed() }
}

fn turns_for(clients: usize) -> usize {
    (400 / clients).max(25)
}

async fn alone(clients: usize, turns: usize) -> Run {
    let agent = Arc::new(agent());
    let conversations: Arc<Vec<tokio::sync::Mutex<Conversation>>> =
        Arc::new((0..clients).map(|_| Default::default()).collect());
    measure(clients, turns, move |client, _| {
        let (agent, conversations) = (agent.clone(), conversations.clone());
        async move {
            let mut conversation = conversations[client].lock().await;
            agent.run(&mut conversation, "Send it").await.unwrap();
        }
    })
    .await
}

async fn postgres_journal(clients: usize, turns: usize, url: &str, round: usize) -> Run {
    let store = Arc::new(Store::open(url).await.unwrap());
    for client in 0..clients {
        store.create(&format!("r{round}c{client}"), &Conversation::new()).await.unwrap();
    }
    let agent = Arc::new(agent());
    measure(clients, turns, move |client, _| {
        let (agent, store) = (agent.clone(), store.clone());
        async move {
            let id = format!("r{round}c{client}");
            let mut stored = store.load(&id).await.unwrap();
            let journal = store.journal(&id, &stored).await.unwrap();
            let (version, from) = (stored.version, stored.conversation.log().len());
            agent.turn(&mut stored.conversation, "Send it").journal(&journal).await.unwrap();
            store.finish_turn(&id, version, &stored.conversation, from).await.unwrap();
        }
    })
    .await
}

async fn through_restate(clients: usize, turns: usize, ingress: u16, round: usize) -> Run {
    measure(clients, turns, move |client, _| async move {
        let path = format!("/Conversation/r{round}c{client}/send");
        let (status, body) = tokio::task::spawn_blocking(move || {
            restate::request(ingress, "POST", &path, "\"Send it\"").expect("the ingress answers")
        })
        .await
        .unwrap();
        assert_eq!(status, 200, "{body}");
    })
    .await
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    if !std::env::args().any(|arg| arg == "--bench") {
        // `cargo test --benches`: a check that the turn runs, not a measurement.
        let run = runtime.block_on(alone(2, 5));
        assert_eq!(run.latencies.len(), 10);
        return;
    }
    let mut lines = vec![
        "| backend | concurrent | turns | turns/s | p50 ms | p99 ms |".to_owned(),
        "|---|---:|---:|---:|---:|---:|".to_owned(),
    ];
    runtime.block_on(async {
        let pg = agentix_test_support::postgres_database("durable_bench");
        let restate = restate::Restate::start("bench");
        let (nodelay, nagle) = (restate::free_port(), restate::free_port());
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", nodelay)).await.unwrap();
        let endpoint = Endpoint::builder().bind(Conversations::new(agent())).build();
        tokio::spawn(agentix_restate::serve(endpoint, listener, std::future::pending()));
        let admin = restate.admin;
        tokio::task::spawn_blocking(move || restate::register(admin, nodelay)).await.unwrap();

        for (round, clients) in [1, 8, 32].into_iter().enumerate() {
            let turns = turns_for(clients);
            let _ = alone(clients, 10).await;
            lines.push(alone(clients, turns).await.report("agentix alone", clients));
            let _ = postgres_journal(clients, 5, &pg, 100 + round).await;
            lines.push(
                postgres_journal(clients, turns, &pg, round)
                    .await
                    .report("PostgreSQL journal", clients),
            );
            let _ = through_restate(clients, 5, restate.ingress, 100 + round).await;
            lines.push(
                through_restate(clients, turns, restate.ingress, round)
                    .await
                    .report("Restate (TCP_NODELAY)", clients),
            );
        }
        // restate-sdk's own server, registered after: the newest deployment takes the turns.
        let endpoint = Endpoint::builder().bind(Conversations::new(agent())).build();
        let sdk = std::net::SocketAddr::from(([127, 0, 0, 1], nagle));
        tokio::spawn(HttpServer::new(endpoint).listen_and_serve(sdk));
        tokio::task::spawn_blocking(move || restate::register(admin, nagle)).await.unwrap();
        let _ = through_restate(1, 5, restate.ingress, 200).await;
        lines.push(
            through_restate(1, turns_for(1), restate.ingress, 201)
                .await
                .report("Restate (restate-sdk's HttpServer, Nagle on)", 1),
        );
    });
    println!("\n{}", lines.join("\n"));
}
