//! What the served agent's tests share: a server on a free loopback port, a client that goes
//! only there, and a new conversation.

#![allow(dead_code)] // Each test file uses what it needs.

use agentix::AnyAgent;
use agentix_server::identity::{Anonymous, Identity};
use agentix_server::{Limits, Server};
use serde_json::Value;

/// The routes serving `agent`, conversations in memory, every caller `tester` (an approver),
/// no limits: what these tests exercise is the routes, not who may call them (`security.rs`).
pub fn router<R: AnyAgent + 'static>(agent: R) -> axum::Router {
    open(Server::builder(agent))
}

/// [`router`], conversations in `store`.
pub fn router_with_store<R: AnyAgent + 'static>(
    agent: R,
    store: agentix_store::Store,
) -> axum::Router {
    open(Server::builder(agent).store(store))
}

fn open<R: AnyAgent + 'static>(builder: agentix_server::ServerBuilder<R>) -> axum::Router {
    let tester = Identity::new("tester").with_role("approver");
    builder.authenticate(Anonymous::as_identity(tester)).limits(Limits::none()).build().router()
}

/// Serves `app` on a free port of 127.0.0.1; its base URL.
pub async fn serve(app: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}")
}

/// A client that never goes through a proxy: traffic stays on 127.0.0.1.
pub fn client() -> reqwest::Client {
    reqwest::Client::builder().no_proxy().build().unwrap()
}

/// A new conversation's id.
pub async fn create(client: &reqwest::Client, base: &str) -> String {
    let response = client.post(format!("{base}/conversations")).send().await.unwrap();
    assert_eq!(response.status(), 201);
    let body: Value = response.json().await.unwrap();
    body["id"].as_str().unwrap().to_owned()
}
