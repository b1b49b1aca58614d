//! The durable tests' MCP turn: a desk server whose `stamp` has an effect, a model that calls
//! it, a hook that writes the tools each request offers — their effects in files the processes
//! share.

use std::path::PathBuf;
use std::sync::Arc;

use agentix::event::BeforeModel;
use agentix::{AssistantMessage, ToolCall, Turn, Verdict, model::ModelRequest};
use agentix_mcp::IDEMPOTENCY_KEY;
use agentix_test_support::{append, die, lines};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler};
use serde_json::{Value, json};

/// A desk with a stamp: `stamp` applies each idempotency key once (`dir/applied`), counting
/// every attempt (`dir/attempts`); it offers `extra` too once `dir/extra` exists.
#[derive(Clone)]
pub struct Desk {
    pub dir: PathBuf,
    /// Whether the process dies in `stamp`, after its effect.
    pub die_after_effect: bool,
}

fn tool(name: &'static str) -> Tool {
    let Value::Object(schema) = json!({ "type": "object" }) else { unreachable!() };
    Tool::new(name, format!("the {name} tool"), Arc::new(schema))
}

impl ServerHandler for Desk {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let mut tools = vec![tool("stamp")];
        if self.dir.join("extra").exists() {
            tools.push(tool("extra"));
        }
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let key = context.meta.0.0.get(IDEMPOTENCY_KEY).and_then(Value::as_str).unwrap_or("");
        append(&self.dir.join("attempts"), key);
        if !lines(&self.dir.join("applied")).iter().any(|applied| applied == key) {
            append(&self.dir.join("applied"), key);
        }
        if self.die_after_effect {
            die();
        }
        let text = format!("{} stamped {key}", request.name);
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
    }
}

/// The model: calls the stamp until it has its result, then answers; each call counted in
/// `calls`. It dies inside call `die_in_call` (from 1), after a pause, as a real call takes a
/// while.
pub struct Clerk {
    pub calls: PathBuf,
    pub die_in_call: Option<usize>,
}

impl agentix::Model for Clerk {
    async fn complete(
        &self,
        request: &ModelRequest,
    ) -> Result<agentix::model::ModelResponse, agentix::model::ModelError> {
        append(&self.calls, "call");
        if self.die_in_call == Some(lines(&self.calls).len()) {
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
            die();
        }
        let stamped = request.messages.iter().any(|message| {
            message.content.iter().any(|part| matches!(part, agentix::Part::ToolResult(_)))
        });
        let answer = if stamped {
            AssistantMessage::text("Stamped.")
        } else {
            let call = ToolCall::new("call_1", "desk__stamp", json!({}));
            AssistantMessage::default().with_tool_call(call)
        };
        Ok(answer.into())
    }
}

/// Writes the tools each request offers, a line a request.
pub struct Offered(pub PathBuf);

impl agentix::on::BeforeModel for Offered {
    async fn before_model(&self, request: &mut ModelRequest, _: &mut Turn) -> Verdict<BeforeModel> {
        let names: Vec<&str> = request.tools.iter().map(|spec| spec.name.as_str()).collect();
        append(&self.0, &names.join(","));
        Verdict::Continue
    }
}
