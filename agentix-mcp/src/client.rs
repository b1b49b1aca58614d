//! The client agentix is to a server: it names itself, keeps the server's tool list current on
//! `tools/list_changed`, and passes what the server says during a call — its progress, its
//! questions (elicitation) — to the call that is running.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use agentix::{
    approval::{Approval, Question},
    tool::{ToolPattern, ToolProgress, ToolSpec},
};
use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationCapability, FormElicitationCapability, Implementation, ProgressNotificationParam,
    ProgressToken, Tool,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient};
use rmcp::{ClientHandler, ErrorData};
use tokio::sync::{Notify, mpsc, oneshot};

/// Which of a server's tools an agent takes, under which names.
#[derive(Debug)]
pub(crate) struct Listing {
    pub(crate) prefix: String,
    pub(crate) allow: Vec<ToolPattern>,
    pub(crate) deny: Vec<ToolPattern>,
}

impl Listing {
    /// The listed tools the agent takes, named as the model calls them.
    fn offer(&self, listed: Vec<Tool>) -> Vec<ServerTool> {
        let taken = listed.into_iter().filter(|tool| {
            let name = &*tool.name;
            (self.allow.is_empty() || self.allow.iter().any(|glob| glob.matches(name)))
                && !self.deny.iter().any(|glob| glob.matches(name))
        });
        taken
            .map(|tool| {
                let on_server = tool.name.to_string();
                let name = if self.prefix.is_empty() {
                    on_server.clone()
                } else {
                    format!("{}__{on_server}", self.prefix)
                };
                let spec = ToolSpec {
                    name: name.clone(),
                    description: tool.description.as_deref().unwrap_or_default().to_owned(),
                    parameters: serde_json::Value::Object((*tool.input_schema).clone()),
                };
                // Read-only, or idempotent by the server's word: calling it again does no more.
                let hints = tool.annotations.as_ref();
                let idempotent = hints.is_some_and(|hints| {
                    hints.read_only_hint == Some(true) || hints.idempotent_hint == Some(true)
                });
                ServerTool { name, on_server, spec, idempotent }
            })
            .collect()
    }
}

/// One of a server's tools as the agent offers it: the name the model calls, the server's own
/// name for it, and its spec.
#[derive(Clone, Debug)]
pub(crate) struct ServerTool {
    pub(crate) name: String,
    pub(crate) on_server: String,
    pub(crate) spec: ToolSpec,
    /// Whether the server says a call may be made again to the same effect (its
    /// `readOnlyHint` or `idempotentHint`).
    pub(crate) idempotent: bool,
}

/// A question the server asked while a call ran, and where its answer goes.
pub(crate) struct Asked {
    pub(crate) question: Question,
    pub(crate) answer: oneshot::Sender<Approval>,
}

/// What the client and the tool set share about one server, across its reconnections.
pub(crate) struct Shared {
    /// The server's name, for the questions it asks.
    pub(crate) name: String,
    listing: Listing,
    /// Its tools, as last listed, and which listing (in the order they were asked for) they
    /// come from: a listing that answers after a later one is not taken.
    tools: Mutex<(u64, Arc<[ServerTool]>)>,
    /// Listings asked for so far.
    listings: AtomicU64,
    /// Moves each time `tools` does.
    pub(crate) generation: AtomicU64,
    /// Listings under way after a `tools/list_changed`, and their end.
    relisting: AtomicUsize,
    relisted: Notify,
    progress: Mutex<Progress>,
    /// The calls running now that can be asked a question, by a number of their own.
    asking: Mutex<Vec<(u64, mpsc::UnboundedSender<Asked>)>>,
    next_asking: AtomicU64,
}

