//! The tools of connected MCP servers as an agent's [`ToolSet`]: the agent's loop calls them,
//! so every tool hook sees their calls as it sees a native tool's.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use agentix::{ToolCall, ToolFailure, ToolOrigin, ToolResult, ToolSet, ToolSpec, Turn};
use rmcp::ServiceError;
use rmcp::model::{CallToolRequestParams, RequestMetaObject};

use crate::error::McpError;
use crate::result::output;
use crate::server::{McpServer, Opened, stderr_note};

/// The `_meta` key a tool call's idempotency key goes under
/// ([`Turn::idempotency_key`](agentix::Turn::idempotency_key)).
pub const IDEMPOTENCY_KEY: &str = "dev.agentix/idempotencyKey";

/// A connected server: its name, how it was reached (and how to reach it again), the running
/// client, and what its process wrote to its standard error.
pub(crate) struct Connection {
    pub(crate) name: String,
    pub(crate) target: String,
    /// The server as hooks read it on the turn.
    origin: Arc<ToolOrigin>,
    /// How to start it again, if it can be: not a transport given to `connect_with`.
    again: Option<McpServer>,
    open: tokio::sync::RwLock<Arc<Opened>>,
    /// Whether a call found the connection closed (the client may not have noticed yet).
    broken: AtomicBool,
}

impl Connection {
    /// The running client, made again once if the connection closed (a server that died): a
    /// call that was running when it died has failed already, and is not repeated.
    async fn current(&self) -> Result<Arc<Opened>, String> {
        let open = self.open.read().await.clone();
        if !self.broken.load(Ordering::Acquire) && !open.service.is_closed() {
            return Ok(open);
        }
        let Some(server) = &self.again else {
            return Err(
                "its connection closed, and a transport given to `connect_with` is not made again"
                    .to_owned(),
            );
        };
        let mut slot = self.open.write().await;
        if !self.broken.load(Ordering::Acquire) && !slot.service.is_closed() {
            return Ok(slot.clone());
        }
        let reopened = server.open().await.map_err(|error| {
            format!("its connection closed, and connecting again failed: {error}")
        })?;
        *slot = Arc::new(reopened);
        self.broken.store(false, Ordering::Release);
        Ok(slot.clone())
    }

    fn stderr(&self) -> Arc<Mutex<String>> {
        match self.open.try_read() {
            Ok(open) => Arc::clone(&open.stderr),
            Err(_) => Arc::default(),
        }
    }
}

/// One tool as the agent offers it: the name the model calls, the server's own name for it,
/// its spec, and the server it is on.
struct Offered {
    name: String,
    on_server: String,
    spec: ToolSpec,
    server: usize,
}

/// The tools of one or more connected MCP servers, as an agent's tool set
/// ([`AgentBuilder::tools`](agentix::AgentBuilder::tools)). Listed when connected.
pub struct McpTools {
    servers: Vec<Arc<Connection>>,
    tools: Vec<Offered>,
}

impl std::fmt::Debug for McpTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpTools")
            .field("servers", &self.servers.iter().map(|server| &server.name).collect::<Vec<_>>())
            .field("tools", &self.names().collect::<Vec<_>>())
            .finish()
    }
}

impl McpTools {
    /// Lists the server's tools, keeps those allowed and not denied, and names them;
    /// `again`: whether the server can be connected to again if its connection closes.
    pub(crate) async fn list(
        server: McpServer,
        opened: Opened,
        again: bool,
    ) -> Result<Self, McpError> {
        let connection = Connection {
            name: server.name.clone(),
            target: server.target(),
            origin: Arc::new(ToolOrigin::new("mcp", server.name.clone(), server.target())),
            again: again.then(|| server.clone()),
            open: tokio::sync::RwLock::new(Arc::new(opened)),
            broken: AtomicBool::new(false),
        };
        let allow = server.allow.into_iter().collect::<Result<Vec<_>, _>>()?;
        let deny = server.deny.into_iter().collect::<Result<Vec<_>, _>>()?;
        let service = Arc::clone(&*connection.open.read().await);
        let listed =
            service.service.list_all_tools().await.map_err(|error| McpError::ListTools {
                server: connection.name.clone(),
                target: connection.target.clone(),
                message: error.to_string(),
            })?;
        let prefix = server.prefix.unwrap_or_else(|| server.name.clone());
        let mut tools = McpTools { servers: vec![Arc::new(connection)], tools: Vec::new() };
        for tool in listed {
            let on_server = tool.name.to_string();
            let allowed = allow.is_empty() || allow.iter().any(|glob| glob.matches(&on_server));
            if !allowed || deny.iter().any(|glob| glob.matches(&on_server)) {
                continue;
            }
            let name = if prefix.is_empty() {
                on_server.clone()
            } else {
                format!("{prefix}__{on_server}")
            };
            let spec = ToolSpec {
                name: name.clone(),
                description: tool.description.as_deref().unwrap_or_default().to_owned(),
                parameters: serde_json::Value::Object((*tool.input_schema).clone()),
            };
            tools.offer(Offered { name, on_server, spec, server: 0 })?;
        }
        Ok(tools)
    }

