//! An agent served over HTTP with `axum`: conversations kept in the server's memory — or in a
//! store ([`router_with_store`]: SQLite, or PostgreSQL shared by many servers) — a turn per
//! request, answered as JSON or streamed as Server-Sent Events; tool calls that wait for a
//! person's approval answered over HTTP too.
//!
//! | request | answer |
//! |---|---|
//! | `POST /conversations` | `201 {"id": "…"}` |
//! | `GET /conversations/{id}` | `200`, the conversation (its log, config and scope) as JSON |
//! | `POST /conversations/{id}/messages` `{"message": "…"}` | `200 {"conversation", "turn", "text", "message"}` |
//! | the same, with `Accept: text/event-stream` | the turn as it runs: `text`, `tool_call`, `tool_result`, `withdrawn`, `model_call_failed` events, then `done` (the JSON above) or `failed` (the error below) |
//! | `GET /conversations/{id}/approvals` | `200 {"turn", "waiting": [{"call_id", "tool", "arguments", "hook", "reason"}]}`: the calls the conversation's suspended turn waits on, the one to answer first first (`[]` when none) |
//! | `POST /conversations/{id}/approvals/{call_id}` `{"decision": "approve"}`, `{"decision": "reject", "reason": "…"}` or `{"decision": "edit", "arguments": {…}}` | the turn goes on from the call, answered as a message is (JSON or SSE) |
//! | `GET /health` | `200 {"status": "ok"}` while the process serves |
//! | `GET /ready` | `200 {"status": "ready"}` when the store answers (always, in memory); `503 store_unreachable` otherwise |
//!
//! Every error is JSON, `{"error": {"code", "message", …}}`. A client's mistake is a 4xx:
//! `404 unknown_conversation`, `400 empty_message`, `400`/`415`/`422 bad_request` for a body
//! that is not the JSON above, `413 body_too_large` past the body limit,
//! `413 message_too_large` for a message that alone is more than the context can hold (with
//! its estimated `tokens` and the `budget`; refused before any turn opens),
//! `409 turn_running` while a turn runs on the conversation (two turns never interleave on one
//! log; a read of its log gets it too) and `409 conflict` when another server's turn committed
//! first — both with `Retry-After` —, `409 awaiting_approval` while a call waits for a person
//! (with the call, in `waiting`), `409 nothing_waiting` / `404 unknown_call` / `409 not_next` for
//! an approval that answers no waiting call, `422 halted` when a hook halted the turn. The
//! server's or the model's failures are 5xx: `502 model_failed`, `504 turn_timed_out`,
//! `500 store_failed`, `500 context_overflow`, `500 turn_failed`, `500 turn_crashed`, with the
//! turn's number; `503 shutting_down` once a shutdown began.
//!
//! A turn runs in a task of its own: a client that disconnects does not cancel it, so the log
//! always holds whole turns; [`Server::drain`] waits for the running ones at shutdown.
//!
//! With a store, each turn loads the conversation, commits each step as it runs, and a server
//! that restarts serves the conversations it served before — their waiting approvals too. Two
//! servers sharing a PostgreSQL store never interleave turns on one log: the turn that commits
//! second gets `409 conflict`.

use std::collections::HashMap;
use std::convert::Infallible;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentix::{AnyAgent, Approval, AssistantMessage, Conversation, Error, Outcome, StreamEvent};
use agentix_store::{Committer, Store, StoreError, Version};
use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use futures::{SinkExt, Stream, StreamExt};
use serde::{Deserialize, Serialize};
use serde_json::json;
use tokio::sync::{Mutex as TurnLock, Notify, OwnedMutexGuard};

mod approvals;
pub mod cli;
mod demo;
mod error;

pub use approvals::{Decision, Waiting, WaitingCall};
pub use demo::{DemoModel, agent_over, demo_agent, send_email, usage};
pub(crate) use demo::{last_user_text, tool_result_answered};
pub use error::ApiError;

/// How a turn starts: a user's message, or a person's answer to the call a suspended turn
/// waits on.
enum Start {
    Message(String),
    Approval(Approval),
}

