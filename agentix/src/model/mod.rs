//! Models: the trait the loop calls, the request it sends, and a scripted model.

use std::collections::VecDeque;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::support::lock;

use futures::Stream;

use crate::message::{AssistantMessage, ToolCall};

pub(crate) mod request;
pub(crate) mod strict;

/// What a `wrap_model` hook calls to go on inward.
pub use crate::hook::NextModel;
pub use request::{
    Chunk, ModelError, ModelParams, ModelRequest, ModelResponse, OutputSchema, OutputType, Usage,
};
pub use strict::unstrict;

/// A language model. The loop calls it once per step (and again on each retry), always through
/// the `wrap_model` hooks.
pub trait Model: Send + Sync {
    /// Answers one request.
    fn complete(
        &self,
        request: &ModelRequest,
    ) -> impl Future<Output = Result<ModelResponse, ModelError>> + Send;

    /// Answers one request as it is generated. The default completes the request and yields the
    /// whole answer; a provider that streams overrides it.
    fn stream(
        &self,
        request: &ModelRequest,
    ) -> impl Stream<Item = Result<Chunk, ModelError>> + Send {
        async_stream::stream! {
            match self.complete(request).await {
                Ok(response) => {
                    for chunk in Chunk::of(response) {
                        yield Ok(chunk);
                    }
                }
                Err(error) => yield Err(error),
            }
        }
    }

    /// Who serves a request for `model` (a request's [`model`](ModelRequest::model); `None`
    /// for the default), as OpenTelemetry's GenAI conventions name providers (`openai`,
    /// `anthropic`, `gcp.gemini`, …): the `gen_ai.provider.name` of the turn's spans. By
    /// default, the model type's name: a model of your own names its provider, and a model that
    /// wraps another answers as the other does.
    fn provider(&self, model: Option<&str>) -> &str {
        let _ = model;
        type_name_alone::<Self>()
    }

    /// The model a request for `model` goes to, as its provider names it (`None` for the
    /// default: the model's own, if it knows it): the `gen_ai.request.model` of the turn's
    /// spans. By default, `model` as the request names it.
    fn model_name<'a>(&'a self, model: Option<&'a str>) -> Option<&'a str> {
        model
    }
}

/// A type's name without its path or parameters: `Metered` for `my_app::Metered<Inner>`.
fn type_name_alone<T: ?Sized>() -> &'static str {
    let name = crate::hook::short_type_name::<T>();
    name.split('<').next().unwrap_or(name)
}

impl<M: Model + ?Sized> Model for &M {
    fn provider(&self, model: Option<&str>) -> &str {
        (**self).provider(model)
    }

    fn model_name<'a>(&'a self, model: Option<&'a str>) -> Option<&'a str> {
        (**self).model_name(model)
    }

    fn complete(
        &self,
        request: &ModelRequest,
    ) -> impl Future<Output = Result<ModelResponse, ModelError>> + Send {
        (**self).complete(request)
    }

    fn stream(
        &self,
        request: &ModelRequest,
    ) -> impl Stream<Item = Result<Chunk, ModelError>> + Send {
        (**self).stream(request)
    }
}

impl<M: Model + ?Sized> Model for Arc<M> {
    fn provider(&self, model: Option<&str>) -> &str {
        (**self).provider(model)
    }

    fn model_name<'a>(&'a self, model: Option<&'a str>) -> Option<&'a str> {
        (**self).model_name(model)
    }

    fn complete(
        &self,
        request: &ModelRequest,
    ) -> impl Future<Output = Result<ModelResponse, ModelError>> + Send {
        (**self).complete(request)
    }

    fn stream(
        &self,
        request: &ModelRequest,
    ) -> impl Stream<Item = Result<Chunk, ModelError>> + Send {
        (**self).stream(request)
    }
}

