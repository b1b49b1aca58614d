//! The MCP client against reference servers nobody here wrote, installed from npm at pinned
//! versions by `scripts/mcp-servers.sh` (run by `scripts/test`), which names their binaries
//! in `AGENTIX_MCP_EVERYTHING` and `AGENTIX_MCP_FILESYSTEM`. Ignored in a plain `cargo test`.

// A streamed turn over an MCP tool set is a deep future type for the lints to lay out.
#![recursion_limit = "256"]

mod common;

use std::path::{Path, PathBuf};

use agentix::event::BeforeTool;
use agentix::{
    Agent, Conversation, ScriptedModel, StreamEvent, ToolCall, Verdict, approval::Approval, hook,
    message::ToolFailure,
};
use agentix_mcp::{McpServer, McpTools};
use common::tool_results;
use futures::StreamExt;
use serde_json::json;

fn binary(variable: &str) -> PathBuf {
    std::env::var_os(variable).map(PathBuf::from).unwrap_or_else(|| {
        panic!("{variable} names the server's binary: run scripts/mcp-servers.sh")
    })
}

/// Which of server-everything's tools the agents take.
fn some_of_everything(server: McpServer) -> McpServer {
    server
        .allow("echo")
        .allow("get-sum")
        .allow("get-structured-content")
        .allow("trigger-long-running-operation")
}

/// A turn over server-everything's tools: an echo, a sum, structured content, a long-running
/// operation that reports its progress, and a sum of arguments the server refuses.
async fn exercise(everything: McpTools) {
    let mut names = everything.names();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "everything__echo",
            "everything__get-structured-content",
            "everything__get-sum",
            "everything__trigger-long-running-operation"
        ]
    );
    let model = ScriptedModel::new()
        .tool_call("everything__echo", json!({ "message": "hi" }))
        .tool_call("everything__get-sum", json!({ "a": 1, "b": 2 }))
        .tool_call("everything__get-structured-content", json!({ "location": "New York" }))
        .tool_call(
            "everything__trigger-long-running-operation",
            json!({ "duration": 1, "steps": 3 }),
        )
        .tool_call("everything__get-sum", json!({ "a": "one", "b": 2 }))
        .text("done");
    let agent = Agent::builder(model).tools(everything).build();
    let mut conversation = Conversation::new();
    let events: Vec<StreamEvent> = agent.turn(&mut conversation, "go").stream().collect().await;
    let results = tool_results(&conversation);
    assert_eq!(results[0].output, "Echo: hi");
    assert_eq!(results[1].output, "The sum of 1 and 2 is 3.");
    let structured: serde_json::Value = serde_json::from_str(&results[2].output).unwrap();
    assert_eq!(structured["temperature"], 33, "{structured}");
    assert!(results[..4].iter().all(|result| result.error.is_none()), "{results:?}");
    let progress = events.iter().filter(|e| matches!(e, StreamEvent::ToolProgress { .. }));
    assert_eq!(progress.count(), 3, "{events:?}");
    let Some(ToolFailure::Failed { message }) = &results[4].error else {
        panic!("{:?}", results[4])
    };
    // The server refuses the arguments with an error result: a failed call.
    assert!(message.contains("Invalid arguments for tool get-sum"), "{message}");
}

#[tokio::test]
#[ignore = "needs the npm servers: scripts/mcp-servers.sh"]
async fn server_everything_over_stdio_echoes_sums_structures_reports_progress_and_fails() {
    let server = McpServer::stdio("everything", binary("AGENTIX_MCP_EVERYTHING"));
    exercise(some_of_everything(server).connect().await.unwrap()).await;
}

/// Refuses a filesystem write outside `allowed/`.
#[hook(before_tool)]
async fn writes_only_in_allowed(call: &ToolCall) -> Verdict<BeforeTool> {
    let path = call.arguments.get("path").and_then(|path| path.as_str()).unwrap_or_default();
    let writes = call.name.ends_with("write_file") || call.name.ends_with("edit_file");
    if writes && !Path::new(path).components().any(|part| part.as_os_str() == "allowed") {
        Verdict::reject(format!("{path} is outside allowed/"))
    } else {
        Verdict::Continue
    }
}