/// Binds `$run` to the turn `$start` opens on `$conversation` (its type differs by how it
/// starts), and evaluates `$body` with it.
macro_rules! opened {
    ($agent:expr, $conversation:expr, $start:expr, |$run:ident| $body:expr) => {
        match $start {
            Start::Message(message) => {
                let $run = $agent.turn($conversation, message);
                $body
            }
            Start::Approval(approval) => {
                let $run = $agent.resume($conversation, approval);
                $body
            }
        }
    };
}

/// The server's state: the agent, the conversations by id, and the store they live in, if
/// they live in one (the slots then only keep a process from running two turns at once).
struct App<R> {
    agent: R,
    conversations: Mutex<HashMap<String, Arc<Slot>>>,
    store: Option<Store>,
    turns: Arc<Turns>,
}

/// The turns running, for a shutdown that lets them finish.
#[derive(Default)]
struct Turns {
    running: std::sync::atomic::AtomicUsize,
    ended: Notify,
    /// Set at shutdown: no turn starts after it.
    stopping: AtomicBool,
}

/// Counts a turn as running while it lives.
struct TurnRunning(Arc<Turns>);

impl TurnRunning {
    fn new(turns: &Arc<Turns>) -> Self {
        turns.running.fetch_add(1, Ordering::SeqCst);
        TurnRunning(Arc::clone(turns))
    }
}

impl Drop for TurnRunning {
    fn drop(&mut self) {
        if self.0.running.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.ended.notify_waiters();
        }
    }
}

/// A served agent's routes, and what its shutdown waits for.
pub struct Server {
    /// The routes.
    pub router: Router,
    turns: Arc<Turns>,
}

impl Server {
    /// Starts no more turns: a message or an approval is answered `503 shutting_down` from now
    /// on (the turns running go on).
    pub fn stop(&self) {
        self.turns.stopping.store(true, Ordering::SeqCst);
    }

    /// Waits until no turn runs, or `deadline` has come: whether every turn finished. A turn
    /// cut there (the process exits) leaves its whole steps in the store, as a kill does.
    pub async fn drain(&self, deadline: tokio::time::Instant) -> bool {
        let turns = &self.turns;
        let all_ended = async {
            loop {
                let ended = turns.ended.notified();
                if turns.running.load(Ordering::SeqCst) == 0 {
                    return;
                }
                ended.await;
            }
        };
        tokio::time::timeout_at(deadline, all_ended).await.is_ok()
    }

    /// How many turns are running.
    pub fn running_turns(&self) -> usize {
        self.turns.running.load(Ordering::Acquire)
    }
}

/// What each handler gets: the server's state.
type Shared<R> = State<Arc<App<R>>>;

/// One conversation, and whether a turn is running on it.
#[derive(Default)]
struct Slot {
    running: AtomicBool,
    conversation: Arc<TurnLock<Conversation>>,
}

/// A conversation claimed for one turn: no other turn starts on it until the claim is dropped,
/// whether the turn ended or its task was cancelled.
struct Claim {
    // Dropped first: the conversation is free before the next turn may claim it.
    conversation: OwnedMutexGuard<Conversation>,
    /// The stored version the conversation was loaded at, with a store.
    version: Option<Version>,
    _running: Running,
}

/// Marks its slot's turn as running while it lives.
struct Running(Arc<Slot>);

impl Drop for Running {
    fn drop(&mut self) {
        self.0.running.store(false, Ordering::Release);
    }
}

impl Deref for Claim {
    type Target = Conversation;

    fn deref(&self) -> &Conversation {
        &self.conversation
    }
}

impl DerefMut for Claim {
    fn deref_mut(&mut self) -> &mut Conversation {
        &mut self.conversation
    }
}

/// The routes above, serving `agent` (any agent: an `Agent`, a `BoxedAgent`, an `Arc` to one),
/// conversations in memory.
pub fn router<R>(agent: R) -> Router
where
    R: AnyAgent + 'static,
{
    server(agent, None).router
}

/// The routes above, serving `agent`, conversations in `store`.
pub fn router_with_store<R>(agent: R, store: Store) -> Router
where
    R: AnyAgent + 'static,
{
    server(agent, Some(store)).router
}

/// The routes above, serving `agent`, conversations in `store` if there is one, and the count
/// of running turns a graceful shutdown waits on ([`Server::drain`]).
pub fn server<R>(agent: R, store: Option<Store>) -> Server
where
    R: AnyAgent + 'static,
{
    let turns = Arc::new(Turns::default());
    let app = App { agent, conversations: Mutex::default(), store, turns: Arc::clone(&turns) };
    Server { router: routes(app), turns }
}

