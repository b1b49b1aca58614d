//! An agent's tools served to other MCP clients, over stdio or streamable HTTP: each call goes
//! through the agent's tool hooks ([`Agent::call_tool`]), as the model's calls do.

use std::future::Future;
use std::sync::Arc;

use agentix::pipeline::Pipeline;
use agentix::{
    Agent, Model, ToolCall, ToolResult, ToolSet,
    approval::Approver,
    model::{ModelError, ModelRequest, ModelResponse},
    tool::ToolSpec,
    transform::StreamTransformer,
};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::transport::IntoTransport;
#[cfg(feature = "http")]
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
#[cfg(feature = "http")]
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, ServerHandler, ServiceExt};

use crate::error::McpError;
use crate::tools::IDEMPOTENCY_KEY;

/// What an MCP server can serve: tools, listed and called through whatever hooks stand in
/// front of them. An [`Agent`] is one; any [`ToolSet`] is one through
/// [`McpService::tool_set`].
pub trait ServesTools: Send + Sync + 'static {
    /// The tools' specs, as a client lists them now.
    fn tool_specs(&self) -> Arc<[ToolSpec]>;

    /// Whether the tool called `name` may be called again to the same effect: announced to
    /// clients as its `idempotentHint`.
    fn is_idempotent(&self, name: &str) -> bool {
        let _ = name;
        false
    }

    /// Runs one call.
    fn call_tool(
        &self,
        call: ToolCall,
    ) -> impl Future<Output = Result<ToolResult, agentix::Error>> + Send;
}

impl<M, T, P, A, X> ServesTools for Agent<M, T, P, A, X>
where
    M: Model + 'static,
    T: ToolSet + 'static,
    P: Pipeline + 'static,
    A: Approver + 'static,
    X: StreamTransformer + 'static,
{
    fn tool_specs(&self) -> Arc<[ToolSpec]> {
        Agent::tool_specs(self)
    }

    fn is_idempotent(&self, name: &str) -> bool {
        Agent::tool_is_idempotent(self, name)
    }

    fn call_tool(
        &self,
        call: ToolCall,
    ) -> impl Future<Output = Result<ToolResult, agentix::Error>> + Send {
        Agent::call_tool(self, call)
    }
}

/// The model of an agent made only to serve a tool set: never called (a served call runs no
/// model), it refuses if it is.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoModel;

impl Model for NoModel {
    async fn complete(&self, _: &ModelRequest) -> Result<ModelResponse, ModelError> {
        Err(ModelError::Refused {
            provider: "agentix-mcp".to_owned(),
            reason: "an agent that only serves tools has no model".to_owned(),
        })
    }
}

/// An MCP server whose tools are an agent's (or a tool set's): a [`ServerHandler`] for rmcp,
/// served over stdio ([`serve_stdio`](McpService::serve_stdio)) or streamable HTTP
/// (`router`, an axum router at `/mcp`, with the `http` feature).
///
/// ```no_run
/// use agentix::Agent;
/// use agentix_mcp::McpService;
///
/// #[agentix::tool(description = "Adds two numbers.")]
/// async fn add(a: i64, b: i64) -> Result<i64, std::convert::Infallible> {
///     Ok(a + b)
/// }
///
/// # async fn run() -> Result<(), agentix_mcp::McpError> {
/// let agent = Agent::builder(agentix_mcp::NoModel).tool(add).build();
/// McpService::new(agent).serve_stdio().await
/// # }
/// ```
pub struct McpService<S> {
    served: Arc<S>,
    name: String,
    /// What tells this service's calls from another's, in the ids of calls a client sent no
    /// idempotency key for: the process, the time it was made, and a count.
    instance: Arc<str>,
}

impl<S> Clone for McpService<S> {
    fn clone(&self) -> Self {
        let (served, instance) = (Arc::clone(&self.served), Arc::clone(&self.instance));
        McpService { served, name: self.name.clone(), instance }
    }
}

/// A name for a new service, unlike any other's: the process, the time, and a count.
fn instance() -> Arc<str> {
    static MADE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let made = MADE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_nanos());
    format!("{}.{since:x}.{made}", std::process::id()).into()
}

impl<S: ServesTools> McpService<S> {
    /// Serves `served`'s tools, the server calling itself `agentix` to clients.
    pub fn new(served: S) -> Self {
        McpService::shared(Arc::new(served))
    }

    /// Serves the tools of `served`, which others hold too: the agent a server also runs turns
    /// on, say.
    pub fn shared(served: Arc<S>) -> Self {
        McpService { served, name: "agentix".to_owned(), instance: instance() }
    }

