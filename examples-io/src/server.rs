//! An agent served over HTTP with `axum`: conversations kept in the server's memory — or in a
//! store ([`router_with_store`]: SQLite, or PostgreSQL shared by many servers) — a turn per
//! request, answered as JSON or streamed as Server-Sent Events.
//!
//! | request | answer |
//! |---|---|
//! | `POST /conversations` | `201 {"id": "…"}` |
//! | `GET /conversations/{id}` | `200`, the conversation (its log, config and scope) as JSON |
//! | `POST /conversations/{id}/messages` `{"message": "…"}` | `200 {"conversation", "turn", "text", "message"}` |
//! | the same, with `Accept: text/event-stream` | the turn as it runs: `text`, `tool_call`, `tool_result`, `withdrawn` events, then `done` (the JSON above) or `failed` (the error below) |
//!
//! Every error is JSON, `{"error": {"code", "message"}}`: `404 unknown_conversation`,
//! `400 empty_message`, `400`/`415`/`422 bad_request` for a body that is not the JSON above,
//! `409 turn_running` when a turn is already running on the conversation (two turns never
//! interleave on one log; a read of its log does not wait for the turn either, and gets the same
//! 409), and for a turn that ended in an error `422 halted` (a hook halted it),
//! `502 model_failed`, `504 turn_timed_out` (past the conversation's `turn_timeout`), or
//! `500 turn_failed`, with the turn's number.
//!
//! A turn runs in a task of its own: a client that disconnects does not cancel it, so the log
//! always holds whole turns.
//!
//! With a store, each turn loads the conversation, commits each step as it runs, and a server
//! that restarts serves the conversations it served before. Two servers sharing a PostgreSQL
//! store never interleave turns on one log: the turn that commits second gets
//! `409 conflict`. A store that fails, at a load or at a turn's commit, is `500 store_failed`;
//! a conversation whose turn waits for a person's approval (an agent whose approver suspends,
//! here or in another process sharing the store) is `409 awaiting_approval` until it is
//! resumed — this example serves no route to answer it.

use std::collections::HashMap;
use std::convert::Infallible;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentix::pipeline::Pipeline;
use agentix::{
    Agent, AnyAgent, AssistantMessage, Chunk, Conversation, Error, Model, ModelError, ModelRequest,
    ModelResponse, Outcome, Part, Role, StreamEvent, ToolCall, ToolResult, ToolSet,
};
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
use tokio::sync::{Mutex as TurnLock, OwnedMutexGuard};

/// The server's state: the agent, the conversations by id, and the store they live in, if
/// they live in one (the slots then only keep a process from running two turns at once).
struct App<R> {
    agent: R,
    conversations: Mutex<HashMap<String, Arc<Slot>>>,
    store: Option<Store>,
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
    routes(App { agent, conversations: Mutex::default(), store: None })
}

/// The routes above, serving `agent`, conversations in `store`.
pub fn router_with_store<R>(agent: R, store: Store) -> Router
where
    R: AnyAgent + 'static,
{
    routes(App { agent, conversations: Mutex::default(), store: Some(store) })
}

fn routes<R>(app: App<R>) -> Router
where
    R: AnyAgent + 'static,
{
    let app = Arc::new(app);
    Router::new()
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
            let stored = store.load(id).await.map_err(|error| self.forget_unknown(id, error))?;
            *conversation = stored.conversation;
            version = Some(stored.version);
        }
        Ok(Claim { conversation, version, _running: running })
    }

    /// A store's error; an id the store does not know keeps no slot (a client asking for
    /// made-up ids must not grow the map).
    fn forget_unknown(&self, id: &str, error: StoreError) -> ApiError {
        if matches!(error, StoreError::NotFound { .. }) {
            lock(&self.conversations).remove(id);
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
            let stored = store.load(id).await.map_err(|error| self.forget_unknown(id, error))?;
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
        if wants_events(headers) {
            Sse::new(self.stream_turn(id, conversation, message))
                .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
                .into_response()
        } else {
            let turn = tokio::spawn(async move {
                let mut conversation = conversation;
                let outcome = match self.committer(&id, &conversation) {
                    Some(committer) => {
                        self.agent.turn(&mut conversation, message).commit(&committer).await
                    }
                    None => self.agent.run(&mut conversation, message).await,
                };
                answer(id, conversation.turns(), outcome)
            });
            match turn.await {
                Ok(Ok(answer)) => Json(answer).into_response(),
                Ok(Err(error)) => error.into_response(),
                Err(join) => ApiError::Crashed(join.to_string()).into_response(),
            }
        }
    }

    /// Runs the turn in a task of its own and hands its events to the response as they come.
    fn stream_turn(
        self: Arc<Self>,
        id: String,
        conversation: Claim,
        message: String,
    ) -> futures::channel::mpsc::Receiver<Result<Event, Infallible>> {
        let (mut events, received) = futures::channel::mpsc::channel(64);
        tokio::spawn(async move {
            let mut conversation = conversation;
            let outcome = match self.committer(&id, &conversation) {
                Some(committer) => {
                    let turn =
                        self.agent.turn(&mut conversation, message).commit(&committer).stream();
                    relay(turn, &mut events).await
                }
                None => {
                    relay(self.agent.turn(&mut conversation, message).stream(), &mut events).await
                }
            };
            let last = match answer(id, conversation.turns(), outcome) {
                Ok(answer) => json_event("done", &answer),
                Err(error) => json_event("failed", &error.body()),
            };
            let _ = events.send(Ok(last)).await;
        });
        received
    }
}

