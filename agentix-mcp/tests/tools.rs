//! An MCP server's tools in an agent's turn, over an in-process rmcp server on an in-memory
//! pipe: listed, named, filtered, called, their results read, and every tool hook firing on
//! their calls as on a native tool's.

mod common;

use std::sync::{Arc, Mutex};

use agentix::event::{AfterTool, BeforeTool, ToolError};
use agentix::{
    Agent, Conversation, Entry, ScriptedModel, ToolCall, ToolResult, Turn, Verdict, hook,
    message::ToolFailure, tool::NextTool,
};
use agentix_mcp::{McpError, McpServer, McpTools};
use common::{serve_in_memory, tool_results};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler};
use serde_json::{Value, json};

/// What the test servers are: tool servers, nothing else.
fn tools_only() -> ServerConfig {
    ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
}

/// A small MCP server: `echo`, `add` (structured), `fails` (a tool error), `picture`.
#[derive(Clone)]
struct Toys;

fn schema(properties: Value) -> Arc<serde_json::Map<String, Value>> {
    let Value::Object(schema) = json!({ "type": "object", "properties": properties }) else {
        unreachable!()
    };
    Arc::new(schema)
}

impl ServerHandler for Toys {
    fn get_info(&self) -> ServerConfig {
        tools_only().with_server_info(Implementation::new("toys", "1.0.0"))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(vec![
            Tool::new("echo", "Says it back.", schema(json!({ "message": { "type": "string" } }))),
            Tool::new("add", "Adds two numbers.", schema(json!({ "a": {}, "b": {} }))),
            Tool::new("fails", "Always fails.", schema(json!({}))),
            Tool::new("picture", "A caption and a picture.", schema(json!({}))),
            Tool::new("meta", "Says what `_meta` it got.", schema(json!({}))),
        ]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let argument = |name: &str| request.arguments.as_ref().and_then(|a| a.get(name)).cloned();
        let result = match &*request.name {
            "echo" => CallToolResult::success(vec![ContentBlock::text(format!(
                "Echo: {}",
                argument("message").and_then(|m| m.as_str().map(str::to_owned)).unwrap_or_default()
            ))]),
            "add" => {
                let number = |name| argument(name).and_then(|n: Value| n.as_i64()).unwrap_or(0);
                CallToolResult::structured(json!({ "sum": number("a") + number("b") }))
            }
            "fails" => CallToolResult::error(vec![ContentBlock::text("the disk is full")]),
            "picture" => CallToolResult::success(vec![
                ContentBlock::text("a red square"),
                ContentBlock::image("aGVsbG8=", "image/png"),
            ]),
            "meta" => CallToolResult::structured(Value::Object(context.meta.0.0.clone())),
            other => return Err(ErrorData::invalid_params(format!("no tool {other}"), None)),
        };
        Ok(result.into())
    }
}

/// The toy server's tools, as an agent's tool set, over an in-memory pipe.
async fn toys(server: McpServer) -> Result<McpTools, McpError> {
    let (ours, _served) = serve_in_memory(Toys);
    server.connect_with(ours, "an in-memory pipe").await
}

#[tokio::test]
async fn the_servers_tools_are_listed_under_its_prefix_and_filtered_by_globs() {
    let all = toys(McpServer::named("toys")).await.unwrap();
    assert_eq!(
        all.names(),
        ["toys__echo", "toys__add", "toys__fails", "toys__picture", "toys__meta"]
    );

    let some = toys(McpServer::named("toys").prefix("t").allow("*e*").deny("fails")).await.unwrap();
    assert_eq!(some.names(), ["t__echo", "t__picture", "t__meta"]);

    let bare = toys(McpServer::named("toys").prefix("")).await.unwrap();
    assert_eq!(bare.names()[0], "echo");
}

#[tokio::test]
async fn a_pattern_that_is_none_fails_before_the_server_starts() {
    let error = McpServer::stdio("never", "/no/such/server")
        .allow("read file")
        .connect()
        .await
        .unwrap_err();
    assert!(matches!(error, McpError::Pattern(_)), "{error}");
    assert!(error.to_string().contains("`read file` is no tool pattern"), "{error}");
}

#[tokio::test]
async fn two_servers_offering_one_name_are_refused_naming_both() {
    let first = toys(McpServer::named("a").prefix("same")).await.unwrap();
    let second = toys(McpServer::named("b").prefix("same")).await.unwrap();
    let error = first.join(second).unwrap_err();
    assert!(matches!(&error, McpError::Collision { name, .. } if name == "same__echo"), "{error}");
    let message = error.to_string();
    assert!(message.contains("`a`") && message.contains("`b`"), "{message}");
}

#[tokio::test]
async fn a_server_that_cannot_start_is_an_error_naming_it_and_its_command() {
    let error = McpServer::stdio("ghost", "/no/such/mcp-server")
        .args(["--stdio"])
        .connect()
        .await
        .unwrap_err();
    assert!(matches!(&error, McpError::Start { server, .. } if server == "ghost"), "{error}");
    assert!(error.to_string().contains("/no/such/mcp-server --stdio"), "{error}");
}

#[tokio::test]
async fn a_server_that_exits_before_initializing_is_an_error_with_its_stderr() {
    let error = McpServer::stdio("quits", "sh")
        .args(["-c", "echo 'missing API key' >&2; exit 3"])
        .connect()
        .await
        .unwrap_err();
    let McpError::Initialize { server, stderr, .. } = &error else { panic!("{error:?}") };
    assert_eq!(server, "quits");
    assert!(stderr.contains("missing API key"), "{error}");
    assert!(error.to_string().contains("its stderr:\nmissing API key"), "{error}");
}

/// What the tool hooks saw, in order.
type Seen = Arc<Mutex<Vec<String>>>;

fn seen() -> Seen {
    Arc::default()
}

struct Wrap(Seen);

#[hook]
impl agentix::Hook for Wrap {
    async fn wrap_tool(&self, call: &ToolCall, _turn: &Turn, next: &impl NextTool) -> ToolResult {
        self.0.lock().unwrap().push(format!("wrap_tool in {}", call.name));
        let result = next.call(call).await;
        self.0.lock().unwrap().push(format!("wrap_tool out {}", result.output));
        result
    }

