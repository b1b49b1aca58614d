//! What the model's calls cost, as the turn reports it to hooks, and what a stream that breaks
//! off takes back: the meter counts every call the model answered, a `wrap_model` hook's
//! discarded ones included; `last_usage` is the answer at hand's; a broken stream withdraws
//! what it showed once.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use agentix::event::{AfterModel, BeforeModel, Post};
use agentix::{
    Agent, AssistantMessage, Conversation, Hook, Model, Outcome, StreamEvent, ToolCall, Turn,
    Verdict,
    model::{Chunk, ModelError, ModelRequest, ModelResponse, NextModel, Usage},
};
use futures::{Stream, StreamExt};
use serde_json::json;
use tests::Weather;

/// The usage of the `n`th call (from 1): n tokens in, 10 n out, n cached.
fn usage(n: u32) -> Usage {
    Usage { input_tokens: n, output_tokens: 10 * n, cache_read_tokens: n, cache_write_tokens: 0 }
}

/// Answers from a script of streams, one per call, each chunk in turn; the `n`th answer
/// reports `usage(n)`.
struct Scripted {
    streams: Vec<Vec<Result<Chunk, ModelError>>>,
    calls: AtomicUsize,
}

impl Scripted {
    fn new(streams: Vec<Vec<Result<Chunk, ModelError>>>) -> Self {
        Scripted { streams, calls: AtomicUsize::new(0) }
    }
}

impl Model for Scripted {
    async fn complete(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        let mut message = AssistantMessage::default();
        let mut spent = Usage::default();
        let mut chunks = std::pin::pin!(self.stream(request));
        while let Some(chunk) = chunks.next().await {
            match chunk? {
                Chunk::Text(text) => message.content.push(text.into()),
                Chunk::ToolCall(call) => message = message.with_tool_call(call),
                Chunk::Usage(usage) => spent = usage,
            }
        }
        Ok(ModelResponse { message, usage: spent })
    }

    fn stream(
        &self,
        _request: &ModelRequest,
    ) -> impl Stream<Item = Result<Chunk, ModelError>> + Send {
        let call = self.calls.fetch_add(1, Ordering::Relaxed);
        let mut chunks = self.streams[call].clone();
        if chunks.iter().all(Result::is_ok) {
            chunks.push(Ok(Chunk::Usage(usage(call as u32 + 1))));
        }
        futures::stream::iter(chunks)
    }
}

fn text(text: &str) -> Vec<Result<Chunk, ModelError>> {
    vec![Ok(Chunk::Text(text.into()))]
}

/// What an `after_model` hook read: the answer's usage, and the turn's.
type Read = (Option<Usage>, Usage);

/// Calls the model twice on the first step and keeps the second answer; records what
/// `after_model` and `post` read of the usage.
#[derive(Default)]
struct Meter {
    twice: bool,
    /// `before_model` answers in the model's place from this step (0-based) on.
    stop_from_step: Option<usize>,
    steps: AtomicUsize,
    seen: Arc<Mutex<Vec<Read>>>,
    total: Arc<Mutex<Option<Usage>>>,
}

#[agentix::hook]
impl Hook for Meter {
    async fn before_model(&self, _: &mut ModelRequest, _: &mut Turn) -> Verdict<BeforeModel> {
        let step = self.steps.fetch_add(1, Ordering::Relaxed);
        match self.stop_from_step {
            Some(from) if step >= from => Verdict::stop(AssistantMessage::text("from the cache")),
            _ => Verdict::Continue,
        }
    }

    async fn wrap_model(
        &self,
        request: &ModelRequest,
        _turn: &Turn,
        next: &impl NextModel,
    ) -> Result<ModelResponse, ModelError> {
        if self.twice {
            let _discarded = next.call(request).await?;
        }
        next.call(request).await
    }

    async fn after_model(&self, _: &mut AssistantMessage, turn: &mut Turn) -> Verdict<AfterModel> {
        self.seen.lock().unwrap().push((turn.last_usage(), turn.usage()));
        Verdict::Continue
    }