/// Hands the turn's events to the response as they come; the turn's outcome.
async fn relay(
    turn: impl Stream<Item = StreamEvent>,
    events: &mut futures::channel::mpsc::Sender<Result<Event, Infallible>>,
) -> Outcome {
    let mut turn = std::pin::pin!(turn);
    while let Some(event) = turn.next().await {
        if let StreamEvent::Finished(outcome) = event {
            return outcome;
        } else if let Some(event) = sse_event(&event) {
            // A client that went away does not stop the turn: it runs to its end.
            let _ = events.send(Ok(event)).await;
        }
    }
    unreachable!("a turn's stream ends with its outcome")
}

/// Whether the client asked for the turn as Server-Sent Events.
fn wants_events(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .any(|accept| accept.split(',').any(|kind| kind.trim().starts_with("text/event-stream")))
}

fn answer(conversation: String, turn: u64, outcome: Outcome) -> Result<TurnAnswer, ApiError> {
    match outcome {
        Ok(message) => {
            let text = message.joined_text().into_owned();
            Ok(TurnAnswer { conversation, turn, text, message })
        }
        Err(error) => Err(ApiError::Turn { turn, error }),
    }
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
        _ => return None,
    })
}

fn json_event(name: &str, data: &impl Serialize) -> Event {
    let data = serde_json::to_string(data).expect("the server's events serialize");
    Event::default().event(name).data(data)
}

/// Why a request failed, as the client reads it.
#[derive(Debug)]
pub enum ApiError {
    /// No conversation has that id.
    UnknownConversation(String),
    /// The message is empty, or only whitespace.
    EmptyMessage,
    /// The body is not `{"message": "…"}`.
    BadRequest(JsonRejection),
    /// A turn is running on the conversation.
    TurnRunning(String),
    /// The turn ended with an error; the log records it.
    Turn {
        /// The turn's number.
        turn: u64,
        /// What ended it.
        error: Error,
    },
    /// The task running the turn ended without an outcome.
    Crashed(String),
    /// The store failed, or has no conversation of that id.
    Store(StoreError),
}

