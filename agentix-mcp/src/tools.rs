//! The tools of connected MCP servers as an agent's [`ToolSet`]: the agent's loop calls them,
//! so every tool hook sees their calls as it sees a native tool's.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use agentix::{
    ToolCall, ToolResult, ToolSet, Turn,
    message::ToolFailure,
    tool::{ToolOrigin, ToolProgress, ToolRunner, ToolSpec},
};
use rmcp::ServiceError;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotification,
    CancelledNotificationParam, ClientRequest, ProgressToken, RequestId, RequestMetaObject,
    ServerResult,
};
use rmcp::service::{Peer, PeerRequestOptions, RoleClient};
use tokio::sync::mpsc;

use crate::client::{Asked, ServerTool, Shared};
use crate::error::McpError;
use crate::result::output;
use crate::server::{McpServer, Opened, stderr_note};

/// The `_meta` key a tool call's idempotency key goes under
/// ([`Turn::idempotency_key`](agentix::Turn::idempotency_key)).
pub const IDEMPOTENCY_KEY: &str = "dev.agentix/idempotencyKey";

/// A connected server: its name, how it was reached (and how to reach it again), the running
/// client, what its process wrote to its standard error, and what it shares with the client.
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
    pub(crate) shared: Arc<Shared>,
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
        let reopened = server.open(Arc::clone(&self.shared)).await.map_err(|error| {
            format!("its connection closed, and connecting again failed: {error}")
        })?;
        self.shared.forget_early_progress();
        // The server that came back may offer other tools.
        let number = self.shared.listing();
        if let Ok(listed) = reopened.service.list_all_tools().await {
            self.shared.listed(number, listed);
        }
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

    /// Why a call failed, naming the server (and what its process last wrote).
    fn failed(&self, call: &ToolCall, why: impl std::fmt::Display, open: &Opened) -> ToolResult {
        let message = format!(
            "the MCP server `{}` ({}) failed the call: {why}{}",
            self.name,
            self.target,
            stderr_note(&open.stderr)
        );
        ToolResult::failure(call, ToolFailure::Failed { message })
    }
}

/// One tool as the agent offers it, and the server it is on.
#[derive(Clone, Debug)]
struct Offered {
    tool: ServerTool,
    server: usize,
}

/// The tools the servers offer, as of the generation they were gathered at.
struct Table {
    generation: u64,
    tools: Arc<[Offered]>,
}

/// The tools of one or more connected MCP servers, as an agent's tool set
/// ([`AgentBuilder::tools`](agentix::AgentBuilder::tools)). Listed when connected, and again
/// when a server says its list changed: the agent offers the new list from its next step.
pub struct McpTools {
    servers: Vec<Arc<Connection>>,
    table: Mutex<Table>,
}

impl std::fmt::Debug for McpTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpTools")
            .field("servers", &self.servers.iter().map(|server| &server.name).collect::<Vec<_>>())
            .field("tools", &self.names())
            .finish()
    }
}

impl McpTools {
    /// Lists the server's tools, keeps those allowed and not denied, and names them;
    /// `again`: whether the server can be connected to again if its connection closes.
    pub(crate) async fn list(
        server: McpServer,
        opened: Opened,
        shared: Arc<Shared>,
        again: bool,
    ) -> Result<Self, McpError> {
        let target = server.target();
        let number = shared.listing();
        let listed =
            opened.service.list_all_tools().await.map_err(|error| McpError::ListTools {
                server: server.name.clone(),
                target: target.clone(),
                message: error.to_string(),
            })?;
        shared.listed(number, listed);
        let connection = Connection {
            name: server.name.clone(),
            origin: Arc::new(ToolOrigin::new("mcp", server.name.clone(), target.clone())),
            target,
            again: again.then_some(server),
            open: tokio::sync::RwLock::new(Arc::new(opened)),
            broken: AtomicBool::new(false),
            shared,
        };
        let tools = McpTools {
            servers: vec![Arc::new(connection)],
            table: Mutex::new(Table { generation: u64::MAX, tools: Arc::from(Vec::new()) }),
        };
        tools.gather(true)?;
        Ok(tools)
    }

    /// The servers' tools, gathered again if a server's list changed since. At build
    /// (`strict`), a name two tools would take is refused; on a later change, the tool that
    /// came first keeps it.
    fn gather(&self, strict: bool) -> Result<Arc<[Offered]>, McpError> {
        let generation = self.generation();
        let mut table = self.table.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if table.generation == generation {
            return Ok(Arc::clone(&table.tools));
        }
        let mut tools: Vec<Offered> = Vec::new();
        for (index, server) in self.servers.iter().enumerate() {
            for tool in server.shared.tools().iter() {
                if let Some(first) = tools.iter().find(|offered| offered.tool.name == tool.name) {
                    if strict {
                        return Err(McpError::Collision {
                            name: tool.name.clone(),
                            first: self.origin_of(&first.tool, first.server),
                            second: self.origin_of(tool, index),
                        });
                    }
                    continue;
                }
                tools.push(Offered { tool: tool.clone(), server: index });
            }
        }
        *table = Table { generation, tools: tools.into() };
        Ok(Arc::clone(&table.tools))
    }

