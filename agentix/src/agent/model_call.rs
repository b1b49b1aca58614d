//! Calling the model through the `wrap_model` onion, and assembling its answer.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Mutex, PoisonError};

use std::pin::pin;

use futures::StreamExt;
use futures::future::{Either, select};

use std::time::{Duration, Instant};

use super::effects::Effects;
use crate::approval::Approver;
use crate::context::AuditSink;
use crate::durable::ModelCall;
use crate::error::Error;
use crate::event::EventKind;
use crate::hook::NextModel;
use crate::message::{AssistantMessage, Part, ToolCall};
use crate::model::{Chunk, Model, ModelError, ModelRequest, ModelResponse, Usage};
use crate::observe::{Observation, Observer};
use crate::pipeline::{Pipeline, SkippedWires, node::Chain};
use crate::tool::ToolSet;
use crate::trace::{self, Spanned, TurnTrace};
use crate::transform::StreamTransformer;
use crate::turn::{Blame, Turn};
use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::error::Component;
use crate::pipeline::HookFailure;
use crate::support::{Caught, caught, panic_message};
use crate::turn::Culprit;

use super::{Agent, fire};

impl<M: Model, T: ToolSet, P: Pipeline, A: Approver, X: StreamTransformer> Agent<M, T, P, A, X> {
    /// Calls the model through the `wrap_model` hooks. Besides the answer, what every call the
    /// model answered cost — a wrap hook may call it more than once, or fail after it answered.
    /// A effects hears of each call ([`Commit::model_call`]).
    pub(super) async fn call_model<O: Observer, K: Effects>(
        &self,
        request: &ModelRequest,
        turn: &Turn,
        observer: &O,
        effects: &K,
    ) -> (Result<ModelResponse, Error>, Usage) {
        fire(observer, turn, EventKind::WrapModel);
        let audit = self.settings.audit.as_deref();
        let spent = Mutex::new(Usage::default());
        let model = CallModel {
            model: &self.model,
            turn,
            audit,
            observer,
            transformer: &self.transformer,
            streamed: AtomicBool::new(false),
            spent: &spent,
            effects,
            calls: AtomicU32::new(0),
        };
        let result = self.hooks.model_onion(turn, observer, model).call(request).await;
        let spent = spent.into_inner().unwrap_or_else(PoisonError::into_inner);
        (self.settle_model_result(result, turn), spent)
    }

    /// Calls the model as [`call_model`](Self::call_model) does, the `tripwire` hooks beside
    /// it, polled first: a trip drops the call where it stands — nothing of it is journaled,
    /// committed or counted, what it streamed is withdrawn — and ends the turn. A call that
    /// answers first waits for the tripwires, which may still trip and discard the answer.
    pub(super) async fn call_beside_tripwires<O: Observer, K: Effects>(
        &self,
        request: &ModelRequest,
        turn: &mut Turn,
        observer: &O,
        effects: &K,
    ) -> Result<(Result<ModelResponse, Error>, Usage), Error> {
        let skipped = SkippedWires::default();
        let checked = {
            let shared = &*turn;
            fire(observer, shared, EventKind::Tripwire);
            let wires = pin!(self.hooks.chain().tripwire(request, shared, observer, &skipped));
            let call = pin!(self.call_model(request, shared, observer, effects));
            match select(wires, call).await {
                Either::Left((Ok(()), call)) => Ok(call.await),
                Either::Left((Err(tripped), _cancelled)) => Err(tripped),
                Either::Right((answered, wires)) => wires.await.map(|()| answered),
            }
        };
        for (hook, failure) in skipped.into_inner().unwrap_or_else(PoisonError::into_inner) {
            let reason = failure.describe(EventKind::Tripwire, hook);
            turn.record_skipped(EventKind::Tripwire, hook, reason);
        }
        checked.map_err(|tripped| {
            if O::STREAMS {
                let hook = Some(tripped.hook());
                observer.observe(&Observation::Withdrawn { event: EventKind::Tripwire, hook });
            }
            tripped.error()
        })
    }

    fn settle_model_result(
        &self,
        result: Result<ModelResponse, ModelError>,
        turn: &Turn,
    ) -> Result<ModelResponse, Error> {
        if let Some(aborted) = turn.aborted.get() {
            return Err(aborted.error());
        }
        match result {
            Ok(response) => Ok(response),
            // An error a wrap hook made itself names the hook; one it passed on is the model's.
            Err(error) => Err(match turn.model_blame() {
                Blame::Hook(hook) => Error::HookFailed {
                    event: EventKind::WrapModel,
                    hook,
                    message: error.to_string(),
                },
                Blame::Model | Blame::Nobody => Error::Model(error),
            }),
        }
    }
}