    async fn before_tool(&self, call: &mut ToolCall, _turn: &mut Turn) -> Verdict<BeforeTool> {
        self.0.lock().unwrap().push(format!("before_tool {} {}", call.name, call.arguments));
        Verdict::Continue
    }

    async fn after_tool(&self, result: &mut ToolResult, _turn: &mut Turn) -> Verdict<AfterTool> {
        self.0.lock().unwrap().push(format!("after_tool {}", result.output));
        Verdict::Continue
    }

    async fn tool_error(&self, result: &mut ToolResult, _turn: &mut Turn) -> Verdict<ToolError> {
        self.0.lock().unwrap().push(format!("tool_error {:?}", result.error));
        Verdict::Continue
    }
}

#[tokio::test]
async fn every_tool_hook_sees_an_mcp_call_as_a_native_one() {
    let trace = seen();
    let model = ScriptedModel::new()
        .tool_call("toys__echo", json!({ "message": "hi" }))
        .tool_call("toys__fails", json!({}))
        .text("done");
    let agent = Agent::builder(model)
        .tools(toys(McpServer::named("toys")).await.unwrap())
        .hook(Wrap(trace.clone()))
        .build();
    let mut conversation = Conversation::new();
    let answer = agent.run(&mut conversation, "go").await.unwrap();
    assert_eq!(answer.joined_text(), "done");
    let failed = ToolFailure::Failed { message: "the disk is full".into() };
    assert_eq!(
        *trace.lock().unwrap(),
        [
            r#"before_tool toys__echo {"message":"hi"}"#.to_owned(),
            "wrap_tool in toys__echo".into(),
            "wrap_tool out Echo: hi".into(),
            "after_tool Echo: hi".into(),
            "before_tool toys__fails {}".into(),
            "wrap_tool in toys__fails".into(),
            format!(
                "wrap_tool out {}",
                ToolResult::failure(&ToolCall::new("x", "y", json!({})), failed.clone()).output
            ),
            format!("tool_error {:?}", Some(failed)),
        ]
    );
    conversation.validate().unwrap();
}

#[tokio::test]
async fn results_read_as_text_structured_json_or_described_content() {
    let model = ScriptedModel::new()
        .tool_call("toys__add", json!({ "a": 2, "b": 3 }))
        .tool_call("toys__picture", json!({}))
        .tool_call("toys__echo", json!(["not", "an", "object"]))
        .text("done");
    let agent = Agent::builder(model).tools(toys(McpServer::named("toys")).await.unwrap()).build();
    let mut conversation = Conversation::new();
    agent.run(&mut conversation, "go").await.unwrap();
    let results = tool_results(&conversation);
    assert_eq!(results[0].output, r#"{"sum":5}"#);
    assert_eq!(results[1].output, "a red square\n[image: image/png, 8 bytes of base64]");
    assert!(
        matches!(&results[2].error, Some(ToolFailure::InvalidArguments { message }) if message.contains("not an object")),
        "{:?}",
        results[2]
    );
}

#[cfg(feature = "http")]
#[tokio::test]
async fn an_http_server_gets_the_bearer_and_headers_and_its_refusal_is_an_error_naming_its_url() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    // A server that reads the first request's head and refuses it.
    let head = tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut head = Vec::new();
        let mut byte = [0; 1];
        while !head.ends_with(b"\r\n\r\n") && socket.read(&mut byte).await.unwrap() == 1 {
            head.push(byte[0]);
        }
        let refusal = "HTTP/1.1 503 Service Unavailable\r\ncontent-length: 4\r\nconnection: close\r\n\r\nbusy";
        socket.write_all(refusal.as_bytes()).await.unwrap();
        String::from_utf8_lossy(&head).to_lowercase()
    });
    let error = McpServer::http("remote", &url)
        .bearer("a-token")
        .header("x-tenant", "7")
        .connect()
        .await
        .unwrap_err();
    let head = head.await.unwrap();
    assert!(head.starts_with("post /mcp "), "{head}");
    assert!(head.contains("authorization: bearer a-token"), "{head}");
    assert!(head.contains("x-tenant: 7"), "{head}");
    assert!(
        matches!(&error, McpError::Initialize { server, target, .. } if server == "remote" && *target == url),
        "{error}"
    );
}

