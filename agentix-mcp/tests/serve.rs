//! An agent's tools served over MCP, called by a real client — agentix's own MCP client, in
//! another agent's turn — over an in-memory pipe and over streamable HTTP on loopback: every
//! call goes through the serving agent's tool hooks. The check against a client nobody here
//! wrote (the npm `@modelcontextprotocol/inspector-cli`) is in `inspector.rs`.

mod common;

use agentix::event::BeforeTool;
use agentix::{
    Agent, Conversation, ScriptedModel, ToolCall, ToolResult, Verdict, hook, message::ToolFailure,
};
use agentix_mcp::{McpServer, McpService, McpTools, NoModel};
use common::tool_results;
use rmcp::ServiceExt;
use serde_json::json;

#[agentix::tool(description = "Adds two numbers.")]
async fn add(a: i64, b: i64) -> Result<i64, std::convert::Infallible> {
    Ok(a + b)
}

#[agentix::tool(description = "Deletes a file.")]
async fn delete(path: String) -> Result<String, std::convert::Infallible> {
    Ok(format!("deleted {path}"))
}

/// The serving agent's policy: files are deleted under `/tmp/scratch/` only.
#[hook(before_tool)]
async fn scratch_only(call: &ToolCall) -> Verdict<BeforeTool> {
    let path = call.arguments["path"].as_str().unwrap_or_default();
    if call.name == "delete" && !path.starts_with("/tmp/scratch/") {
        return Verdict::reject(format!("{path} is outside /tmp/scratch/"));
    }
    Verdict::Continue
}

/// Marks every result the serving agent's tools give.
#[hook(after_tool)]
async fn checked(result: &mut ToolResult) {
    result.output.push_str(" [checked]");
}

fn serving_agent() -> McpService<impl agentix_mcp::ServesTools> {
    let agent =
        Agent::builder(NoModel).tool(add).tool(delete).hook(scratch_only).hook(checked).build();
    McpService::new(agent).named("files")
}

/// The served tools, reached by agentix's MCP client over an in-memory pipe.
async fn served_in_memory() -> McpTools {
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        if let Ok(running) = serving_agent().serve(theirs).await {
            let _ = running.waiting().await;
        }
    });
    McpServer::named("files").connect_with(ours, "an in-memory pipe").await.unwrap()
}

/// What an agent calling the served tools reads: the outputs, and which calls failed.
async fn call_through(tools: McpTools) -> Vec<(String, bool)> {
    let model = ScriptedModel::new()
        .tool_call("files__add", json!({ "a": 2, "b": 3 }))
        .tool_call("files__delete", json!({ "path": "/tmp/scratch/a.txt" }))
        .tool_call("files__delete", json!({ "path": "/etc/passwd" }))
        .tool_call("files__add", json!({ "a": "two" }))
        .text("done");
    let agent = Agent::builder(model).tools(tools).build();
    let mut conversation = Conversation::new();
    agent.run(&mut conversation, "go").await.unwrap();
    let results = tool_results(&conversation);
    results.iter().map(|result| (result.output.clone(), result.error.is_some())).collect()
}

fn assert_served_through_the_hooks(read: &[(String, bool)]) {
    assert_eq!(read[0], ("5 [checked]".to_owned(), false));
    assert_eq!(read[1], ("deleted /tmp/scratch/a.txt [checked]".to_owned(), false));
    // Refused by the serving agent's `before_tool` hook: the tool did not run.
    assert!(read[2].1, "{:?}", read[2]);
    assert!(read[2].0.contains("/etc/passwd is outside /tmp/scratch/"), "{:?}", read[2]);
    assert!(!read[2].0.contains("deleted"), "{:?}", read[2]);
    // Arguments the tool cannot take are the served tool's error.
    assert!(read[3].1, "{:?}", read[3]);
    assert!(read[3].0.contains("invalid arguments"), "{:?}", read[3]);
}

#[tokio::test]
async fn served_tools_are_listed_and_called_through_the_serving_agents_hooks() {
    let tools = served_in_memory().await;
    assert_eq!(tools.names(), ["files__add", "files__delete"]);
    assert_served_through_the_hooks(&call_through(tools).await);
}

#[tokio::test]
async fn served_over_streamable_http_the_same_calls_read_the_same() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let server = tokio::spawn(async move {
        axum::serve(listener, serving_agent().router()).await.unwrap();
    });
    let tools = McpServer::http("files", &url).connect().await.unwrap();
    assert_eq!(tools.names(), ["files__add", "files__delete"]);
    assert_served_through_the_hooks(&call_through(tools).await);
    server.abort();
}