    async fn post(&self, _: &Outcome, turn: &mut Turn) -> Verdict<Post> {
        *self.total.lock().unwrap() = Some(turn.usage());
        Verdict::Continue
    }
}

#[tokio::test]
async fn the_meter_counts_every_call_the_model_answered() {
    let model = Scripted::new(vec![text("discarded"), text("kept")]);
    let meter = Meter { twice: true, ..Meter::default() };
    let (seen, total) = (Arc::clone(&meter.seen), Arc::clone(&meter.total));
    let agent = Agent::builder(model).hook(meter).build();
    let reply = agent.run(&mut Conversation::new(), "hi").await.unwrap();
    assert_eq!(reply.joined_text(), "kept");
    let both =
        Usage { input_tokens: 3, output_tokens: 30, cache_read_tokens: 3, cache_write_tokens: 0 };
    // The answer at hand cost usage(2); the turn, both calls.
    assert_eq!(*seen.lock().unwrap(), [(Some(usage(2)), both)]);
    assert_eq!(*total.lock().unwrap(), Some(both));
}

#[tokio::test]
async fn an_answer_a_before_model_hook_gave_cost_nothing() {
    let call = ToolCall::new("call_1", "get_weather", json!({ "city": "Oslo" }));
    let model = Scripted::new(vec![vec![Ok(Chunk::ToolCall(call))]]);
    let meter = Meter { stop_from_step: Some(1), ..Meter::default() };
    let seen = Arc::clone(&meter.seen);
    let agent = Agent::builder(model).tool(Weather::default()).hook(meter).build();
    let reply = agent.run(&mut Conversation::new(), "weather?").await.unwrap();
    assert_eq!(reply.joined_text(), "from the cache");
    assert_eq!(*seen.lock().unwrap(), [(Some(usage(1)), usage(1)), (None, usage(1))]);
}

/// Retries the model once when it fails.
struct RetryOnce;

#[agentix::hook]
impl Hook for RetryOnce {
    async fn wrap_model(
        &self,
        request: &ModelRequest,
        _turn: &Turn,
        next: &impl NextModel,
    ) -> Result<ModelResponse, ModelError> {
        match next.call(request).await {
            Ok(response) => Ok(response),
            Err(_) => next.call(request).await,
        }
    }
}

async fn streamed(first: Vec<Result<Chunk, ModelError>>) -> Vec<StreamEvent> {
    let model = Scripted::new(vec![first, text("Whole this time.")]);
    let agent = Agent::builder(model).hook(RetryOnce).build();
    let mut conversation = Conversation::new();
    let events: Vec<StreamEvent> = agent.turn(&mut conversation, "hi").stream().collect().await;
    conversation.validate().unwrap();
    assert!(
        matches!(events.last(), Some(StreamEvent::Finished(Ok(answer))) if answer.joined_text() == "Whole this time."),
        "{:?}",
        events.last()
    );
    events
}

fn withdrawn(events: &[StreamEvent]) -> usize {
    events.iter().filter(|event| matches!(event, StreamEvent::Withdrawn { .. })).count()
}

#[tokio::test]
async fn a_stream_that_breaks_off_withdraws_what_it_showed_once() {
    let broken =
        vec![Ok(Chunk::Text("Half an ".into())), Err(ModelError::Transport("reset".into()))];
    let events = streamed(broken).await;
    assert_eq!(withdrawn(&events), 1, "once, though the wrap hook called again: {events:?}");
    let call = ToolCall::new("call_1", "get_weather", json!({ "city": "Oslo" }));
    let broken = vec![Ok(Chunk::ToolCall(call)), Err(ModelError::Transport("reset".into()))];
    assert_eq!(withdrawn(&streamed(broken).await), 1, "a streamed call is taken back too");
    let nothing_shown = vec![Err(ModelError::Transport("refused".into()))];
    assert_eq!(withdrawn(&streamed(nothing_shown).await), 0, "nothing to take back");
}