/// A deterministic model for examples and tests: it answers from a queue of scripted responses,
/// in order, and records every request it receives.
///
/// ```
/// use agentix::ScriptedModel;
/// use serde_json::json;
///
/// let model = ScriptedModel::new()
///     .tool_call("get_weather", json!({ "city": "Oslo" }))
///     .text("It is sunny in Oslo.");
/// assert_eq!(model.remaining(), 2);
/// ```
#[derive(Debug, Default)]
pub struct ScriptedModel {
    script: Mutex<VecDeque<Result<AssistantMessage, ModelError>>>,
    requests: Mutex<Vec<ModelRequest>>,
    call_ids: AtomicU64,
    chunk_chars: Option<usize>,
}

impl ScriptedModel {
    /// A model with an empty script.
    pub fn new() -> Self {
        ScriptedModel::default()
    }

    /// Queues a response of one text part.
    pub fn text(self, text: impl Into<String>) -> Self {
        self.message(AssistantMessage::text(text))
    }

    /// Queues a response that calls one tool.
    pub fn tool_call(self, name: &str, arguments: serde_json::Value) -> Self {
        self.tool_calls([(name, arguments)])
    }

    /// Queues a response that calls several tools at once.
    pub fn tool_calls<'a>(
        self,
        calls: impl IntoIterator<Item = (&'a str, serde_json::Value)>,
    ) -> Self {
        let mut message = AssistantMessage::default();
        for (name, arguments) in calls {
            let id = format!("call_{}", self.call_ids.fetch_add(1, Ordering::Relaxed) + 1);
            message = message.with_tool_call(ToolCall::new(id, name, arguments));
        }
        self.message(message)
    }

    /// Queues a response.
    pub fn message(self, message: AssistantMessage) -> Self {
        lock(&self.script).push_back(Ok(message));
        self
    }

    /// Queues a failure.
    pub fn error(self, error: ModelError) -> Self {
        lock(&self.script).push_back(Err(error));
        self
    }

    /// Streams text in chunks of `chars` characters (by default, each text part is one chunk),
    /// pausing between chunks as a provider's stream does.
    pub fn chunked(mut self, chars: usize) -> Self {
        self.chunk_chars = Some(chars.max(1));
        self
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<ModelRequest> {
        lock(&self.requests).clone()
    }

    /// How many requests it has received.
    pub fn calls(&self) -> usize {
        lock(&self.requests).len()
    }

    /// How many scripted responses are left.
    pub fn remaining(&self) -> usize {
        lock(&self.script).len()
    }
}

impl Model for ScriptedModel {
    fn provider(&self, _model: Option<&str>) -> &str {
        "scripted"
    }

    async fn complete(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        let call = {
            let mut requests = lock(&self.requests);
            requests.push(request.clone());
            requests.len()
        };
        let next = lock(&self.script).pop_front();
        next.unwrap_or(Err(ModelError::ScriptExhausted { call })).map(ModelResponse::from)
    }

    fn stream(
        &self,
        request: &ModelRequest,
    ) -> impl Stream<Item = Result<Chunk, ModelError>> + Send {
        let chunk_chars = self.chunk_chars;
        let answer = self.complete(request);
        async_stream::stream! {
            match answer.await {
                Ok(response) => {
                    for chunk in Chunk::of(response) {
                        match (chunk, chunk_chars) {
                            (Chunk::Text(text), Some(size)) => {
                                let chars: Vec<char> = text.chars().collect();
                                for piece in chars.chunks(size) {
                                    // Like a provider's stream, let the consumer run between chunks.
                                    YieldNow(false).await;
                                    yield Ok(Chunk::Text(piece.iter().collect()));
                                }
                            }
                            (chunk, _) => yield Ok(chunk),
                        }
                    }
                }
                Err(error) => yield Err(error),
            }
        }
    }
}

/// Pending once, then ready: a point where the task lets others run, on any executor.
struct YieldNow(bool);

impl Future for YieldNow {
    type Output = ();

    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<()> {
        if self.0 {
            return std::task::Poll::Ready(());
        }
        self.0 = true;
        cx.waker().wake_by_ref();
        std::task::Poll::Pending
    }
}