    /// The name the server gives clients.
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Serves one client over this process's standard input and output, until it leaves.
    pub async fn serve_stdio(self) -> Result<(), McpError> {
        self.serve_with(rmcp::transport::stdio()).await
    }

    /// Serves one client over a transport of one's own (an in-memory pipe, a socket), until
    /// it leaves.
    pub async fn serve_with<T, E, A>(self, transport: T) -> Result<(), McpError>
    where
        T: IntoTransport<RoleServer, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        let name = self.name.clone();
        let failed = |message: String| McpError::Serve { server: name.clone(), message };
        let running = self.serve(transport).await.map_err(|e| failed(e.to_string()))?;
        running.waiting().await.map_err(|e| failed(e.to_string()))?;
        Ok(())
    }

    /// An axum router serving the tools over MCP's streamable HTTP at `/mcp`, each client in a
    /// session of its own. Clients are accepted from loopback hosts only (`localhost`,
    /// `127.0.0.1`, `::1`: DNS rebinding protection); a server behind a proxy configures
    /// its own `StreamableHttpService` with this service. With the `http` feature (on by
    /// default).
    #[cfg(feature = "http")]
    pub fn router(self) -> axum::Router {
        self.router_with(StreamableHttpServerConfig::default())
    }

    /// [`router`](McpService::router), taking requests for any `Host`: for a router mounted
    /// behind a host check of its own (`agentix_server`'s, which takes the names its operator
    /// allows — a public one too — and refuses the rest). Never serve it without one: it is then
    /// open to DNS rebinding.
    #[cfg(feature = "http")]
    pub fn router_behind_host_check(self) -> axum::Router {
        self.router_with(StreamableHttpServerConfig::default().disable_allowed_hosts())
    }

    #[cfg(feature = "http")]
    fn router_with(self, config: StreamableHttpServerConfig) -> axum::Router {
        let service = StreamableHttpService::new(
            move || Ok(self.clone()),
            Arc::new(LocalSessionManager::default()),
            config,
        );
        axum::Router::new().nest_service("/mcp", service)
    }
}

impl<T: ToolSet + 'static> McpService<Agent<NoModel, T>> {
    /// Serves a tool set with no hooks in front of it.
    pub fn tool_set(tools: T) -> Self {
        McpService::new(Agent::builder(NoModel).tools(tools).build())
    }
}

/// A spec's parameters as MCP's input schema, an object's.
fn input_schema(spec: &ToolSpec) -> Arc<serde_json::Map<String, serde_json::Value>> {
    Arc::new(match &spec.parameters {
        serde_json::Value::Object(schema) => schema.clone(),
        _ => serde_json::Map::from_iter([("type".to_owned(), "object".into())]),
    })
}

impl<S: ServesTools> ServerHandler for McpService<S> {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(self.name.clone(), env!("CARGO_PKG_VERSION")))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let specs = self.served.tool_specs();
        let tools = specs.iter().map(|spec| {
            let tool = Tool::new(spec.name.clone(), spec.description.clone(), input_schema(spec));
            if self.served.is_idempotent(&spec.name) {
                tool.annotate(ToolAnnotations::new().idempotent(true))
            } else {
                tool
            }
        });
        Ok(ListToolsResult::with_all_items(tools.collect()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments =
            request.arguments.map_or(serde_json::Value::Null, serde_json::Value::Object);
        // The call's id, which its idempotency key is made of: the client's key, when it sent
        // one (a call it repeats keeps its key), else one of this server's own.
        let id = match context.meta.0.0.get(IDEMPOTENCY_KEY).and_then(|key| key.as_str()) {
            Some(key) => key.to_owned(),
            None => format!("mcp-{}-{}", self.instance, context.id),
        };
        let call = ToolCall::new(id, request.name.to_string(), arguments);
        // A client's cancellation drops the call: its tool stops where it stands.
        let outcome = tokio::select! {
            outcome = self.served.call_tool(call) => outcome,
            () = context.ct.cancelled() => {
                return Err(ErrorData::internal_error("the client cancelled the call", None));
            }
        };
        let result = match outcome {
            Ok(result) if result.error.is_none() => {
                CallToolResult::success(vec![ContentBlock::text(result.output)])
            }
            Ok(failed) => CallToolResult::error(vec![ContentBlock::text(failed.output)]),
            Err(error) => CallToolResult::error(vec![ContentBlock::text(error.to_string())]),
        };
        Ok(result.into())
    }
}