    /// Adds a tool, refusing a second one of its name.
    fn offer(&mut self, tool: Offered) -> Result<(), McpError> {
        if let Some(first) = self.tools.iter().find(|offered| offered.name == tool.name) {
            return Err(McpError::Collision {
                name: tool.name.clone(),
                first: self.origin(first),
                second: self.origin(&tool),
            });
        }
        self.tools.push(tool);
        Ok(())
    }

    fn origin(&self, tool: &Offered) -> String {
        let server = &self.servers[tool.server];
        format!("`{}` of the MCP server `{}` ({})", tool.on_server, server.name, server.target)
    }

    /// These tools and `other`'s, as one set; a name both offer is refused.
    pub fn join(mut self, other: McpTools) -> Result<Self, McpError> {
        let base = self.servers.len();
        self.servers.extend(other.servers);
        for tool in other.tools {
            self.offer(Offered { server: tool.server + base, ..tool })?;
        }
        Ok(self)
    }

    /// The names the model calls the tools by.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.tools.iter().map(|tool| tool.name.as_str())
    }

    /// What the named server has written to its standard error (a child process's; empty for
    /// other transports).
    pub fn stderr(&self, server: &str) -> Option<String> {
        let server = self.servers.iter().find(|connection| connection.name == server)?;
        let stderr = server.stderr();
        let said = stderr.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clone();
        Some(said)
    }

    /// The process id of the named server, when it runs as a child process (for supervision:
    /// it is started again when its connection closes).
    pub fn process_id(&self, server: &str) -> Option<u32> {
        let server = self.servers.iter().find(|connection| connection.name == server)?;
        server.open.try_read().ok()?.pid
    }
}

impl ToolSet for McpTools {
    const HAS_ORIGINS: bool = true;

    fn specs(&self, specs: &mut Vec<ToolSpec>) {
        specs.extend(self.tools.iter().map(|tool| tool.spec.clone()));
    }

    fn origin(&self, name: &str) -> Option<Arc<ToolOrigin>> {
        let tool = self.tools.iter().find(|tool| tool.name == name)?;
        Some(Arc::clone(&self.servers[tool.server].origin))
    }

    async fn call(&self, call: &ToolCall, turn: &Turn) -> Option<ToolResult> {
        let tool = self.tools.iter().find(|tool| tool.name == call.name)?;
        let server = &self.servers[tool.server];
        let arguments = match &call.arguments {
            serde_json::Value::Object(arguments) => arguments.clone(),
            serde_json::Value::Null => serde_json::Map::new(),
            other => {
                let message = format!("the arguments are {other}, not an object");
                return Some(ToolResult::failure(call, ToolFailure::InvalidArguments { message }));
            }
        };
        let mut request =
            CallToolRequestParams::new(tool.on_server.clone()).with_arguments(arguments);
        // The call's key, the same however often it is attempted: a server that acts on
        // something can apply a repeated call once.
        let mut meta = RequestMetaObject::default();
        meta.0.0.insert(IDEMPOTENCY_KEY.to_owned(), turn.idempotency_key(call).into());
        request.meta = Some(meta);
        let open = match server.current().await {
            Ok(open) => open,
            Err(why) => {
                let message =
                    format!("the MCP server `{}` ({}) is gone: {why}", server.name, server.target);
                return Some(ToolResult::failure(call, ToolFailure::Failed { message }));
            }
        };
        let result = match open.service.call_tool(request).await {
            Ok(result) => result,
            Err(error) => {
                if matches!(error, ServiceError::TransportClosed | ServiceError::TransportSend(_)) {
                    server.broken.store(true, Ordering::Release);
                }
                let message = format!(
                    "the MCP server `{}` ({}) failed the call: {error}{}",
                    server.name,
                    server.target,
                    stderr_note(&open.stderr)
                );
                return Some(ToolResult::failure(call, ToolFailure::Failed { message }));
            }
        };
        let output = output(&result);
        Some(if result.is_error == Some(true) {
            ToolResult::failure(call, ToolFailure::Failed { message: output })
        } else {
            ToolResult::success(call, output)
        })
    }
}