/// Refuses every call of the `toys` server's tools but `echo`: a policy over run-time tools,
/// named by a glob checked when it compiles.
#[hook(before_tool, tools = "toys__*")]
async fn only_echo(call: &ToolCall) -> Verdict<BeforeTool> {
    if call.name == "toys__echo" { Verdict::Continue } else { Verdict::reject("only echo") }
}

#[tokio::test]
async fn a_hook_on_a_tool_pattern_runs_on_the_calls_it_names_and_no_others() {
    let model = ScriptedModel::new()
        .tool_call("toys__echo", json!({ "message": "hi" }))
        .tool_call("toys__add", json!({ "a": 1, "b": 1 }))
        .tool_call("other__add", json!({ "a": 1, "b": 1 }))
        .text("done");
    let ours = toys(McpServer::named("toys")).await.unwrap();
    let other = toys(McpServer::named("other")).await.unwrap();
    let agent = Agent::builder(model).tools(ours.join(other).unwrap()).hook(only_echo).build();
    let mut conversation = Conversation::new();
    agent.run(&mut conversation, "go").await.unwrap();
    let errors: Vec<Option<ToolFailure>> =
        tool_results(&conversation).into_iter().map(|result| result.error.clone()).collect();
    assert_eq!(errors[0], None);
    assert_eq!(
        errors[1],
        Some(ToolFailure::Rejected { by: "only_echo".into(), reason: "only echo".into() })
    );
    assert_eq!(errors[2], None, "the pattern names the toys server's tools only");
}

/// A server whose one tool never answers, and says when it is told to stop.
#[derive(Clone)]
struct Stuck(Arc<tokio::sync::Notify>);

impl ServerHandler for Stuck {
    fn get_info(&self) -> ServerConfig {
        tools_only()
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(vec![Tool::new("wait", "Waits.", schema(json!({})))]))
    }

    async fn call_tool(
        &self,
        _request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        context.ct.cancelled().await;
        self.0.notify_one();
        Err(ErrorData::internal_error("cancelled", None))
    }
}

#[tokio::test]
async fn a_call_past_the_tool_timeout_is_cancelled_on_the_server() {
    let cancelled = Arc::new(tokio::sync::Notify::new());
    let (ours, _served) = serve_in_memory(Stuck(cancelled.clone()));
    let stuck = McpServer::named("stuck").connect_with(ours, "a pipe").await.unwrap();
    let model = ScriptedModel::new().tool_call("stuck__wait", json!({})).text("done");
    let agent = Agent::builder(model).tools(stuck).build();
    let config = agentix::Config {
        tool_timeout: Some(std::time::Duration::from_millis(100)),
        ..agentix::Config::default()
    };
    let mut conversation = Conversation::with_config(config);
    agent.run(&mut conversation, "go").await.unwrap();
    let timed_out = conversation.log().iter().any(|entry| {
        matches!(entry, Entry::ToolResults { results, .. }
            if matches!(results[0].error, Some(ToolFailure::TimedOut { .. })))
    });
    assert!(timed_out, "{:?}", conversation.log());
    // The dropped call told the server, which stopped.
    tokio::time::timeout(std::time::Duration::from_secs(5), cancelled.notified())
        .await
        .expect("the server was told the call was cancelled");
}