fn routes<R>(app: App<R>) -> Router
where
    R: AnyAgent + 'static,
{
    let app = Arc::new(app);
    Router::new()
        .route("/health", get(|| async { Json(json!({ "status": "ok" })) }))
        .route("/ready", get(|State(app): Shared<R>| async move { app.ready().await }))
        .route(
            "/conversations/{id}/approvals",
            get(|State(app): Shared<R>, Path(id): Path<String>| async move {
                app.waiting(&id).await
            }),
        )
        .route(
            "/conversations/{id}/approvals/{call}",
            post(
                |State(app): Shared<R>,
                 Path((id, call)): Path<(String, String)>,
                 headers: HeaderMap,
                 body: Result<Json<Decision>, JsonRejection>| async move {
                    app.decide(id, call, &headers, body).await
                },
            ),
        )
        .route("/conversations", post(|State(app): Shared<R>| async move { app.create().await }))
        .route(
            "/conversations/{id}",
            get(|State(app): Shared<R>, Path(id): Path<String>| async move {
                app.conversation(&id).await
            }),
        )
        .route(
            "/conversations/{id}/messages",
            post(
                |State(app): Shared<R>,
                 Path(id): Path<String>,
                 headers: HeaderMap,
                 body: Result<Json<SendMessage>, JsonRejection>| async move {
                    app.send(id, &headers, body).await
                },
            ),
        )
        .with_state(app)
}

/// The body of `POST /conversations/{id}/messages`.
#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SendMessage {
    /// What the user says.
    pub message: String,
}

/// The answer to a turn that completed: the body of a JSON answer and of the `done` event.
#[derive(Debug, Deserialize, Serialize)]
pub struct TurnAnswer {
    /// The conversation's id.
    pub conversation: String,
    /// The turn's number in the conversation, from 1.
    pub turn: u64,
    /// The final answer's text.
    pub text: String,
    /// The final answer, whole.
    pub message: AssistantMessage,
}