/// Where each running call's progress goes, by its progress token; and the reports that came
/// before their call was listening (a server may answer faster than the call registers).
#[derive(Default)]
struct Progress {
    listening: HashMap<ProgressToken, mpsc::UnboundedSender<ToolProgress>>,
    early: VecDeque<(ProgressToken, ToolProgress)>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Shared {
    pub(crate) fn new(name: String, listing: Listing) -> Arc<Shared> {
        Arc::new(Shared {
            name,
            listing,
            tools: Mutex::new((0, Arc::from(Vec::new()))),
            listings: AtomicU64::new(0),
            generation: AtomicU64::new(0),
            relisting: AtomicUsize::new(0),
            relisted: Notify::new(),
            progress: Mutex::default(),
            asking: Mutex::default(),
            next_asking: AtomicU64::new(0),
        })
    }

    /// The server's tools, as last listed.
    pub(crate) fn tools(&self) -> Arc<[ServerTool]> {
        Arc::clone(&lock(&self.tools).1)
    }

    /// The number of a listing about to be asked for, for [`listed`](Self::listed).
    pub(crate) fn listing(&self) -> u64 {
        self.listings.fetch_add(1, Ordering::AcqRel) + 1
    }

    /// Takes the listing `number` of the server's tools, unless a later one is in already.
    pub(crate) fn listed(&self, number: u64, listed: Vec<Tool>) {
        let mut tools = lock(&self.tools);
        if number > tools.0 {
            *tools = (number, self.listing.offer(listed).into());
            self.generation.fetch_add(1, Ordering::Release);
        }
    }

    /// Forgets the progress reported for no call: after a reconnection, the new connection's
    /// progress tokens start again, and a report of the old one would reach the wrong call.
    pub(crate) fn forget_early_progress(&self) {
        lock(&self.progress).early.clear();
    }

    /// Waits (up to a few seconds) for the listings a `tools/list_changed` started: a call
    /// during which its server changed its list returns once the new list is in, so that the
    /// agent's next step offers it — when the listing has started by then (rmcp handles each
    /// notification in a task of its own, which may start after the call's answer is read;
    /// then the list is offered from the step after the listing comes in).
    pub(crate) async fn settled(&self) {
        let settled = async {
            loop {
                let relisted = self.relisted.notified();
                if self.relisting.load(Ordering::Acquire) == 0 {
                    return;
                }
                relisted.await;
            }
        };
        let _ = tokio::time::timeout(Duration::from_secs(5), settled).await;
    }

    /// Sends the progress reported under `token` to `to`, until [`unlisten`](Self::unlisten).
    pub(crate) fn listen(&self, token: ProgressToken, to: mpsc::UnboundedSender<ToolProgress>) {
        let mut progress = lock(&self.progress);
        let early = std::mem::take(&mut progress.early);
        for (said_for, said) in early {
            if said_for == token {
                let _ = to.send(said);
            } else {
                progress.early.push_back((said_for, said));
            }
        }
        progress.listening.insert(token, to);
    }

    pub(crate) fn unlisten(&self, token: &ProgressToken) {
        lock(&self.progress).listening.remove(token);
    }

    /// Lets the running call that sends to `to` be asked the server's questions, until the
    /// returned number is given to [`stop_asking`](Self::stop_asking).
    pub(crate) fn ask_through(&self, to: mpsc::UnboundedSender<Asked>) -> u64 {
        let id = self.next_asking.fetch_add(1, Ordering::Relaxed);
        lock(&self.asking).push((id, to));
        id
    }

    pub(crate) fn stop_asking(&self, id: u64) {
        lock(&self.asking).retain(|(running, _)| *running != id);
    }

    /// The approver's answer, through the one call running on this server; why not, when no
    /// call, or more than one, is running (MCP does not say which call asks).
    async fn ask(&self, question: Question) -> Result<Approval, String> {
        let to = {
            let asking = lock(&self.asking);
            match asking.as_slice() {
                [(_, to)] => to.clone(),
                [] => return Err("no call of the agent is running on the server".to_owned()),
                _ => {
                    return Err(format!(
                        "{} calls of the agent are running on the server, and MCP does not say \
                         which one asks",
                        asking.len()
                    ));
                }
            }
        };
        let (answer, answered) = oneshot::channel();
        to.send(Asked { question, answer })
            .map_err(|_| "the call that would be asked has ended".to_owned())?;
        answered.await.map_err(|_| "the call ended before the answer came".to_owned())
    }
}

/// The client agentix is to a server.
#[derive(Clone)]
pub(crate) struct Client {
    pub(crate) shared: Arc<Shared>,
}

impl ClientHandler for Client {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        capabilities.elicitation =
            Some(ElicitationCapability::new().with_form(FormElicitationCapability::new()));
        ClientConfig::new(
            capabilities,
            Implementation::new("agentix-mcp", env!("CARGO_PKG_VERSION")),
        )
    }

    async fn on_tool_list_changed(&self, context: NotificationContext<RoleClient>) {
        let shared = &self.shared;
        shared.relisting.fetch_add(1, Ordering::AcqRel);
        let number = shared.listing();
        // A list that does not come is no change: the agent keeps offering the last one.
        if let Ok(listed) = context.peer.list_all_tools().await {
            shared.listed(number, listed);
        }
        shared.relisting.fetch_sub(1, Ordering::AcqRel);
        shared.relisted.notify_waiters();
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let said = ToolProgress {
            progress: params.progress,
            total: params.total,
            message: params.message,
        };
        let mut progress = lock(&self.shared.progress);
        match progress.listening.get(&params.progress_token) {
            Some(to) => {
                let _ = to.send(said);
            }
            None => {
                progress.early.push_back((params.progress_token, said));
                if progress.early.len() > 64 {
                    progress.early.pop_front();
                }
            }
        }
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let ElicitRequestParams::FormElicitationParams { message, requested_schema, .. } = request
        else {
            // Only forms are declared: a URL to send a person to is declined.
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        };
        let schema = serde_json::to_value(&requested_schema).unwrap_or_default();
        let asked_by = format!("the MCP server `{}`", self.shared.name);
        let answer = self.shared.ask(Question { asked_by, message, schema }).await;
        Ok(match answer {
            Ok(Approval::Approve) => ElicitResult::new(ElicitationAction::Accept),
            Ok(Approval::Edit(answer)) => {
                ElicitResult::new(ElicitationAction::Accept).with_content(answer.arguments)
            }
            Ok(Approval::Reject(_)) | Err(_) => ElicitResult::new(ElicitationAction::Decline),
            Ok(Approval::Suspend) => ElicitResult::new(ElicitationAction::Cancel),
        })
    }
}