/// A server whose `die` tool ends it mid-call; `echo` answers.
#[derive(Clone)]
struct Dies(Arc<tokio::sync::Notify>);

impl ServerHandler for Dies {
    fn get_info(&self) -> ServerConfig {
        tools_only()
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(vec![
            Tool::new("die", "Ends the server.", schema(json!({}))),
            Tool::new("echo", "Says it back.", schema(json!({}))),
        ]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if &*request.name == "die" {
            self.0.notify_one();
            std::future::pending::<()>().await;
        }
        Ok(CallToolResult::success(vec![ContentBlock::text("still here")]).into())
    }
}

#[tokio::test]
async fn a_server_that_dies_mid_call_fails_the_call_naming_it_and_a_given_pipe_is_not_made_again() {
    let dying = Arc::new(tokio::sync::Notify::new());
    let (ours, running) = serve_in_memory(Dies(dying.clone()));
    tokio::spawn(async move {
        dying.notified().await;
        running.abort();
    });
    let tools = McpServer::named("mortal").connect_with(ours, "a pipe").await.unwrap();
    let model = ScriptedModel::new()
        .tool_call("mortal__die", json!({}))
        .tool_call("mortal__echo", json!({}))
        .text("done");
    let agent = Agent::builder(model).tools(tools).build();
    let mut conversation = Conversation::new();
    agent.run(&mut conversation, "go").await.unwrap();
    let failures: Vec<String> = tool_results(&conversation)
        .into_iter()
        .map(|result| match &result.error {
            Some(ToolFailure::Failed { message }) => message.clone(),
            other => format!("{other:?}"),
        })
        .collect();
    assert!(
        failures[0].starts_with("the MCP server `mortal` (a pipe) failed the call"),
        "{failures:?}"
    );
    assert!(failures[1].contains("the MCP server `mortal` (a pipe) is gone"), "{failures:?}");
    assert!(failures[1].contains("not made again"), "{failures:?}");
}

#[tokio::test]
async fn a_call_carries_its_idempotency_key_in_meta() {
    let model = ScriptedModel::new().tool_call("toys__meta", json!({})).text("done");
    let agent = Agent::builder(model).tools(toys(McpServer::named("toys")).await.unwrap()).build();
    let mut conversation = Conversation::new().with_id("chat-7");
    agent.run(&mut conversation, "go").await.unwrap();
    let (call_id, output) = conversation
        .log()
        .iter()
        .find_map(|entry| match entry {
            Entry::ToolResults { results, .. } => {
                Some((results[0].call_id.clone(), results[0].output.clone()))
            }
            _ => None,
        })
        .unwrap();
    let meta: Value = serde_json::from_str(&output).unwrap();
    let key = meta[agentix_mcp::IDEMPOTENCY_KEY].as_str().unwrap_or_default();
    assert!(key.starts_with("chat-7/") && key.ends_with(&format!("/{call_id}")), "{meta}");
}

/// Records which server each call's tool comes from, as the turn says.
struct Origins(Seen);

#[hook]
impl agentix::Hook for Origins {
    async fn before_tool(&self, call: &mut ToolCall, turn: &mut Turn) -> Verdict<BeforeTool> {
        let origin = turn
            .tool_origin()
            .map(|origin| format!("{} {} {}", origin.kind, origin.name, origin.address));
        self.0.lock().unwrap().push(format!(
            "{}: {}",
            call.name,
            origin.unwrap_or_else(|| "native".into())
        ));
        Verdict::Continue
    }
}

#[tokio::test]
async fn hooks_read_the_server_a_call_goes_to_on_the_turn() {
    let trace = seen();
    let model = ScriptedModel::new()
        .tool_call("toys__echo", json!({ "message": "hi" }))
        .tool_call("other__add", json!({ "a": 1, "b": 2 }))
        .text("done");
    let ours = toys(McpServer::named("toys")).await.unwrap();
    let other = toys(McpServer::named("other")).await.unwrap();
    let agent =
        Agent::builder(model).tools(ours.join(other).unwrap()).hook(Origins(trace.clone())).build();
    agent.run(&mut Conversation::new(), "go").await.unwrap();
    assert_eq!(
        *trace.lock().unwrap(),
        ["toys__echo: mcp toys an in-memory pipe", "other__add: mcp other an in-memory pipe"]
    );
}

/// The toy server's `echo` and `fails`, as native tools: what an MCP call is compared with.
mod native {
    #[agentix::tool(description = "Says it back.")]
    pub async fn echo(message: String) -> Result<String, std::convert::Infallible> {
        Ok(format!("Echo: {message}"))
    }

