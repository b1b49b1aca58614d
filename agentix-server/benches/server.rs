#![allow(missing_docs)] // criterion_group! generates an undocumented `pub fn`.

//! Turns per second through the HTTP server (`agentix_server`, served by its own `serve` on
//! 127.0.0.1, a reqwest client) against the same agent driven directly, each turn a task
//! spawned on the same two-worker tokio runtime, at 1, 50 and 500 conversations at once —
//! through HTTP three ways: every caller let in (`http`), each request's API key checked
//! (`http_key`), each request's JWT verified (`http_jwt`, HS256). The limits are off: one
//! subject sends every turn. A turn is a model call
//! asking for `get_weather`, the tool, and a model call answering (the demo model, no latency:
//! what is measured is the framework and the transport, not a model).
//!
//! The client runs on the server's runtime and cores: "through the server" includes the cost
//! of making and reading the requests, as a load test on one machine does. Creating the
//! conversations is not timed. Run with `cargo bench -p agentix-server --bench server`; criterion
//! reports each figure as elements (turns) per second.

use std::sync::Arc;
use std::time::{Duration, Instant};

use agentix::pipeline::Pipeline;
use agentix::{Agent, Conversation, ToolSet};
use agentix_server::demo::{DemoModel, get_weather};
use agentix_server::identity::{Anonymous, ApiKeys, Authenticate, Identity, Jwt};
use agentix_server::{Limits, Server};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use futures::future::join_all;
use serde_json::{Value, json};
use tokio::runtime::Runtime;

const CONCURRENT: [usize; 3] = [1, 50, 500];

