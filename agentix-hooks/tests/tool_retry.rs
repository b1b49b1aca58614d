//! Tool retry on the real loop: a failed call of an idempotent tool made again after a backoff
//! (on tokio's paused clock), with the same idempotency key; other tools' calls left as they
//! failed unless told; an MCP server's idempotent tool known from its listing.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentix::{
    Agent, Conversation, ScriptedModel, Tool, ToolSet, Turn, message::ToolFailure, tool,
};
use agentix_hooks::{Jitter, ToolRetry};
use serde_json::json;
use tests::{City, Flaky, logged_results};
use tokio::time::Instant;

/// `lookup`: fails until it has been called `failures` times; idempotent. Keeps the
/// idempotency key of each attempt.
struct Lookup {
    failures: usize,
    keys: Arc<Mutex<Vec<String>>>,
}

impl Tool for Lookup {
    const NAME: &'static str = "lookup";
    const IDEMPOTENT: bool = true;
    const WANTS_CALL_ID: bool = true;
    type Args = City;
    type Output = String;
    type Error = String;

    fn description(&self) -> &str {
        "Looks a city up."
    }

    async fn call(&self, args: City, turn: &Turn) -> Result<String, String> {
        let mut keys = self.keys.lock().unwrap();
        keys.push(turn.tool_idempotency_key().unwrap_or_default());
        if keys.len() <= self.failures {
            Err(format!("attempt {} failed", keys.len()))
        } else {
            Ok(format!("found {}", args.city))
        }
    }
}

fn oslo() -> serde_json::Value {
    json!({ "city": "Oslo" })
}

fn fixed() -> ToolRetry {
    ToolRetry::new().jitter(Jitter::Off)
}

#[tokio::test(start_paused = true)]
async fn an_idempotent_tools_failed_call_is_made_again_with_the_same_key() {
    let keys: Arc<Mutex<Vec<String>>> = Arc::default();
    let model = ScriptedModel::new().tool_call("lookup", oslo()).text("Found it.");
    let agent = Agent::builder(&model)
        .tool(Lookup { failures: 2, keys: Arc::clone(&keys) })
        .hook(fixed())
        .build();
    let mut conversation = Conversation::new();
    let started = Instant::now();
    agent.run(&mut conversation, "find Oslo").await.unwrap();
    // 200 ms, then 400 ms.
    assert_eq!(started.elapsed(), Duration::from_millis(600));
    let keys = keys.lock().unwrap().clone();
    assert_eq!(keys.len(), 3);
    assert!(keys.iter().all(|key| *key == keys[0]), "{keys:?}");
    let results = logged_results(&conversation);
    assert_eq!(results[0].output, "found Oslo");
    assert!(results[0].error.is_none());
}

#[tokio::test(start_paused = true)]
async fn attempts_run_out_and_the_model_reads_the_last_failure() {
    let keys: Arc<Mutex<Vec<String>>> = Arc::default();
    let model = ScriptedModel::new().tool_call("lookup", oslo()).text("It failed.");
    let agent = Agent::builder(&model)
        .tool(Lookup { failures: 10, keys: Arc::clone(&keys) })
        .hook(fixed().attempts(2))
        .build();
    let mut conversation = Conversation::new();
    agent.run(&mut conversation, "find Oslo").await.unwrap();
    assert_eq!(keys.lock().unwrap().len(), 2);
    let results = logged_results(&conversation);
    assert!(
        matches!(&results[0].error, Some(ToolFailure::Failed { message }) if message == "attempt 2 failed"),
        "{:?}",
        results[0]
    );
}

#[tokio::test(start_paused = true)]
async fn a_tool_that_does_not_say_it_is_idempotent_is_not_retried_unless_told() {
    for told in [false, true] {
        let calls: Arc<Mutex<usize>> = Arc::default();
        let model = ScriptedModel::new().tool_call("flaky", oslo()).text("Done.");
        let retry = if told { fixed().even_if_not_idempotent() } else { fixed() };
        let agent = Agent::builder(&model)
            .tool(Flaky { failures: 1, calls: Arc::clone(&calls) })
            .hook(retry)
            .build();
        agent.run(&mut Conversation::new(), "go").await.unwrap();
        assert_eq!(*calls.lock().unwrap(), if told { 2 } else { 1 }, "told: {told}");
    }
}

#[tokio::test(start_paused = true)]
async fn only_the_tools_named_and_only_failures_that_may_pass_are_retried() {
    let keys: Arc<Mutex<Vec<String>>> = Arc::default();
    // Arguments that do not parse: the tool never runs, and no retry would change that.
    let model = ScriptedModel::new()
        .tool_call("lookup", json!({ "town": "Oslo" }))
        .tool_call("lookup", oslo())
        .text("Done.");
    let agent = Agent::builder(&model)
        .tool(Lookup { failures: 1, keys: Arc::clone(&keys) })
        .hook(fixed().tools(["search_*"]).unwrap())
        .build();
    let started = Instant::now();
    let mut conversation = Conversation::new();
    agent.run(&mut conversation, "go").await.unwrap();
    assert_eq!(started.elapsed(), Duration::ZERO, "nothing waited for a retry");
    assert_eq!(keys.lock().unwrap().len(), 1, "`lookup` is not among the tools named");
    let results = logged_results(&conversation);
    assert!(matches!(results[0].error, Some(ToolFailure::InvalidArguments { .. })));
    assert!(matches!(results[1].error, Some(ToolFailure::Failed { .. })));
}

/// `#[tool(idempotent)]` says so to the loop.
#[tool(idempotent)]
async fn read_only(
    /// What to read.
    what: String,
) -> String {
    what
}

#[tokio::test]
async fn the_attribute_and_an_mcp_servers_listing_say_which_tools_are_idempotent() {
    const { assert!(<read_only as Tool>::IDEMPOTENT) };
    const { assert!(!<tests::Weather as Tool>::IDEMPOTENT) };
    // The notes service marks `read_note` idempotent; served over MCP, its listing says so.
    let tools = examples::mcp_agent::notes_server().await.unwrap();
    assert!(tools.idempotent("notes__read_note"));
    assert!(!tools.idempotent("notes__add_note"));
    assert!(!tools.idempotent("notes__no_such_tool"));
}

#[tokio::test(start_paused = true)]
async fn an_mcp_tools_failed_call_is_retried_when_its_server_says_it_is_idempotent() {
    let tools = examples::mcp_agent::notes_server().await.unwrap();
    // No such note: the server's tool fails, and is idempotent.
    let model = ScriptedModel::new()
        .tool_call("notes__read_note", json!({ "title": "retry-test-missing" }))
        .text("No such note.");
    let agent = Agent::builder(&model).tools(tools).hook(fixed().attempts(2)).build();
    let started = Instant::now();
    let mut conversation = Conversation::new();
    agent.run(&mut conversation, "read it").await.unwrap();
    assert_eq!(started.elapsed(), Duration::from_millis(200), "one retry, after 200 ms");
    assert!(logged_results(&conversation)[0].is_error());
}
