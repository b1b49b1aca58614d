//! Served tools checked by an MCP client nobody here wrote: the npm
//! `@modelcontextprotocol/inspector-cli` (installed at a pinned version by
//! `scripts/mcp-servers.sh`, which names its binary in `AGENTIX_MCP_INSPECTOR`) lists and
//! calls an agent's tools served over stdio (the `mcp_serve` example, named in
//! `AGENTIX_MCP_SERVE`) and over streamable HTTP; each call goes through the serving agent's
//! hooks. Ignored in a plain `cargo test`.

use std::path::PathBuf;
use std::process::Command;

use agentix::event::BeforeTool;
use agentix::{Agent, ToolCall, ToolResult, Verdict, hook};
use agentix_mcp::{McpService, NoModel};
use serde_json::Value;

fn variable(name: &str) -> PathBuf {
    std::env::var_os(name)
        .map(PathBuf::from)
        .unwrap_or_else(|| panic!("{name} is not set: run scripts/mcp-servers.sh"))
}

/// What the inspector printed for `target` and its arguments, as JSON. It runs from its own
/// `node_modules` (it reads a `package.json` in the parent of its working directory).
fn inspect(target: &[&str], arguments: &[&str]) -> Value {
    let binary = variable("AGENTIX_MCP_INSPECTOR");
    let modules = binary.parent().and_then(|bin| bin.parent()).expect("node_modules/.bin/…");
    let output = Command::new(&binary)
        .current_dir(modules)
        .args(["--cli"])
        .args(target)
        .args(arguments)
        .output()
        .expect("the inspector runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_str(&stdout).unwrap_or_else(|error| panic!("{error}: {stdout}"))
}

fn names(listed: &Value) -> Vec<&str> {
    listed["tools"].as_array().unwrap().iter().map(|tool| tool["name"].as_str().unwrap()).collect()
}

/// The text of a call's result, and whether it is an error.
fn said(result: &Value) -> (String, bool) {
    let text = result["content"][0]["text"].as_str().unwrap_or_default().to_owned();
    (text, result["isError"].as_bool().unwrap_or(false))
}

#[test]
#[ignore = "needs the npm inspector: scripts/mcp-servers.sh"]
fn the_inspector_lists_and_calls_the_tools_served_over_stdio() {
    let serve = variable("AGENTIX_MCP_SERVE");
    let target = [serve.to_str().unwrap()];
    let listed = inspect(&target, &["--method", "tools/list"]);
    assert_eq!(names(&listed), ["add_note", "read_note", "delete_note"]);
    assert_eq!(listed["tools"][0]["inputSchema"]["required"], serde_json::json!(["title", "text"]));

    let call = |arguments: &[&str]| {
        let mut all = vec!["--method", "tools/call"];
        all.extend(arguments);
        said(&inspect(&target, &all))
    };
    let kept = call(&["--tool-name", "add_note", "--tool-arg", "title=groceries", "text=milk"]);
    assert_eq!(kept, ("kept \"groceries\"".to_owned(), false));
    // The serving agent's policy hook refuses a title of two lines: the tool does not run.
    let refused = call(&["--tool-name", "add_note", "--tool-arg", "title=two\nlines", "text=x"]);
    assert_eq!(refused, ("call rejected by one_line_titles: a title is one line".to_owned(), true));
}

#[agentix::tool(description = "Adds two numbers.")]
async fn add(a: i64, b: i64) -> Result<i64, std::convert::Infallible> {
    Ok(a + b)
}

/// Refuses to add negative numbers.
#[hook(before_tool)]
async fn no_negatives(call: &ToolCall) -> Verdict<BeforeTool> {
    let negative = ["a", "b"].iter().any(|name| call.arguments[name].as_i64().unwrap_or(0) < 0);
    if negative { Verdict::reject("no negative numbers") } else { Verdict::Continue }
}

/// Says it checked.
#[hook(after_tool)]
async fn checked(result: &mut ToolResult) {
    result.output.push_str(" (checked)");
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs the npm inspector: scripts/mcp-servers.sh"]
async fn the_inspector_lists_and_calls_the_tools_served_over_streamable_http() {
    let agent = Agent::builder(NoModel).tool(add).hook(no_negatives).hook(checked).build();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let server = tokio::spawn(async move {
        axum::serve(listener, McpService::new(agent).router()).await.unwrap();
    });
    let inspected = tokio::task::spawn_blocking(move || {
        let target = [url.as_str(), "--transport", "http"];
        let listed = inspect(&target, &["--method", "tools/list"]);
        let call = |a: &str, b: &str| {
            let (a, b) = (format!("a={a}"), format!("b={b}"));
            let arguments = ["--method", "tools/call", "--tool-name", "add", "--tool-arg", &a, &b];
            said(&inspect(&target, &arguments))
        };
        (listed, call("2", "3"), call("-1", "3"))
    });
    let (listed, sum, refused) = inspected.await.unwrap();
    server.abort();
    assert_eq!(names(&listed), ["add"]);
    assert_eq!(sum, ("5 (checked)".to_owned(), false));
    assert_eq!(refused, ("call rejected by no_negatives: no negative numbers".to_owned(), true));
}