impl ApiError {
    fn status(&self) -> StatusCode {
        match self {
            ApiError::UnknownConversation(_) => StatusCode::NOT_FOUND,
            ApiError::EmptyMessage => StatusCode::BAD_REQUEST,
            ApiError::BadRequest(rejection) => rejection.status(),
            ApiError::TurnRunning(_) => StatusCode::CONFLICT,
            ApiError::Store(StoreError::NotFound { .. }) => StatusCode::NOT_FOUND,
            ApiError::Store(_) => StatusCode::INTERNAL_SERVER_ERROR,
            ApiError::Turn { error: Error::Commit(error), .. } if error.conflict => {
                StatusCode::CONFLICT
            }
            ApiError::Turn { error: Error::AwaitingApproval { .. }, .. } => StatusCode::CONFLICT,
            ApiError::Turn { error: Error::Halted { .. }, .. } => StatusCode::UNPROCESSABLE_ENTITY,
            ApiError::Turn { error: Error::Model(_), .. } => StatusCode::BAD_GATEWAY,
            ApiError::Turn { error: Error::TurnTimedOut { .. }, .. } => StatusCode::GATEWAY_TIMEOUT,
            ApiError::Turn { .. } | ApiError::Crashed(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn body(&self) -> serde_json::Value {
        let (code, message) = match self {
            ApiError::UnknownConversation(id) => {
                ("unknown_conversation", format!("no conversation has the id `{id}`"))
            }
            ApiError::EmptyMessage => ("empty_message", "the message is empty".to_owned()),
            ApiError::BadRequest(rejection) => ("bad_request", rejection.body_text()),
            ApiError::TurnRunning(id) => (
                "turn_running",
                format!("a turn is already running on conversation `{id}`; send after it ends"),
            ),
            ApiError::Turn { turn, error } => {
                let code = match error {
                    Error::Commit(error) if error.conflict => "conflict",
                    Error::Commit(_) => "store_failed",
                    Error::AwaitingApproval { .. } => "awaiting_approval",
                    Error::Halted { .. } => "halted",
                    Error::Model(_) => "model_failed",
                    Error::TurnTimedOut { .. } => "turn_timed_out",
                    _ => "turn_failed",
                };
                return json!({ "error": { "code": code, "message": error.to_string(), "turn": turn } });
            }
            ApiError::Crashed(why) => ("turn_crashed", format!("the turn's task ended: {why}")),
            ApiError::Store(StoreError::NotFound { conversation }) => {
                ("unknown_conversation", format!("no conversation has the id `{conversation}`"))
            }
            ApiError::Store(error) => ("store_failed", error.to_string()),
        };
        json!({ "error": { "code": code, "message": message } })
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status(), Json(self.body())).into_response()
    }
}

pub(crate) fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // Nothing behind this lock is left half-written by a panic: a map insert or a clone.
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The model the example serves when no real one is configured: for each user message it calls
/// `get_weather` with the message as the city, then answers with what the tool said, streamed a
/// word at a time. Deterministic: the same conversation gets the same answers and call ids.
#[derive(Clone, Debug, Default)]
pub struct DemoModel {
    /// How long each call takes, as a real model's would.
    pub latency: Duration,
}

impl DemoModel {
    fn answer(request: &ModelRequest) -> AssistantMessage {
        if let Some(result) = tool_result_answered(request) {
            return AssistantMessage::text(format!("Here is the weather: {}.", result.output));
        }
        let city = last_user_text(request);
        let id = format!("call_{}", request.messages.len());
        let arguments = json!({ "city": city.trim() });
        AssistantMessage::default().with_tool_call(ToolCall::new(id, "get_weather", arguments))
    }
}

impl Model for DemoModel {
    async fn complete(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        if !self.latency.is_zero() {
            tokio::time::sleep(self.latency).await;
        }
        Ok(DemoModel::answer(request).into())
    }

    fn stream(
        &self,
        request: &ModelRequest,
    ) -> impl Stream<Item = Result<Chunk, ModelError>> + Send {
        let answer = self.complete(request);
        async_stream::stream! {
            let response = match answer.await {
                Ok(response) => response,
                Err(error) => {
                    yield Err(error);
                    return;
                }
            };
            for chunk in Chunk::of(response) {
                match chunk {
                    Chunk::Text(text) => {
                        for word in text.split_inclusive(' ') {
                            tokio::task::yield_now().await;
                            yield Ok(Chunk::Text(word.to_owned()));
                        }
                    }
                    other => yield Ok(other),
                }
            }
        }
    }
}

/// The tool result a demo model's request ends with, if it ends with one: the model answers
/// with it.
pub(crate) fn tool_result_answered(request: &ModelRequest) -> Option<&ToolResult> {
    request.messages.last()?.content.iter().find_map(|part| match part {
        Part::ToolResult(result) => Some(result),
        _ => None,
    })
}

/// What the user wrote last, in a demo model's request.
pub(crate) fn last_user_text(request: &ModelRequest) -> String {
    let user = request.messages.iter().rev().find(|message| message.role == Role::User);
    user.map(|message| message.text().into_owned()).unwrap_or_default()
}

/// `post`: logs how each turn ended.
#[agentix::hook(post)]
async fn log_turn(outcome: &Outcome, turn: &agentix::Turn) {
    match outcome {
        Ok(answer) => {
            tracing::info!(turn = turn.turn_ref().0, answer = %answer.joined_text(), "turn completed")
        }
        Err(error) => tracing::warn!(turn = turn.turn_ref().0, %error, "turn failed"),
    }
}

/// The agent `cargo run -p examples-io --example server` serves: the demo model, `get_weather`,
/// and a `post` hook that logs each turn.
pub fn demo_agent() -> Agent<DemoModel, impl ToolSet, impl Pipeline> {
    Agent::builder(DemoModel::default())
        .system("You report the weather.")
        .tool(examples::weather::GetWeather)
        .hook(log_turn)
        .build()
}

/// How to talk to the server at `addr`, with curl.
pub fn usage(addr: std::net::SocketAddr) -> String {
    format!(
        "Serving an agent on http://{addr}. Try:\n\
         \n  curl -s -X POST http://{addr}/conversations\
         \n  curl -s -X POST http://{addr}/conversations/ID/messages -H 'content-type: application/json' -d '{{\"message\": \"Oslo\"}}'\
         \n  curl -N -X POST http://{addr}/conversations/ID/messages -H 'content-type: application/json' -H 'accept: text/event-stream' -d '{{\"message\": \"Bergen\"}}'\
         \n  curl -s http://{addr}/conversations/ID\n\
         \nCtrl-C stops it."
    )
}