impl<R> App<R>
where
    R: AnyAgent + 'static,
{
    async fn create(&self) -> Response {
        let id = uuid::Uuid::new_v4().to_string();
        if let Some(store) = &self.store
            && let Err(error) = store.create(&id, &Conversation::new()).await
        {
            return ApiError::Store(error).into_response();
        }
        lock(&self.conversations).insert(id.clone(), Arc::default());
        (StatusCode::CREATED, Json(json!({ "id": id }))).into_response()
    }

    /// The conversation's slot. With a store, any id has one: the store says whether the
    /// conversation exists (another server may have created it).
    fn slot(&self, id: &str) -> Result<Arc<Slot>, ApiError> {
        let mut conversations = lock(&self.conversations);
        match conversations.get(id) {
            Some(slot) => Ok(Arc::clone(slot)),
            None if self.store.is_some() => {
                Ok(Arc::clone(conversations.entry(id.to_owned()).or_default()))
            }
            None => Err(ApiError::UnknownConversation(id.to_owned())),
        }
    }

    /// Claims the conversation for one turn, or says a turn is already running on it. With a
    /// store, the conversation is loaded as it is stored now.
    async fn claim(&self, id: &str) -> Result<Claim, ApiError> {
        let slot = self.slot(id)?;
        if slot.running.swap(true, Ordering::AcqRel) {
            return Err(ApiError::TurnRunning(id.to_owned()));
        }
        let running = Running(Arc::clone(&slot));
        // Only a read of the log can hold the conversation now, and only for a moment.
        let mut conversation = Arc::clone(&slot.conversation).lock_owned().await;
        let mut version = None;
        if let Some(store) = &self.store {
            let stored = store
                .load(id)
                .await
                .map_err(|error| self.forget_unknown(id, &slot, true, error))?;
            *conversation = stored.conversation;
            version = Some(stored.version);
        }
        Ok(Claim { conversation, version, _running: running })
    }

    /// A store's error; an id the store does not know keeps no slot (a client asking for
    /// made-up ids must not grow the map) — unless another request's turn holds the slot (the
    /// conversation was created meanwhile, by another server): `claimed` says this request
    /// holds it.
    fn forget_unknown(
        &self,
        id: &str,
        slot: &Arc<Slot>,
        claimed: bool,
        error: StoreError,
    ) -> ApiError {
        if matches!(error, StoreError::NotFound { .. }) {
            let mut conversations = lock(&self.conversations);
            let same = conversations.get(id).is_some_and(|kept| Arc::ptr_eq(kept, slot));
            if same && (claimed || !slot.running.load(Ordering::Acquire)) {
                conversations.remove(id);
            }
        }
        ApiError::Store(error)
    }

    /// The conversation as JSON; while a turn runs on it, its log is not settled: 409.
    async fn conversation(&self, id: &str) -> Result<Response, ApiError> {
        let slot = self.slot(id)?;
        let running = || ApiError::TurnRunning(id.to_owned());
        if slot.running.load(Ordering::Acquire) {
            return Err(running());
        }
        if let Some(store) = &self.store {
            let stored = store
                .load(id)
                .await
                .map_err(|error| self.forget_unknown(id, &slot, false, error))?;
            return Ok(Json(&stored.conversation).into_response());
        }
        let conversation = slot.conversation.try_lock().map_err(|_| running())?;
        Ok(Json(&*conversation).into_response())
    }

    /// A committer for the claimed conversation, with a store.
    fn committer<'s>(&'s self, id: &str, claim: &Claim) -> Option<Committer<'s>> {
        let (store, version) = (self.store.as_ref()?, claim.version?);
        Some(store.committer_at(id, version, &claim.conversation))
    }

    async fn send(
        self: Arc<Self>,
        id: String,
        headers: &HeaderMap,
        body: Result<Json<SendMessage>, JsonRejection>,
    ) -> Response {
        let message = match body {
            Ok(Json(SendMessage { message })) if message.trim().is_empty() => {
                return ApiError::EmptyMessage.into_response();
            }
            Ok(Json(SendMessage { message })) => message,
            Err(rejection) => return ApiError::BadRequest(rejection).into_response(),
        };
        let conversation = match self.claim(&id).await {
            Ok(conversation) => conversation,
            Err(error) => return error.into_response(),
        };
        if let Some(too_large) = too_large(&message, &conversation) {
            return too_large.into_response();
        }
        self.run(id, conversation, Start::Message(message), headers).await
    }

    /// Runs a turn — a new one, or a suspended one going on — in a task of its own, answered
    /// as JSON or streamed.
    async fn run(
        self: Arc<Self>,
        id: String,
        conversation: Claim,
        start: Start,
        headers: &HeaderMap,
    ) -> Response {
        // Counted first, then checked: a shutdown that sets the flag and then counts the turns
        // either sees this one or is seen by it.
        let running = TurnRunning::new(&self.turns);
        if self.turns.stopping.load(Ordering::SeqCst) {
            return ApiError::ShuttingDown.into_response();
        }
        if wants_events(headers) {
            return Sse::new(self.stream_turn(id, conversation, start, running))
                .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
                .into_response();
        }
        let turn = tokio::spawn(async move {
            let _running = running;
            let mut conversation = conversation;
            let committer = self.committer(&id, &conversation);
            let outcome = opened!(self.agent, &mut conversation, start, |run| match &committer {
                Some(committer) => run.commit(committer).await,
                None => run.await,
            });
            answer(id, &conversation, outcome)
        });
        match turn.await {
            Ok(Ok(answer)) => Json(answer).into_response(),
            Ok(Err(error)) => error.into_response(),
            Err(join) => ApiError::Crashed(join.to_string()).into_response(),
        }
    }

    /// Runs the turn in a task of its own and hands its events to the response as they come;
    /// the last is `done` or `failed` — `turn_crashed` too, if the turn's task panicked.
    fn stream_turn(
        self: Arc<Self>,
        id: String,
        conversation: Claim,
        start: Start,
        running: TurnRunning,
    ) -> futures::channel::mpsc::Receiver<Result<Event, Infallible>> {
        let (events, received) = futures::channel::mpsc::channel(64);
        let mut relayed = events.clone();
        let turn = tokio::spawn(async move {
            let _running = running;
            let mut conversation = conversation;
            let committer = self.committer(&id, &conversation);
            let outcome = opened!(self.agent, &mut conversation, start, |run| match &committer {
                Some(committer) => relay(run.commit(committer).stream(), &mut relayed).await,
                None => relay(run.stream(), &mut relayed).await,
            });
            answer(id, &conversation, outcome)
        });
        tokio::spawn(async move {
            let last = match turn.await {
                Ok(Ok(answer)) => json_event("done", &answer),
                Ok(Err(error)) => json_event("failed", &error.body()),
                Err(join) => json_event("failed", &ApiError::Crashed(join.to_string()).body()),
            };
            let mut events = events;
            let _ = events.send(Ok(last)).await;
        });
        received
    }

    /// Whether the server can serve turns: its store answers.
    async fn ready(&self) -> Response {
        match &self.store {
            Some(store) => match store.ping().await {
                Ok(()) => Json(json!({ "status": "ready" })).into_response(),
                Err(error) => ApiError::Unready(error).into_response(),
            },
            None => Json(json!({ "status": "ready" })).into_response(),
        }
    }
}