/// The innermost `next` of the `wrap_model` chain: the model itself.
struct CallModel<'a, M, O, X, K> {
    model: &'a M,
    turn: &'a Turn,
    audit: Option<&'a dyn AuditSink>,
    observer: &'a O,
    transformer: &'a X,
    /// Whether a call of this step has streamed already.
    streamed: AtomicBool,
    /// What the calls the model answered cost.
    spent: &'a Mutex<Usage>,
    /// Hears of each call, if the turn commits; journals it, if the turn has a journal.
    effects: &'a K,
    /// Calls made through this `next`, for the journal's names.
    calls: AtomicU32,
}

impl<M: Model, O: Observer, X: StreamTransformer, K: Effects> NextModel
    for CallModel<'_, M, O, X, K>
{
    async fn call(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        if self.turn.aborted.get().is_some() {
            return Err(ModelError::Aborted);
        }
        if let Some(audit) = self.audit {
            // An unaudited request is not sent.
            let record = || audit.record(self.turn.turn_ref(), request);
            if let Err(payload) = catch_unwind(AssertUnwindSafe(record)) {
                return Err(self.abandon(Component::AuditSink, payload));
            }
        }
        let limit = self.turn.config().model_timeout;
        let started = K::COMMITS.then(Instant::now);
        // Through the journal, if the turn has one: the model's own answer or error is
        // recorded, and a replay returns it without calling the model (nor opening its span).
        let answer = || self.effects.answer(&self.calls, limit, self.turn, self.answer(request));
        // A journal bounds the call itself, to record the timeout as the call's outcome.
        let outer = if K::JOURNALS { None } else { limit };
        let result = match bounded!(outer, caught(answer)) {
            Ok(Ok(Ok(response))) => {
                *self.spent.lock().unwrap_or_else(PoisonError::into_inner) += response.usage;
                well_formed(response)
            }
            ended => ModelError::settle(ended),
        };
        if let Some(turn) = &self.turn.trace
            && let Some(span) = turn.end(None)
        {
            trace::chat_ended(&span, &result);
        }
        if let Some(started) = started {
            self.tell_committer(request, &result, started.elapsed())?;
        }
        if !O::SILENT
            && let Err(error) = &result
        {
            self.failed(error);
        }
        self.turn.settle_model_call(None, result.is_ok());
        result
    }
}

impl<M: Model, O: Observer, X: StreamTransformer, K: Effects> CallModel<'_, M, O, X, K> {
    /// The span of one call of the model (`chat`), under the turn's.
    #[cold]
    fn chat_span(&self, turn: &TurnTrace, request: &ModelRequest) -> tracing::Span {
        let (conversation, step) = (self.turn.conversation().id(), self.turn.step());
        let attempt = turn.next_model_attempt(step);
        let requested = request.model.as_deref();
        let (provider, model) = (self.model.provider(requested), self.model.model_name(requested));
        let streams = O::STREAMS;
        trace::chat_span(turn, provider, model, request, conversation, streams, step, attempt)
    }

    /// The model's answer, its text through the stream transformers: streamed piece by piece
    /// when the observer wants the pieces, whole otherwise — assembled the same way either way.
    /// A traced turn's call runs in its span, opened here (a call a journal replays, never
    /// made, opens none), which hears when the first piece came.
    async fn answer(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        let traced = self.turn.trace.as_deref();
        if let Some(turn) = traced {
            turn.open(None, || self.chat_span(turn, request));
        }
        // Opened above: nothing to open when polled.
        let opened = None::<fn() -> tracing::Span>;
        if O::STREAMS {
            let mut waiting = traced.map(|turn| (turn, Instant::now()));
            let mut answer = Assembly::new(self.transformer);
            // A wrap hook that calls the model again discards what the earlier call streamed.
            if self.streamed.swap(true, Ordering::Relaxed) {
                self.observer
                    .observe(&Observation::Withdrawn { event: EventKind::WrapModel, hook: None });
            }
            let chunks = Spanned::new(traced, None, opened, self.model.stream(request));
            let mut chunks = std::pin::pin!(chunks);
            let mut shown = false;
            while let Some(chunk) = chunks.next().await {
                let chunk = match chunk {
                    Ok(chunk) => {
                        shown |= !matches!(chunk, Chunk::Usage(_));
                        chunk
                    }
                    Err(error) => {
                        // A stream that broke off takes back what it had shown, text or calls,
                        // once: a wrap hook that calls again has nothing left to withdraw.
                        if shown {
                            let withdrawn =
                                Observation::Withdrawn { event: EventKind::WrapModel, hook: None };
                            self.observer.observe(&withdrawn);
                        }
                        self.streamed.store(false, Ordering::Relaxed);
                        return Err(error);
                    }
                };
                if let Some((turn, started)) = waiting.take()
                    && let Some(span) = turn.span_of(None)
                {
                    trace::first_chunk(&span, started);
                }
                answer
                    .add(chunk, self.observer)
                    .map_err(|panic| self.abandon_transformer(panic))?;
            }
            return answer.finish(self.observer).map_err(|panic| self.abandon_transformer(panic));
        }
        let response = Spanned::new(traced, None, opened, self.model.complete(request)).await?;
        if X::IDENTITY && Assembly::<X>::assembled(&response.message) {
            return Ok(response);
        }
        let mut answer = Assembly::new(self.transformer);
        for chunk in Chunk::of(response) {
            answer.add(chunk, &()).map_err(|panic| self.abandon_transformer(panic))?;
        }
        // Not streamed: the observer gets no pieces, the transformers' held-back tail included.
        answer.finish(&()).map_err(|panic| self.abandon_transformer(panic))
    }

    /// Tells the observer the call failed (not when the turn was aborted: its error says why).
    #[cold]
    fn failed(&self, error: &ModelError) {
        if !matches!(error, ModelError::Aborted) {
            let step = self.turn.step();
            self.observer.observe(&Observation::ModelCallFailed { step, error });
        }
    }

    /// Tells the effects of the call; its panic abandons the call.
    #[inline(never)]
    fn tell_committer(
        &self,
        request: &ModelRequest,
        result: &Result<ModelResponse, ModelError>,
        latency: Duration,
    ) -> Result<(), ModelError> {
        let call = ModelCall {
            turn: self.turn.turn_ref(),
            step: self.turn.step(),
            request,
            outcome: result.as_ref(),
            latency,
        };
        catch_unwind(AssertUnwindSafe(|| self.effects.model_call(&call)))
            .map_err(|payload| self.abandon(Component::Committer, payload))
    }

    /// Abandons the call: `component` panicked. The turn ends with the component's error.
    #[cold]
    fn abandon(&self, component: Component, payload: Box<dyn Any + Send>) -> ModelError {
        let message = panic_message(payload.as_ref());
        self.turn.abort(Culprit::Component(component), HookFailure::Panicked { message });
        ModelError::Aborted
    }

    #[cold]
    fn abandon_transformer(&self, payload: Box<dyn Any + Send>) -> ModelError {
        self.abandon(Component::Transformer, payload)
    }
}