    #[agentix::tool(description = "Always fails.")]
    pub async fn fails() -> Result<String, String> {
        Err("the disk is full".to_owned())
    }
}

/// What the model reads of `echo("hi")` then `fails()`, called natively (`toys__echo` and
/// `toys__fails` by name) and over MCP, each agent with the hook `$hook`.
macro_rules! both_ways {
    ($hook:expr) => {{
        let script = |echo: &str, fails: &str| {
            ScriptedModel::new()
                .tool_call(echo, json!({ "message": "hi" }))
                .tool_call(fails, json!({}))
                .text("done")
        };
        let native = Agent::builder(script("echo", "fails"))
            .tool(native::echo)
            .tool(native::fails)
            .hook($hook)
            .build();
        let mut conversation = Conversation::new();
        native.run(&mut conversation, "go").await.unwrap();
        let natively: Vec<String> =
            tool_results(&conversation).iter().map(|result| result.output.clone()).collect();
        let mcp = Agent::builder(script("toys__echo", "toys__fails"))
            .tools(toys(McpServer::named("toys")).await.unwrap())
            .hook($hook)
            .build();
        let mut conversation = Conversation::new();
        mcp.run(&mut conversation, "go").await.unwrap();
        let over_mcp: Vec<String> =
            tool_results(&conversation).iter().map(|result| result.output.clone()).collect();
        (natively, over_mcp)
    }};
}

#[hook(before_tool)]
async fn shout_arguments(call: &mut ToolCall) {
    if let Some(message) = call.arguments.get_mut("message") {
        *message = json!(message.as_str().unwrap_or_default().to_uppercase());
    }
}

#[tokio::test]
async fn a_before_tool_hook_edits_an_mcp_calls_arguments_as_a_native_ones() {
    let (natively, over_mcp) = both_ways!(shout_arguments);
    assert_eq!(natively[0], "Echo: HI");
    assert_eq!(over_mcp[0], natively[0], "the server got the edited arguments");
}

#[hook(wrap_tool)]
async fn bracket(call: &ToolCall, next: &impl NextTool) -> ToolResult {
    let mut result = next.call(call).await;
    result.output = format!("[{}]", result.output);
    result
}

#[tokio::test]
async fn a_wrap_tool_hook_wraps_an_mcp_call_as_a_native_one() {
    let (natively, over_mcp) = both_ways!(bracket);
    assert_eq!(natively[0], "[Echo: hi]");
    assert_eq!(over_mcp[0], natively[0]);
    assert!(
        over_mcp[1].starts_with('[') && over_mcp[1].contains("the disk is full"),
        "{over_mcp:?}"
    );
}

#[hook(after_tool)]
async fn checked(result: &mut ToolResult) {
    result.output.push_str(" (checked)");
}

#[tokio::test]
async fn an_after_tool_hook_sees_an_mcp_calls_result_as_a_native_ones() {
    let (natively, over_mcp) = both_ways!(checked);
    assert_eq!(natively[0], "Echo: hi (checked)");
    assert_eq!(over_mcp[0], natively[0]);
    assert!(!over_mcp[1].contains("(checked)"), "a failed call is not after_tool's: {over_mcp:?}");
}

#[hook(tool_error)]
async fn advise(result: &mut ToolResult) {
    result.output.push_str(" (try a smaller file)");
}

#[tokio::test]
async fn a_tool_error_hook_sees_an_mcp_calls_failure_as_a_native_ones() {
    let (natively, over_mcp) = both_ways!(advise);
    assert!(natively[1].ends_with("the disk is full (try a smaller file)"), "{natively:?}");
    assert!(over_mcp[1].ends_with("the disk is full (try a smaller file)"), "{over_mcp:?}");
    assert_eq!(over_mcp[0], natively[0], "a call that succeeded is not tool_error's");
}