/// Hands the turn's events to the response as they come; the turn's outcome. A client that
/// went away, or stopped reading for [`STALLED`], does not hold the turn up: it runs to its end,
/// and the client gets nothing more of it but its last event.
async fn relay(
    turn: impl Stream<Item = StreamEvent>,
    events: &mut futures::channel::mpsc::Sender<Result<Event, Infallible>>,
) -> Outcome {
    let mut turn = std::pin::pin!(turn);
    let mut reading = true;
    while let Some(event) = turn.next().await {
        if let StreamEvent::Finished(outcome) = event {
            return outcome;
        } else if reading && let Some(event) = sse_event(&event) {
            reading =
                matches!(tokio::time::timeout(STALLED, events.send(Ok(event))).await, Ok(Ok(())));
        }
    }
    unreachable!("a turn's stream ends with its outcome")
}

/// How long a streamed turn waits for its client to take an event before it stops sending.
const STALLED: Duration = Duration::from_secs(10);

/// Whether the client asked for the turn as Server-Sent Events.
fn wants_events(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .any(|accept| accept.split(',').any(|kind| kind.trim().starts_with("text/event-stream")))
}

fn answer(
    id: String,
    conversation: &Conversation,
    outcome: Outcome,
) -> Result<TurnAnswer, ApiError> {
    let turn = conversation.turns();
    match outcome {
        Ok(message) => {
            let text = message.joined_text().into_owned();
            Ok(TurnAnswer { conversation: id, turn, text, message })
        }
        Err(Error::AwaitingApproval { .. }) => {
            let waiting = Waiting::of(conversation).unwrap_or_default();
            Err(ApiError::AwaitingApproval { conversation: id, turn, waiting })
        }
        Err(error) => Err(ApiError::Turn { turn, error }),
    }
}

/// The message, if it alone is more than the conversation's context can hold — estimated at
/// four characters a token, before any turn opens, so the log never keeps it — as the client's
/// error. (A turn whose own steps outgrow the context fails later, as the server's.)
fn too_large(message: &str, conversation: &Conversation) -> Option<ApiError> {
    use agentix::TokenCounter;
    let config = conversation.config();
    let budget = config.context_budget.saturating_sub(config.injection_reserve);
    let tokens = agentix::CharsPerToken::default().count(message);
    (tokens > budget).then_some(ApiError::MessageTooLarge { tokens, budget })
}

/// The SSE event for one event of the turn's stream; `None` for the traces (events fired and
/// hook decisions) a client of this API does not read.
fn sse_event(event: &StreamEvent) -> Option<Event> {
    Some(match event {
        StreamEvent::Text(text) => json_event("text", &json!({ "text": text })),
        StreamEvent::ToolCall(call) => json_event("tool_call", call),
        StreamEvent::ToolResult(result) => json_event("tool_result", result),
        StreamEvent::Withdrawn { event, hook } => {
            json_event("withdrawn", &json!({ "event": event.to_string(), "hook": hook }))
        }
        StreamEvent::ModelCallFailed { step, error } => {
            json_event("model_call_failed", &json!({ "step": step, "error": error.to_string() }))
        }
        _ => return None,
    })
}

fn json_event(name: &str, data: &impl Serialize) -> Event {
    let data = serde_json::to_string(data).expect("the server's events serialize");
    Event::default().event(name).data(data)
}

pub(crate) fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // Nothing behind this lock is left half-written by a panic: a map insert or a clone.
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}
