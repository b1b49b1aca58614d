//! An MCP tool in a turn that survives a crash, through the store's journal over SQLite, with
//! real processes: this test binary run again as a child that connects an rmcp server (in its
//! own process, on an in-memory pipe: it dies with it), runs a journaled turn, and is killed
//! (`SIGKILL`) after each journaled step and in the server right after its side effect. Run
//! again — by then the server offers one more tool — the turn replays what it recorded: the
//! tool list its steps were offered, the call's result (the server is not called again), and
//! finishes as a clean run does, the server's effect applied once by its idempotency key.

mod common;

use std::future::Future;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use agentix::{
    Agent, Conversation,
    durable::{Journal, JournalError, JournalStep},
};
use agentix_mcp::McpServer;
use agentix_store::{Store, StoreJournal};
use agentix_test_support::{self as support, TempDir, die, lines};
use common::desk::{Clerk, Desk, Offered};
use serde::Serialize;
use serde::de::DeserializeOwned;

const CHILD: &str = "AGENTIX_MCP_DURABLE_CHILD";

/// The store's journal, dying after its `kill`th step (from 1).
struct Dying<'s> {
    inner: StoreJournal<'s>,
    steps: AtomicUsize,
    kill: Option<usize>,
}

impl Journal for Dying<'_> {
    async fn journal<T, F>(&self, step: &JournalStep<'_>, effect: F) -> Result<T, JournalError>
    where
        T: Serialize + DeserializeOwned + Send,
        F: Future<Output = T> + Send,
    {
        let value = self.inner.journal(step, effect).await?;
        if self.kill == Some(self.steps.fetch_add(1, Ordering::SeqCst) + 1) {
            die();
        }
        Ok(value)
    }
}

/// The child: `URL|DIR|POINT`, the point `step:N`, `effect` or `none`. Ignored in a test run;
/// without the child variable it does nothing.
#[test]
#[ignore = "a child process of the test below, which runs it"]
fn child() {
    let Ok(spec) = std::env::var(CHILD) else { return };
    let [url, dir, point] = spec.splitn(3, '|').collect::<Vec<_>>()[..] else { panic!("{spec}") };
    let dir = PathBuf::from(dir);
    let kill = point.strip_prefix("step:").map(|n| n.parse().unwrap());
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    // The turn's future, over the store and an MCP client, is large in a debug build: it runs
    // on a thread with the stack for it.
    let (url, point) = (url.to_owned(), point.to_owned());
    let run = move || runtime.block_on(turn(url, dir, point, kill));
    std::thread::Builder::new().stack_size(16 << 20).spawn(run).unwrap().join().unwrap();
}

/// The child's turn, dying where `point` and `kill` say.
async fn turn(url: String, dir: PathBuf, point: String, kill: Option<usize>) {
    {
        let desk = Desk { dir: dir.clone(), die_after_effect: point == "effect" };
        let (ours, _served) = common::serve_in_memory(desk);
        let tools = McpServer::named("desk").connect_with(ours, "a pipe").await.unwrap();
        let store = Store::open(&url).await.unwrap();
        let mut stored = store.load("c").await.unwrap();
        let journal = store.journal("c", &stored).await.unwrap();
        let journal = Dying { inner: journal, steps: AtomicUsize::new(0), kill };
        let agent = Agent::builder(Clerk { calls: dir.join("model_calls"), die_in_call: None })
            .tools(tools)
            .hook(Offered(dir.join("offered")))
            .build();
        let (version, from) = (stored.version, stored.conversation.log().len());
        let conversation = &mut stored.conversation;
        let answer = agent.turn(conversation, "Stamp it").journal(&journal).await.unwrap();
        assert_eq!(answer.joined_text(), "Stamped.");
        store.finish_turn("c", version, conversation, from).await.unwrap();
    }
}

fn run_child(url: &str, dir: &Path, point: &str) -> std::process::ExitStatus {
    support::run_child(CHILD, format!("{url}|{}|{point}", dir.display()))
}

#[tokio::test]
async fn an_mcp_turn_killed_at_every_step_replays_its_tool_lists_and_stamps_once() {
    let (store, url, _db) = support::sqlite("mcp-clean").await;
    let clean = TempDir::new("mcp-clean");
    store.create("c", &Conversation::new()).await.unwrap();
    assert!(run_child(&url, &clean.0, "none").success());
    let clean_log = store.load("c").await.unwrap().conversation.log().to_vec();
    assert_eq!(lines(&clean.0.join("offered")), ["desk__stamp", "desk__stamp"]);
    store.close().await;

    // The steps: opened, tools (step 0), model, tool, tools (step 1), model.
    let points = ["step:1", "step:2", "step:3", "step:4", "step:5", "effect"];
    for point in points {
        let (store, url, _db) = support::sqlite(&format!("mcp-{}", point.replace(':', "-"))).await;
        let dir = TempDir::new("mcp-durable");
        store.create("c", &Conversation::new()).await.unwrap();
        assert_eq!(run_child(&url, &dir.0, point).signal(), Some(9), "{point}: killed");
        let offered_before = lines(&dir.0.join("offered")).len();
        // The server changed while the agent was down: it offers one more tool.
        std::fs::write(dir.0.join("extra"), "").unwrap();
        assert!(run_child(&url, &dir.0, "none").success(), "{point}: run again");

        let log = store.load("c").await.unwrap().conversation.log().to_vec();
        assert_eq!(log, clean_log, "{point}: the stored turn is a clean run's");
        assert_eq!(lines(&dir.0.join("applied")), ["c/1/call_1"], "{point}: applied once");
        let attempts = 1 + usize::from(point == "effect");
        assert_eq!(lines(&dir.0.join("attempts")).len(), attempts, "{point}: attempts");
        // A step whose list was recorded is offered that list again; a step that had not
        // read one yet is offered the server's new list.
        let offered = lines(&dir.0.join("offered"));
        let replayed = &offered[offered_before..];
        let recorded_lists = match point {
            "step:1" => 0,
            "step:2" | "step:3" | "step:4" | "effect" => 1,
            _ => 2,
        };
        let mut expected = vec!["desk__stamp"; recorded_lists];
        expected.resize(2, "desk__stamp,desk__extra");
        assert_eq!(replayed, expected, "{point}: the lists the second run offered");
        store.close().await;
    }
}