#[tokio::test]
#[ignore = "needs the npm servers: scripts/mcp-servers.sh"]
async fn a_before_tool_policy_keeps_server_filesystem_from_writing_outside_a_folder() {
    let root = std::env::temp_dir().join(format!("agentix-mcp-fs-{}", std::process::id()));
    std::fs::create_dir_all(root.join("allowed")).unwrap();
    let root = root.canonicalize().unwrap();
    let files = McpServer::stdio("fs", binary("AGENTIX_MCP_FILESYSTEM"))
        .args([&root])
        .connect()
        .await
        .unwrap();
    assert!(files.names().iter().any(|name| name == "fs__write_file"), "{files:?}");

    let inside = root.join("allowed/note.txt");
    let outside = root.join("note.txt");
    let model = ScriptedModel::new()
        .tool_call("fs__write_file", json!({ "path": outside, "content": "no" }))
        .tool_call("fs__write_file", json!({ "path": inside, "content": "yes" }))
        .text("done");
    let agent = Agent::builder(model).tools(files).hook(writes_only_in_allowed).build();
    let mut conversation = Conversation::new();
    agent.run(&mut conversation, "write").await.unwrap();

    let results = tool_results(&conversation);
    assert!(
        matches!(&results[0].error, Some(ToolFailure::Rejected { by, .. }) if by == "writes_only_in_allowed"),
        "{:?}",
        results[0]
    );
    assert!(!outside.exists(), "the refused write happened");
    assert_eq!(std::fs::read_to_string(&inside).unwrap(), "yes");
    assert!(results[1].error.is_none(), "{:?}", results[1]);
    std::fs::remove_dir_all(&root).unwrap();
}

/// server-everything serving streamable HTTP on a free loopback port, killed when dropped.
struct HttpEverything {
    child: tokio::process::Child,
    url: String,
}

impl HttpEverything {
    async fn start() -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let mut child = tokio::process::Command::new(binary("AGENTIX_MCP_EVERYTHING"))
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        // Ready when it says it listens.
        let mut stderr = tokio::io::BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        let ready = async {
            use tokio::io::AsyncBufReadExt;
            loop {
                line.clear();
                assert!(stderr.read_line(&mut line).await.unwrap() > 0, "server-everything quit");
                if line.contains("listening") {
                    break;
                }
            }
        };
        tokio::time::timeout(std::time::Duration::from_secs(30), ready).await.expect("it listens");
        tokio::spawn(async move {
            use tokio::io::AsyncReadExt;
            let mut sink = Vec::new();
            let _ = stderr.read_to_end(&mut sink).await;
        });
        HttpEverything { child, url: format!("http://127.0.0.1:{port}/mcp") }
    }
}

#[tokio::test]
#[ignore = "needs the npm servers: scripts/mcp-servers.sh"]
async fn server_everything_over_streamable_http_with_a_bearer_and_a_header() {
    let mut server = HttpEverything::start().await;
    let everything =
        McpServer::http("everything", &server.url).bearer("a-token").header("x-agentix-test", "1");
    exercise(some_of_everything(everything).connect().await.unwrap()).await;
    server.child.kill().await.unwrap();
}

#[tokio::test]
async fn a_header_that_is_not_one_is_an_error_naming_it() {
    let error = McpServer::http("bad", "http://127.0.0.1:9/mcp")
        .header("not a header", "x")
        .connect()
        .await
        .unwrap_err();
    assert!(error.to_string().contains("the header name `not a header`"), "{error}");
}

