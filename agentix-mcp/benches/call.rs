#![allow(missing_docs)] // criterion_group! generates an undocumented `pub fn`.
//! What an MCP tool costs over a native one: the same `#[tool]` (`add`) called through an
//! agent's tool hooks (`Agent::call_tool`) natively, and as an MCP server's tool — agentix
//! serving it (`McpService`), agentix's client calling it — over an in-memory pipe and over
//! streamable HTTP on loopback; and a whole model → tool → model turn, natively and over
//! loopback HTTP. `cargo bench -p agentix-mcp --bench call`; `cargo test --benches` runs each
//! once and checks each variant answers as the native one does.

use std::hint::black_box;

use agentix::{
    Agent, AssistantMessage, Conversation, Model, ToolCall, ToolSet,
    model::{ModelError, ModelRequest, ModelResponse},
};
use agentix_mcp::{McpServer, McpService, McpTools, NoModel};
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;

#[agentix::tool(description = "Adds two numbers.")]
async fn add(a: i64, b: i64) -> Result<i64, std::convert::Infallible> {
    Ok(a + b)
}

/// Calls the named `add` until it has its result, then answers with it.
struct Adder(&'static str);

impl Model for Adder {
    async fn complete(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        let result = request.messages.iter().flat_map(|message| &message.content).find_map(
            |part| match part {
                agentix::Part::ToolResult(result) => Some(result.output.clone()),
                _ => None,
            },
        );
        let answer = match result {
            Some(sum) => AssistantMessage::text(sum),
            None => {
                let call = ToolCall::new("call_1", self.0, json!({ "a": 2, "b": 3 }));
                AssistantMessage::default().with_tool_call(call)
            }
        };
        Ok(answer.into())
    }
}

fn served() -> McpService<impl agentix_mcp::ServesTools> {
    McpService::new(Agent::builder(NoModel).tool(add).build()).named("math")
}

async fn over_pipe() -> McpTools {
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    tokio::spawn(served().serve_with(theirs));
    McpServer::named("math").connect_with(ours, "an in-memory pipe").await.unwrap()
}

async fn over_http() -> McpTools {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, served().router()).await.unwrap() });
    McpServer::http("math", url).connect().await.unwrap()
}

fn calls(c: &mut Criterion) {
    let runtime =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let native = Agent::builder(NoModel).tool(add).build();
    let pipe = Agent::builder(NoModel).tools(runtime.block_on(over_pipe())).build();
    let http = Agent::builder(NoModel).tools(runtime.block_on(over_http())).build();
    let call = |name: &str| ToolCall::new("1", name, json!({ "a": 2, "b": 3 }));
    for (agent_output, name) in [
        (runtime.block_on(native.call_tool(call("add"))), "native"),
        (runtime.block_on(pipe.call_tool(call("math__add"))), "pipe"),
        (runtime.block_on(http.call_tool(call("math__add"))), "http"),
    ] {
        assert_eq!(agent_output.unwrap().output, "5", "{name}");
    }

    let mut group = c.benchmark_group("tool call");
    group.bench_function("native #[tool]", |b| {
        b.iter(|| runtime.block_on(native.call_tool(black_box(call("add")))).unwrap())
    });
    group.bench_function("MCP, in-memory pipe", |b| {
        b.iter(|| runtime.block_on(pipe.call_tool(black_box(call("math__add")))).unwrap())
    });
    group.bench_function("MCP, streamable HTTP on loopback", |b| {
        b.iter(|| runtime.block_on(http.call_tool(black_box(call("math__add")))).unwrap())
    });
    group.finish();

    let native_turn = Agent::builder(Adder("add")).tool(add).build();
    let http_turn = Agent::builder(Adder("math__add")).tools(runtime.block_on(over_http())).build();
    let mut group = c.benchmark_group("turn, model -> tool -> model");
    group.bench_function("native #[tool]", |b| b.iter(|| turn(&runtime, &native_turn)));
    group.bench_function("MCP, streamable HTTP on loopback", |b| {
        b.iter(|| turn(&runtime, &http_turn))
    });
    group.finish();
}

/// One turn, checked.
fn turn<T: ToolSet>(runtime: &tokio::runtime::Runtime, agent: &Agent<Adder, T>) {
    let mut conversation = Conversation::new();
    let answer = runtime.block_on(agent.run(&mut conversation, "2 + 3?")).unwrap();
    assert_eq!(answer.joined_text(), "5");
}

criterion_group!(benches, calls);
criterion_main!(benches);