/// The model's answer, if the loop can log it: its tool calls' ids tell their results apart.
#[inline]
fn well_formed(response: ModelResponse) -> Result<ModelResponse, ModelError> {
    match response.message.duplicate_call_id() {
        None => Ok(response),
        Some(id) => Err(ModelError::DuplicateCallId { id: id.to_owned() }),
    }
}

/// A model's answer, built from its chunks: the text (through the transformers) in one part,
/// then the tool calls in the order they came.
struct Assembly<'a, X: StreamTransformer> {
    transformer: &'a X,
    state: X::State,
    text: String,
    calls: Vec<ToolCall>,
    usage: Usage,
}

impl<'a, X: StreamTransformer> Assembly<'a, X> {
    fn new(transformer: &'a X) -> Self {
        Assembly {
            transformer,
            state: X::State::default(),
            text: String::new(),
            calls: Vec::new(),
            usage: Usage::default(),
        }
    }

    /// Whether `message` is already as assembling it would leave it: its text in one leading
    /// part, then its tool calls.
    fn assembled(message: &AssistantMessage) -> bool {
        let calls = match message.content.split_first() {
            Some((Part::Text(text), calls)) if !text.is_empty() => calls,
            _ => &message.content[..],
        };
        calls.iter().all(|part| matches!(part, Part::ToolCall(_)))
    }

    /// Adds a chunk; a transformer's panic is returned.
    fn add(&mut self, chunk: Chunk, observer: &impl Observer) -> Caught<()> {
        match chunk {
            Chunk::Text(piece) => {
                let (transformer, state) = (self.transformer, &mut self.state);
                let piece = transforming::<X, _>(|| transformer.transform(state, piece))?;
                self.emit(piece, observer);
            }
            Chunk::ToolCall(call) => {
                observer.observe(&Observation::ToolCallStreamed { call: &call });
                self.calls.push(call);
            }
            Chunk::Usage(usage) => self.usage = usage,
        }
        Ok(())
    }

    fn emit(&mut self, piece: String, observer: &impl Observer) {
        if !piece.is_empty() {
            observer.observe(&Observation::TextDelta { text: &piece });
            self.text.push_str(&piece);
        }
    }

    /// The assembled answer; a transformer's panic is returned.
    fn finish(mut self, observer: &impl Observer) -> Caught<ModelResponse> {
        let (transformer, state) = (self.transformer, &mut self.state);
        let rest = transforming::<X, _>(|| transformer.flush(state))?;
        self.emit(rest, observer);
        let mut message = AssistantMessage::default();
        if !self.text.is_empty() {
            message.content.push(Part::Text(self.text));
        }
        message.content.extend(self.calls.into_iter().map(Part::ToolCall));
        Ok(ModelResponse { message, usage: self.usage })
    }
}

/// Runs a stream transformer, catching its panic; the identity transformer cannot panic and is
/// not guarded.
#[inline]
fn transforming<X: StreamTransformer, R>(run: impl FnOnce() -> R) -> Caught<R> {
    if X::IDENTITY { Ok(run()) } else { catch_unwind(AssertUnwindSafe(run)) }
}