#[tokio::test]
async fn any_tool_set_is_served_as_it_is_an_mcp_clients_too() {
    // A proxy: the tools of one MCP server, served again by another.
    let proxied = served_in_memory().await;
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        if let Ok(running) = McpService::tool_set(proxied).serve(theirs).await {
            let _ = running.waiting().await;
        }
    });
    let tools =
        McpServer::named("proxy").prefix("").connect_with(ours, "an in-memory pipe").await.unwrap();
    assert_eq!(tools.names(), ["files__add", "files__delete"]);
    assert_served_through_the_hooks(&call_through(tools).await);
}

#[tokio::test]
async fn an_unknown_tool_called_from_outside_a_turn_is_a_failed_call() {
    let agent = Agent::builder(NoModel).tool(add).build();
    let unknown = agent.call_tool(ToolCall::new("1", "subtract", json!({}))).await.unwrap();
    assert!(matches!(unknown.error, Some(ToolFailure::UnknownTool { .. })), "{unknown:?}");
    assert_eq!(
        agent.call_tool(ToolCall::new("2", "add", json!({ "a": 1, "b": 1 }))).await.unwrap().output,
        "2"
    );
}

/// Says the idempotency key its call runs under.
struct KeyOf;

impl agentix::Tool for KeyOf {
    const NAME: &'static str = "key_of";
    const WANTS_CALL_ID: bool = true;
    type Args = serde_json::Value;
    type Output = String;
    type Error = std::convert::Infallible;

    fn description(&self) -> &str {
        "Says its call's idempotency key."
    }

    async fn call(
        &self,
        _: serde_json::Value,
        turn: &agentix::Turn,
    ) -> Result<String, Self::Error> {
        Ok(turn.tool_idempotency_key().unwrap_or_default())
    }
}

#[tokio::test]
async fn a_served_call_runs_under_the_callers_idempotency_key() {
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let served = Agent::builder(NoModel).tool(KeyOf).build();
    tokio::spawn(McpService::new(served).serve_with(theirs));
    let tools = McpServer::named("keys").connect_with(ours, "a pipe").await.unwrap();
    let model = ScriptedModel::new()
        .tool_call("keys__key_of", json!({}))
        .tool_call("keys__key_of", json!({}))
        .text("done");
    let agent = Agent::builder(model).tools(tools).build();
    let mut conversation = Conversation::new().with_id("c");
    agent.run(&mut conversation, "go").await.unwrap();
    let keys: Vec<String> =
        tool_results(&conversation).iter().map(|result| result.output.clone()).collect();
    // The calling turn's keys (conversation `c`, turn 1, each call's id), carried through.
    assert_eq!(keys, ["-/1/c/1/call_1", "-/1/c/1/call_2"]);
}

/// Never answers; tells `stopped` when its call is dropped.
struct Forever(std::sync::Arc<tokio::sync::Notify>);

/// Notifies when dropped.
struct OnDrop(std::sync::Arc<tokio::sync::Notify>);

impl Drop for OnDrop {
    fn drop(&mut self) {
        self.0.notify_one();
    }
}

impl agentix::Tool for Forever {
    const NAME: &'static str = "forever";
    type Args = serde_json::Value;
    type Output = String;
    type Error = std::convert::Infallible;

    fn description(&self) -> &str {
        "Never answers."
    }

    async fn call(&self, _: serde_json::Value, _: &agentix::Turn) -> Result<String, Self::Error> {
        let _stopped = OnDrop(std::sync::Arc::clone(&self.0));
        std::future::pending().await
    }
}

#[tokio::test]
async fn a_client_that_cancels_a_served_call_stops_its_tool() {
    let stopped = std::sync::Arc::new(tokio::sync::Notify::new());
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let served = Agent::builder(NoModel).tool(Forever(stopped.clone())).build();
    tokio::spawn(McpService::new(served).serve_with(theirs));
    let tools = McpServer::named("slow").connect_with(ours, "a pipe").await.unwrap();
    let model = ScriptedModel::new().tool_call("slow__forever", json!({})).text("gave up");
    let agent = Agent::builder(model).tools(tools).build();
    let config = agentix::Config {
        tool_timeout: Some(std::time::Duration::from_millis(100)),
        ..agentix::Config::default()
    };
    agent.run(&mut Conversation::with_config(config), "go").await.unwrap();
    tokio::time::timeout(std::time::Duration::from_secs(5), stopped.notified())
        .await
        .expect("the served tool was dropped when the client cancelled");
}