    fn tools(&self) -> Arc<[Offered]> {
        self.gather(false).unwrap_or_else(|_| unreachable!("gathering leniently refuses nothing"))
    }

    fn origin_of(&self, tool: &ServerTool, server: usize) -> String {
        let server = &self.servers[server];
        format!("`{}` of the MCP server `{}` ({})", tool.on_server, server.name, server.target)
    }

    /// These tools and `other`'s, as one set; a name both offer is refused.
    pub fn join(mut self, other: McpTools) -> Result<Self, McpError> {
        self.servers.extend(other.servers);
        self.table.get_mut().unwrap_or_else(|poisoned| poisoned.into_inner()).generation = u64::MAX;
        self.gather(true)?;
        Ok(self)
    }

    /// The names the model calls the tools by, as the servers list them now.
    pub fn names(&self) -> Vec<String> {
        self.tools().iter().map(|offered| offered.tool.name.clone()).collect()
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
    /// after its connection closes, the next call starts it again).
    pub fn process_id(&self, server: &str) -> Option<u32> {
        let server = self.servers.iter().find(|connection| connection.name == server)?;
        server.open.try_read().ok()?.pid
    }

    /// Sends the call to its server, passing what the server says while it runs — progress,
    /// questions — to `hooks`; a call dropped before its answer (a timeout) is cancelled on
    /// the server.
    async fn send<H: ToolRunner>(
        &self,
        tool: &Offered,
        call: &ToolCall,
        turn: &Turn,
        hooks: &H,
    ) -> ToolResult {
        let server = &self.servers[tool.server];
        let arguments = match &call.arguments {
            serde_json::Value::Object(arguments) => arguments.clone(),
            serde_json::Value::Null => serde_json::Map::new(),
            other => {
                let message = format!("the arguments are {other}, not an object");
                return ToolResult::failure(call, ToolFailure::InvalidArguments { message });
            }
        };
        let mut params =
            CallToolRequestParams::new(tool.tool.on_server.clone()).with_arguments(arguments);
        // The call's key, the same however often it is attempted: a server that acts on
        // something can apply a repeated call once.
        let mut meta = RequestMetaObject::default();
        meta.0.0.insert(IDEMPOTENCY_KEY.to_owned(), turn.idempotency_key(call).into());
        params.meta = Some(meta);
        let open = match server.current().await {
            Ok(open) => open,
            Err(why) => {
                let message =
                    format!("the MCP server `{}` ({}) is gone: {why}", server.name, server.target);
                return ToolResult::failure(call, ToolFailure::Failed { message });
            }
        };
        let answer = match self.exchange(server, &open, params, call, turn, hooks).await {
            Ok(answer) => answer,
            Err(error) => {
                if matches!(error, ServiceError::TransportClosed | ServiceError::TransportSend(_)) {
                    server.broken.store(true, Ordering::Release);
                }
                return server.failed(call, error, &open);
            }
        };
        let output = output(&answer);
        if answer.is_error == Some(true) {
            ToolResult::failure(call, ToolFailure::Failed { message: output })
        } else {
            ToolResult::success(call, output)
        }
    }

    /// The request and its answer, and what the server says in between.
    async fn exchange<H: ToolRunner>(
        &self,
        server: &Connection,
        open: &Opened,
        params: CallToolRequestParams,
        call: &ToolCall,
        turn: &Turn,
        hooks: &H,
    ) -> Result<CallToolResult, ServiceError> {
        let peer = open.service.peer().clone();
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params.clone()));
        let handle =
            peer.send_request_with_option(request, PeerRequestOptions::no_options()).await?;
        let mut cancel = CancelOnDrop { peer, id: Some(handle.id.clone()) };
        let shared = &server.shared;
        let (progress_to, progress) = mpsc::unbounded_channel::<ToolProgress>();
        let (asked_to, asked) = mpsc::unbounded_channel::<Asked>();
        // Stops the call's progress and questions coming here however the call ends: answered,
        // or dropped (a timeout, a turn that ended).
        let token = handle.progress_token.clone();
        let listening = Listening::start(shared, token, progress_to, asked_to);
        let mut heard = Heard { progress, asked, call, turn, hooks, reported: None };
        let answer = heard.attend(handle.await_response()).await;
        cancel.id = None;
        let answer = match answer {
            Ok(ServerResult::CallToolResult(answer)) => Ok(answer),
            // The server asks for input in rounds (MRTR): rmcp answers them through the
            // client's handler, sending the call again with the answers (by MRTR's design, a
            // round that asks for input has done nothing yet); dropped, it is cancelled.
            Ok(ServerResult::InputRequiredResult(_)) => {
                heard.attend(open.service.call_tool(params)).await
            }
            Ok(_) => Err(ServiceError::UnexpectedResponse),
            Err(error) => Err(error),
        };
        drop(listening);
        // Progress that reached the client before the answer is reported before the call ends.
        while let Ok(said) = heard.progress.try_recv() {
            heard.report(&said);
        }
        shared.settled().await;
        answer
    }
}

