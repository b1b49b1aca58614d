//! A turn per message: run in a task of its own, answered as JSON or streamed as Server-Sent
//! Events.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use agentix::{AnyAgent, AssistantMessage, Conversation, Error, Outcome, StreamEvent};
use axum::Json;
use axum::extract::rejection::JsonRejection;
use axum::http::{HeaderMap, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::{SinkExt, Stream, StreamExt};
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{App, Claim, Right, Start, Waiting};
use crate::limits::TurnSlot;
use crate::server::TurnRunning;
use crate::{ApiError, Identity};

/// Binds `$run` to the turn `$start` opens on `$conversation` (its type differs by how it
/// starts), and evaluates `$body` with it.
macro_rules! opened {
    ($agent:expr, $conversation:expr, $start:expr, |$run:ident| $body:expr) => {
        match $start {
            Start::Message(message) => {
                let $run = $agent.turn($conversation, message);
                $body
            }
            Start::Answer(answer) => {
                let $run = $agent.resume($conversation, answer);
                $body
            }
        }
    };
}

/// A turn counted as running (for a shutdown's drain) and against its caller's limit, while it
/// lives.
pub(super) type Counted = (TurnRunning, TurnSlot);

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
    pub(super) async fn send(
        self: Arc<Self>,
        identity: Identity,
        id: String,
        headers: &HeaderMap,
        body: Result<Json<SendMessage>, JsonRejection>,
    ) -> Response {
        if let Err(error) = self.check(&identity, &id, Right::Send).await {
            return error.into_response();
        }
        let message = match body {
            Ok(Json(SendMessage { message })) if message.trim().is_empty() => {
                return ApiError::EmptyMessage.into_response();
            }
            Ok(Json(SendMessage { message })) => message,
            Err(rejection) => return ApiError::BadRequest(rejection).into_response(),
        };
        let (counted, conversation) = match self.claim_for(&identity, &id).await {
            Ok(claimed) => claimed,
            Err(error) => return error.into_response(),
        };
        if let Some(too_large) = too_large(&message, &conversation) {
            return too_large.into_response();
        }
        self.run(id, conversation, Start::Message(message), headers, counted).await
    }

    /// Counts a turn as running — for a shutdown, which starts none after it began, and for
    /// `identity`'s limit — then claims the conversation for it. Counted before the claim: a
    /// conversation claimed is a turn that will run, whatever signal comes.
    pub(super) async fn claim_for(
        &self,
        identity: &Identity,
        id: &str,
    ) -> Result<(Counted, Claim), ApiError> {
        // Counted first, then checked: a shutdown that sets the flag and then counts the turns
        // either sees this one or is seen by it.
        let running = TurnRunning::new(&self.turns);
        if self.turns.stopping() {
            return Err(ApiError::ShuttingDown);
        }
        let slot = self.counters.start_turn(&identity.subject)?;
        Ok(((running, slot), self.claim(id).await?))
    }

    /// Runs a turn — a new one, or a suspended one going on — in a task of its own, answered
    /// as JSON or streamed.
    pub(super) async fn run(
        self: Arc<Self>,
        id: String,
        conversation: Claim,
        start: Start,
        headers: &HeaderMap,
        counted: Counted,
    ) -> Response {
        if wants_events(headers) {
            return Sse::new(self.stream_turn(id, conversation, start, counted))
                .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
                .into_response();
        }
        let turn = tokio::spawn(async move {
            let _counted = counted;
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
        counted: Counted,
    ) -> futures::channel::mpsc::Receiver<Result<Event, Infallible>> {
        let (events, received) = futures::channel::mpsc::channel(64);
        let mut relayed = events.clone();
        let turn = tokio::spawn(async move {
            let _counted = counted;
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
    use agentix::context::TokenCounter;
    let config = conversation.config();
    let budget = config.context_budget.saturating_sub(config.injection_reserve);
    let tokens = agentix::context::CharsPerToken::default().count(message);
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
