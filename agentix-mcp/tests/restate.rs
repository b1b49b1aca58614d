//! An MCP tool in a turn that survives a crash on Restate, with real processes: restate-server
//! (installed from npm by `scripts/restate.sh`, which runs these tests) and the service — this
//! test binary run again, serving `Conversations` over an agent whose tools are an rmcp
//! server's (in the service's process: it dies with it) — killed in the server right after
//! its side effect, and inside the second model call. Restate runs the invocation again on a
//! new process, whose server by then offers one more tool: the turn replays the tool lists
//! its steps were offered and the call's result, and the server's effect is applied once.
//!
//! Ignored in a plain `cargo test`: they need restate-server.

mod common;

use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;

use agentix::{Agent, AssistantMessage};
use agentix_mcp::McpServer;
use agentix_restate::Conversations;
use agentix_test_support::restate::{self as support, Restate, Service};
use agentix_test_support::{TempDir, lines};
use common::desk::{Clerk, Desk, Offered};
use restate_sdk::prelude::Endpoint;

const SERVICE: &str = "AGENTIX_MCP_RESTATE_SERVICE";

/// The service: `PORT|DIR|POINT`, the point `effect` (in the server, after its effect),
/// `model2` (inside the second model call) or `none`. Ignored in a test run; without the
/// variable it does nothing.
#[test]
#[ignore = "the service process of the test below, which runs it"]
fn service() {
    let Ok(spec) = std::env::var(SERVICE) else { return };
    let [port, dir, point] = spec.splitn(3, '|').collect::<Vec<_>>()[..] else { panic!("{spec}") };
    let (dir, port, point) = (PathBuf::from(dir), port.to_owned(), point.to_owned());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_stack_size(16 << 20)
        .build()
        .unwrap();
    runtime.block_on(async move {
        let desk = Desk { dir: dir.clone(), die_after_effect: point == "effect" };
        let (ours, _served) = common::serve_in_memory(desk);
        let tools = McpServer::named("desk").connect_with(ours, "a pipe").await.unwrap();
        let die_in_call = (point == "model2").then_some(2);
        let model = Clerk { calls: dir.join("model_calls"), die_in_call };
        let agent = Agent::builder(model).tools(tools).hook(Offered(dir.join("offered"))).build();
        let listener = tokio::net::TcpListener::bind(format!("127.0.0.1:{port}")).await.unwrap();
        let endpoint = Endpoint::builder().bind(Conversations::new(agent)).build();
        agentix_restate::serve(endpoint, listener, std::future::pending()).await;
    });
}

fn spawn(port: u16, dir: &TempDir, point: &str) -> Service {
    Service::spawn(SERVICE, format!("{port}|{}|{point}", dir.0.display()))
}

#[test]
#[ignore = "needs restate-server: scripts/restate.sh runs it"]
fn an_mcp_turn_killed_on_restate_replays_its_tool_lists_and_stamps_once() {
    let restate = Restate::start("mcp");
    let port = support::free_port();

    // A clean run, for the log a killed one must end with.
    let clean = TempDir::new("mcp-restate-clean");
    let service = spawn(port, &clean, "none");
    restate.register(port);
    let (status, body) = restate.send_in_background("clean", "Stamp it").join().unwrap();
    assert_eq!(status, 200, "{body}");
    let clean_log = restate.history("clean");
    drop(service);
    assert_eq!(lines(&clean.0.join("offered")), ["desk__stamp", "desk__stamp"]);

    // Killed after the server's effect (the call's step not recorded): the second run's first
    // step replays its list, its second reads the server's new one. Killed in the second model
    // call: both lists were recorded, and both replay.
    for (point, second_run) in [
        ("effect", ["desk__stamp", "desk__stamp,desk__extra"]),
        ("model2", ["desk__stamp", "desk__stamp"]),
    ] {
        let key = format!("k-{point}");
        let dir = TempDir::new("mcp-restate");
        let service = spawn(port, &dir, point);
        let turn = restate.send_in_background(&key, "Stamp it");
        assert_eq!(service.wait().signal(), Some(9), "{point}: the service was killed");
        let offered_before = lines(&dir.0.join("offered")).len();
        std::fs::write(dir.0.join("extra"), "").unwrap();

        let service = spawn(port, &dir, "none");
        let (status, body) = turn.join().unwrap();
        assert_eq!(status, 200, "{point}: {body}");
        let answer: AssistantMessage = serde_json::from_str(&body).unwrap();
        assert_eq!(answer, AssistantMessage::text("Stamped."), "{point}");
        let log = restate.history(&key);
        drop(service);

        let clean_entries = serde_json::to_string(&clean_log).unwrap().replace("clean", &key);
        assert_eq!(serde_json::to_string(&log).unwrap(), clean_entries, "{point}: a clean run's");
        assert_eq!(lines(&dir.0.join("applied")), [format!("{key}/1/call_1")], "{point}");
        let attempts = 1 + usize::from(point == "effect");
        assert_eq!(lines(&dir.0.join("attempts")).len(), attempts, "{point}: attempts");
        let in_flight = usize::from(point == "model2");
        assert_eq!(lines(&dir.0.join("model_calls")).len(), 2 + in_flight, "{point}");
        let offered = lines(&dir.0.join("offered"));
        assert_eq!(offered[offered_before..], second_run, "{point}: the second run's lists");
    }
}