/// A running call's progress token and question channel, registered with its server's client
/// until dropped.
struct Listening<'a> {
    shared: &'a Shared,
    token: ProgressToken,
    asking: u64,
}

impl<'a> Listening<'a> {
    fn start(
        shared: &'a Shared,
        token: ProgressToken,
        progress: mpsc::UnboundedSender<ToolProgress>,
        asked: mpsc::UnboundedSender<Asked>,
    ) -> Self {
        shared.listen(token.clone(), progress);
        let asking = shared.ask_through(asked);
        Listening { shared, token, asking }
    }
}

impl Drop for Listening<'_> {
    fn drop(&mut self) {
        self.shared.unlisten(&self.token);
        self.shared.stop_asking(self.asking);
    }
}

/// What a server says during a call, and whom to tell.
struct Heard<'a, H> {
    progress: mpsc::UnboundedReceiver<ToolProgress>,
    asked: mpsc::UnboundedReceiver<Asked>,
    call: &'a ToolCall,
    turn: &'a Turn,
    hooks: &'a H,
    /// The latest progress reported.
    reported: Option<f64>,
}

impl<H: ToolRunner> Heard<'_, H> {
    /// Reports progress that goes forward: rmcp handles each notification in a task of its
    /// own, so one may overtake another, and MCP's progress only grows.
    fn report(&mut self, said: &ToolProgress) {
        if self.reported.is_none_or(|reported| said.progress > reported) {
            self.reported = Some(said.progress);
            self.hooks.progress(self.call, said);
        }
    }

    /// Awaits `answer`, telling the hooks of the progress the server reports meanwhile, and
    /// asking them its questions.
    async fn attend<F: Future>(&mut self, answer: F) -> F::Output {
        tokio::pin!(answer);
        loop {
            tokio::select! {
                biased;
                Some(said) = self.progress.recv() => self.report(&said),
                Some(Asked { question, answer }) = self.asked.recv() => {
                    let answered = self.hooks.question(self.call, &question, self.turn).await;
                    let _ = answer.send(answered);
                }
                answer = &mut answer => return answer,
            }
        }
    }
}

/// Cancels a request on the server if its answer is not waited for to the end.
struct CancelOnDrop {
    peer: Peer<RoleClient>,
    id: Option<RequestId>,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let (Some(id), Ok(runtime)) = (self.id.take(), tokio::runtime::Handle::try_current())
        else {
            return;
        };
        let peer = self.peer.clone();
        let reason = Some("the agent stopped waiting for the call (a timeout)".to_owned());
        let notice = CancelledNotification::new(CancelledNotificationParam::new(Some(id), reason));
        runtime.spawn(async move {
            let _ = peer.send_notification(notice.into()).await;
        });
    }
}

impl ToolSet for McpTools {
    const HAS_ORIGINS: bool = true;
    const CHANGES: bool = true;

    fn generation(&self) -> u64 {
        let each =
            self.servers.iter().map(|server| server.shared.generation.load(Ordering::Acquire));
        each.fold(0, u64::wrapping_add)
    }

    fn specs(&self, specs: &mut Vec<ToolSpec>) {
        specs.extend(self.tools().iter().map(|offered| offered.tool.spec.clone()));
    }

    fn origin(&self, name: &str) -> Option<Arc<ToolOrigin>> {
        let tools = self.tools();
        let offered = tools.iter().find(|offered| offered.tool.name == name)?;
        Some(Arc::clone(&self.servers[offered.server].origin))
    }

    fn idempotent(&self, name: &str) -> bool {
        self.tools().iter().any(|offered| offered.tool.name == name && offered.tool.idempotent)
    }

    async fn call(&self, call: &ToolCall, turn: &Turn) -> Option<ToolResult> {
        self.call_hooked(call, turn, &()).await
    }

    async fn call_hooked<H: ToolRunner>(
        &self,
        call: &ToolCall,
        turn: &Turn,
        hooks: &H,
    ) -> Option<ToolResult> {
        let tools = self.tools();
        let tool = tools.iter().find(|offered| offered.tool.name == call.name)?;
        Some(match hooks.run_tool(self.send(tool, call, turn, hooks)).await {
            Ok(result) => result,
            Err(after) => ToolResult::failure(call, ToolFailure::TimedOut { after }),
        })
    }
}
