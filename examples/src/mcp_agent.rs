//! An MCP server's tools under an agent's typed hooks. By default the server runs in this
//! process: a notes service — an agentix agent's own `#[tool]`s behind its own policy hook —
//! served over MCP on an in-memory pipe. The agent reaches it as any MCP server, as
//! `notes__*` tools: a hook on the pattern `notes__*` reads which server each call goes to,
//! and a hook on `*delete*` keeps the agent from deleting anything, wherever the tool lives.
//!
//! With `--server "COMMAND ARGS…"` it starts that MCP server over stdio instead (for example
//! `npx -y @modelcontextprotocol/server-everything`), lists its tools, and calls its `echo`
//! if it has one.

use std::collections::BTreeMap;
use std::sync::Mutex;

use agentix::event::BeforeTool;
use agentix::prelude::*;
use agentix::{Conversation, Outcome};
use agentix_mcp::{McpServer, McpService, McpTools, NoModel};
use serde_json::json;

use crate::trace;

/// The notes the service keeps, by title.
static NOTES: Mutex<BTreeMap<String, String>> = Mutex::new(BTreeMap::new());

/// Keeps a note under a title, replacing one of that title.
#[tool]
pub async fn add_note(
    /// The note's title.
    title: String,
    /// What it says.
    text: String,
) -> Result<String, String> {
    NOTES.lock().map_err(|e| e.to_string())?.insert(title.clone(), text);
    Ok(format!("kept \"{title}\""))
}

/// Reads the note of a title.
#[tool(idempotent)]
pub async fn read_note(
    /// The note's title.
    title: String,
) -> Result<String, String> {
    let notes = NOTES.lock().map_err(|e| e.to_string())?;
    notes.get(&title).cloned().ok_or_else(|| format!("no note is titled \"{title}\""))
}

/// Deletes the note of a title.
#[tool]
pub async fn delete_note(
    /// The note's title.
    title: String,
) -> Result<String, String> {
    NOTES.lock().map_err(|e| e.to_string())?.remove(&title);
    Ok(format!("deleted \"{title}\""))
}

/// The service's own policy, on its side of MCP: a note's title is one line.
#[hook(before_tool)]
async fn one_line_titles(call: &ToolCall) -> Verdict<BeforeTool> {
    match call.arguments["title"].as_str() {
        Some(title) if title.contains('\n') => Verdict::reject("a title is one line"),
        _ => Verdict::Continue,
    }
}

/// Reads, on the turn, which server a call of a `notes__` tool goes to.
#[hook(before_tool, tools = "notes__*")]
async fn which_server(call: &ToolCall, turn: &mut Turn) -> Verdict<BeforeTool> {
    if let Some(origin) = turn.tool_origin() {
        println!(
            "  `{}` goes to the {} server `{}` ({})",
            call.name, origin.kind, origin.name, origin.address
        );
    }
    Verdict::Continue
}

/// The agent deletes nothing, whichever server offers to.
#[hook(before_tool, tools = "*delete*")]
async fn never_delete(_call: &ToolCall) -> Verdict<BeforeTool> {
    Verdict::reject("this agent never deletes anything")
}

/// The notes service: its tools and its own policy hook, as an MCP server.
pub fn notes_service() -> McpService<impl agentix_mcp::ServesTools> {
    let service = Agent::builder(NoModel)
        .tool(add_note)
        .tool(read_note)
        .tool(delete_note)
        .hook(one_line_titles)
        .build();
    McpService::new(service).named("notes")
}

/// The notes service, served over MCP on one end of an in-memory pipe; the other end, reached
/// as the MCP server `notes`.
pub async fn notes_server() -> Result<McpTools, agentix_mcp::McpError> {
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    tokio::spawn(notes_service().serve_with(theirs));
    McpServer::named("notes").connect_with(ours, "an in-process notes service").await
}

/// The model's script for the notes: keep one, read it, try to delete it, answer.
fn notes_model() -> ScriptedModel {
    ScriptedModel::new()
        .tool_call("notes__add_note", json!({ "title": "groceries", "text": "milk, eggs" }))
        .tool_call("notes__read_note", json!({ "title": "groceries" }))
        .tool_call("notes__delete_note", json!({ "title": "groceries" }))
        .text("Your grocery note says: milk, eggs. I kept it.")
}

/// Runs the example over the in-process notes service, or over the MCP server `server` (a
/// command line) if one is given; what it prints goes to `out`. The turn's outcome and the
/// conversation, for the tests.
pub async fn run(
    server: Option<&str>,
    out: &(dyn Fn(&str) + Sync),
) -> Result<(Outcome, Conversation), agentix_mcp::McpError> {
    let (tools, model) = match server {
        None => {
            out("MCP server: the in-process notes service");
            (notes_server().await?, notes_model())
        }
        Some(command) => {
            let mut words = command.split_whitespace();
            let program = words.next().unwrap_or_default();
            out(&format!("MCP server: `{command}` over stdio"));
            let tools = McpServer::stdio("server", program).args(words).connect().await?;
            let echo = tools.names().into_iter().find(|name| name.ends_with("__echo"));
            let model = match echo {
                Some(echo) => ScriptedModel::new()
                    .tool_call(echo.as_str(), json!({ "message": "hello from agentix" }))
                    .text("The server echoed."),
                None => ScriptedModel::new().text("The server has no echo tool."),
            };
            (tools, model)
        }
    };
    out(&format!("tools: {}", tools.names().join(", ")));
    let agent = Agent::builder(model).tools(tools).hook(which_server).hook(never_delete).build();
    let mut conversation = Conversation::new();
    let observer = trace::observer(out);
    let asked =
        if server.is_none() { "What is on my grocery note?" } else { "Say hello through it." };
    let outcome = agent.turn(&mut conversation, asked).observe(&observer).await;
    trace::outcome(out, &outcome);
    trace::log(out, &conversation);
    Ok((outcome, conversation))
}