#[tokio::test]
#[ignore = "needs the npm servers: scripts/mcp-servers.sh"]
async fn server_everything_killed_mid_call_fails_that_call_and_is_started_again_for_the_next() {
    let everything = McpServer::stdio("everything", binary("AGENTIX_MCP_EVERYTHING"))
        .allow("echo")
        .allow("trigger-long-running-operation")
        .connect()
        .await
        .unwrap();
    let pid = everything.process_id("everything").expect("a child process");
    // The first turn's call is killed; the second turn's runs on a server started again.
    let model = ScriptedModel::new()
        .tool_call(
            "everything__trigger-long-running-operation",
            json!({ "duration": 20, "steps": 5 }),
        )
        .text("it died")
        .tool_call("everything__echo", json!({ "message": "back" }))
        .text("it is back");
    let agent = Agent::builder(model).tools(everything).build();
    // Killed while its long operation runs.
    let killer = tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        let killed = std::process::Command::new("kill").args(["-9", &pid.to_string()]).status();
        assert!(killed.unwrap().success(), "kill -9 {pid}");
    });
    let mut conversation = Conversation::new();
    agent.run(&mut conversation, "go").await.unwrap();
    killer.await.unwrap();
    let results = tool_results(&conversation);
    let Some(ToolFailure::Failed { message }) = &results[0].error else {
        panic!("{:?}", results[0])
    };
    assert!(message.starts_with("the MCP server `everything` ("), "{message}");

    let answer = agent.run(&mut conversation, "again").await.unwrap();
    assert_eq!(answer.joined_text(), "it is back");
    let results = tool_results(&conversation);
    assert!(results[1].error.is_none(), "{:?}", results[1]);
    assert_eq!(results[1].output, "Echo: back");
}

/// Answers every question with a name.
struct Ada;

impl agentix::approval::Approver for Ada {
    async fn review(
        &self,
        _: &ToolCall,
        _: &agentix::verdict::Escalation,
        _: &agentix::Turn,
    ) -> Approval {
        Approval::Reject("nothing is escalated here".to_owned())
    }

    async fn review_question(
        &self,
        _: &ToolCall,
        question: &agentix::approval::Question,
        _: &agentix::Turn,
    ) -> Approval {
        assert_eq!(question.asked_by, "the MCP server `everything`");
        assert_eq!(question.schema["required"], json!(["name"]));
        Approval::Edit(ToolCall::new("", "", json!({ "name": "Ada", "check": true })))
    }
}

#[tokio::test]
#[ignore = "needs the npm servers: scripts/mcp-servers.sh"]
async fn server_everything_reports_progress_and_asks_the_approver_its_question() {
    let everything = McpServer::stdio("everything", binary("AGENTIX_MCP_EVERYTHING"))
        .allow("trigger-long-running-operation")
        .allow("trigger-elicitation-request")
        .connect()
        .await
        .unwrap();
    // The question tool is registered once the client has said it answers questions: the
    // server's `tools/list_changed` brings it to the list.
    let asking = "everything__trigger-elicitation-request";
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    while !everything.names().iter().any(|name| name == asking) {
        assert!(tokio::time::Instant::now() < deadline, "never listed: {everything:?}");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let model = ScriptedModel::new()
        .tool_call(
            "everything__trigger-long-running-operation",
            json!({ "duration": 1, "steps": 3 }),
        )
        .tool_call(asking, json!({}))
        .text("done");
    let agent = Agent::builder(model).tools(everything).approver(Ada).build();
    let mut conversation = Conversation::new();
    let events: Vec<StreamEvent> = agent.turn(&mut conversation, "go").stream().collect().await;
    let progress: Vec<(f64, Option<f64>)> = events
        .iter()
        .filter_map(|event| match event {
            StreamEvent::ToolProgress { progress, .. } => Some((progress.progress, progress.total)),
            _ => None,
        })
        .collect();
    assert_eq!(progress, [(1.0, Some(3.0)), (2.0, Some(3.0)), (3.0, Some(3.0))]);
    let results = tool_results(&conversation);
    assert!(results[0].error.is_none(), "{:?}", results[0]);
    assert!(results[1].output.contains("- Name: Ada"), "{}", results[1].output);
    assert!(results[1].output.contains("- Agreed to terms: true"), "{}", results[1].output);
}