fn agent() -> Agent<DemoModel, impl ToolSet, impl Pipeline> {
    Agent::builder(DemoModel::default()).tool(get_weather).build()
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

/// `n` turns at once on fresh conversations, through the server at `base`, each request
/// bringing `credentials` (an `Authorization` header's value, if any); the time they took.
async fn through_http(
    client: &reqwest::Client,
    base: &str,
    credentials: Option<&str>,
    n: usize,
) -> Duration {
    let with = |request: reqwest::RequestBuilder| match credentials {
        Some(credentials) => request.header("authorization", credentials),
        None => request,
    };
    let created = (0..n).map(|_| async {
        let response = with(client.post(format!("{base}/conversations"))).send().await.unwrap();
        let body: Value = response.json().await.unwrap();
        body["id"].as_str().unwrap().to_owned()
    });
    let ids = join_all(created).await;
    let start = Instant::now();
    let turns = ids.into_iter().map(|id| {
        let request = with(client.post(format!("{base}/conversations/{id}/messages")));
        tokio::spawn(async move {
            let response = request.json(&json!({ "message": "Oslo" })).send().await.unwrap();
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

/// The demo agent served on a free loopback port, every request authenticated by
/// `authenticator`; its base URL.
async fn serve(authenticator: impl Authenticate) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server =
        Server::builder(agent()).authenticate(authenticator).limits(Limits::none()).build();
    let router = server.router();
    let forever = std::future::pending();
    tokio::spawn(agentix_server::serve(listener, router, agentix_server::HEADER_TIMEOUT, forever));
    format!("http://{addr}")
}

/// A JWT for `alice` that `Jwt::hs256(SECRET).audience("agentix")` takes, for an hour.
fn token() -> String {
    let exp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs()
        + 3600;
    let claims = json!({ "sub": "alice", "aud": "agentix", "exp": exp, "roles": ["approver"] });
    let key = jsonwebtoken::EncodingKey::from_secret(SECRET);
    jsonwebtoken::encode(&jsonwebtoken::Header::default(), &claims, &key).unwrap()
}

const SECRET: &[u8] = b"the benchmark's secret, 32 bytes";

fn turns(c: &mut Criterion) {
    let runtime: Runtime =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let agent = Arc::new(agent());
    let alice = Identity::new("alice").with_role("approver");
    let (open, keyed, signed) = runtime.block_on(async {
        (
            serve(Anonymous::as_identity(alice.clone())).await,
            serve(ApiKeys::new().with_key("agx_bench", alice)).await,
            serve(Jwt::hs256(SECRET).audience("agentix")).await,
        )
    });
    let bearer_token = format!("Bearer {}", token());
    let ways = [
        ("http", open, None),
        ("http_key", keyed, Some("Bearer agx_bench")),
        ("http_jwt", signed, Some(bearer_token.as_str())),
    ];
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
        for (name, base, credentials) in &ways {
            group.bench_with_input(BenchmarkId::new(*name, n), &n, |b, &n| {
                b.iter_custom(|iters| {
                    runtime.block_on(async {
                        let mut total = Duration::ZERO;
                        for _ in 0..iters {
                            total += through_http(&client, base, *credentials, n).await;
                        }
                        total
                    })
                });
            });
        }
    }
    group.finish();
}

/// Whether one request's credentials hold.
type Check<'a> = &'a dyn Fn(&axum::http::request::Parts) -> bool;

/// What checking one request's credentials costs, alone: an API key (one SHA-256 and a map
/// lookup), and a JWT signed with HS256, ES256 and RS256 (the test keys of `tests/keys/`).
fn authenticate(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let request = |credentials: &str| {
        let request = axum::http::Request::builder().header("authorization", credentials);
        request.body(()).unwrap().into_parts().0
    };
    let keys_dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/keys");
    let read = |name: &str| std::fs::read(keys_dir.join(name)).unwrap();
    let claims = json!({ "sub": "alice", "aud": "agentix", "exp": u64::MAX / 2 });
    let sign = |algorithm, key: &jsonwebtoken::EncodingKey| {
        let header = jsonwebtoken::Header::new(algorithm);
        format!("Bearer {}", jsonwebtoken::encode(&header, &claims, key).unwrap())
    };
    let keys = ApiKeys::new().with_key("agx_bench", Identity::new("alice"));
    let hs256 = Jwt::hs256(SECRET).audience("agentix");
    let es256 = Jwt::es256_pem(&read("ec-public.pem")).unwrap().audience("agentix");
    let rs256 = Jwt::rs256_pem(&read("rsa-public.pem")).unwrap().audience("agentix");
    let es_key = jsonwebtoken::EncodingKey::from_ec_pem(&read("ec-private.pem")).unwrap();
    let rs_key = jsonwebtoken::EncodingKey::from_rsa_pem(&read("rsa-private.pem")).unwrap();
    let hs_key = jsonwebtoken::EncodingKey::from_secret(SECRET);
    let cases: [(&str, Check<'_>, String); 4] = [
        (
            "api_key",
            &|parts| runtime.block_on(keys.authenticate(parts)).is_ok(),
            "Bearer agx_bench".to_owned(),
        ),
        (
            "jwt_hs256",
            &|parts| runtime.block_on(hs256.authenticate(parts)).is_ok(),
            sign(jsonwebtoken::Algorithm::HS256, &hs_key),
        ),
        (
            "jwt_es256",
            &|parts| runtime.block_on(es256.authenticate(parts)).is_ok(),
            sign(jsonwebtoken::Algorithm::ES256, &es_key),
        ),
        (
            "jwt_rs256",
            &|parts| runtime.block_on(rs256.authenticate(parts)).is_ok(),
            sign(jsonwebtoken::Algorithm::RS256, &rs_key),
        ),
    ];
    let mut group = c.benchmark_group("authenticate");
    for (name, check, credentials) in &cases {
        let parts = request(credentials);
        assert!(check(&parts), "{name}: the credentials hold");
        group.bench_function(*name, |b| b.iter(|| check(std::hint::black_box(&parts))));
    }
    group.finish();
}

criterion_group!(benches, turns, authenticate);
criterion_main!(benches);
