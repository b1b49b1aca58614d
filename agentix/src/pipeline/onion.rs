//! The onions: the `wrap_model` and `wrap_tool` hooks, each a layer around the next.

use super::chain::{Lifecycle, Single};
use super::chain::{report_panic, skipped};
use crate::error::HookFailure;
use crate::event::EventKind;
use crate::hook::{
    Hook, Keep, MaySkip, ModelLayer, ModelWraps, NeverSkipped, NextModel, NextTool, Skip,
    ToolLayer, ToolWraps, Wraps,
};
use crate::message::{ToolCall, ToolFailure, ToolResult};
use crate::model::{ModelError, ModelRequest, ModelResponse};
use crate::observe::{Decision, Observation, Observer};
use crate::support::{Bounded, poll_guarded};
use crate::turn::{Culprit, Turn};
use crate::{event, on};
use std::any::Any;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

impl<H: Hook> ModelLayer for Lifecycle<H> {
    const ACTIVE: bool = H::EVENTS.contains(EventKind::WrapModel);
    const TIMEOUT: Option<Duration> = H::TIMEOUT;
    type Skip = NeverSkipped;

    fn name(&self) -> &'static str {
        self.1
    }

    fn wrap(
        &self,
        request: &ModelRequest,
        turn: &Turn,
        next: &impl NextModel,
    ) -> impl Future<Output = Result<ModelResponse, ModelError>> + Send {
        self.0.wrap_model(request, turn, next)
    }
}

impl<H: Hook> ToolLayer for Lifecycle<H> {
    const ACTIVE: bool = H::EVENTS.contains(EventKind::WrapTool);
    const TIMEOUT: Option<Duration> = H::TIMEOUT;
    type Skip = NeverSkipped;

    fn name(&self) -> &'static str {
        self.1
    }

    fn wrap(
        &self,
        call: &ToolCall,
        turn: &Turn,
        next: &impl NextTool,
    ) -> impl Future<Output = ToolResult> + Send {
        self.0.wrap_tool(call, turn, next)
    }
}

impl<H: on::WrapModel> ModelLayer for Single<H, event::WrapModel> {
    const ACTIVE: bool = true;
    const CONDITIONAL: bool = H::CONDITIONAL;
    const TIMEOUT: Option<Duration> = H::TIMEOUT;
    type Skip = MaySkip;

    fn applies(&self, request: &ModelRequest, turn: &Turn) -> bool {
        self.0.applies(request, turn)
    }

    fn name(&self) -> &'static str {
        if H::NAMED { self.0.name() } else { self.2 }
    }

    fn wrap(
        &self,
        request: &ModelRequest,
        turn: &Turn,
        next: &impl NextModel,
    ) -> impl Future<Output = Result<ModelResponse, ModelError>> + Send {
        self.0.wrap_model(request, turn, next)
    }
}

impl<H: on::WrapTool> ToolLayer for Single<H, event::WrapTool> {
    const ACTIVE: bool = true;
    const CONDITIONAL: bool = H::CONDITIONAL;
    const TIMEOUT: Option<Duration> = H::TIMEOUT;
    type Skip = MaySkip;

    fn applies(&self, call: &ToolCall, turn: &Turn) -> bool {
        self.0.applies(call, turn)
    }

    fn name(&self) -> &'static str {
        if H::NAMED { self.0.name() } else { self.2 }
    }

    fn wrap(
        &self,
        call: &ToolCall,
        turn: &Turn,
        next: &impl NextTool,
    ) -> impl Future<Output = ToolResult> + Send {
        self.0.wrap_tool(call, turn, next)
    }
}

impl ModelWraps for () {
    fn around<'a, O: Observer>(
        &'a self,
        _: &'a Turn,
        _: &'a O,
        innermost: impl NextModel + 'a,
    ) -> impl NextModel + 'a {
        innermost
    }
}

impl ToolWraps for () {
    type Kept = ();

    fn around<'a, O: Observer>(
        &'a self,
        _: &'a Turn,
        _: &'a O,
        innermost: impl NextTool + 'a,
    ) -> impl NextTool + 'a {
        innermost
    }
}

impl<Rest: ModelWraps, L: ModelLayer> ModelWraps for Wraps<Rest, L> {
    fn around<'a, O: Observer>(
        &'a self,
        turn: &'a Turn,
        observer: &'a O,
        innermost: impl NextModel + 'a,
    ) -> impl NextModel + 'a {
        self.rest.around(
            turn,
            observer,
            Layered { layer: &self.layer, turn, observer, next: innermost },
        )
    }
}

impl<Rest: ToolWraps, L: ToolLayer> ToolWraps for Wraps<Rest, L> {
    type Kept = KeptResult;

    fn around<'a, O: Observer>(
        &'a self,
        turn: &'a Turn,
        observer: &'a O,
        innermost: impl NextTool + 'a,
    ) -> impl NextTool + 'a {
        self.rest.around(
            turn,
            observer,
            Layered { layer: &self.layer, turn, observer, next: innermost },
        )
    }
}

/// Nothing to keep: no `wrap_tool` hook can hold a result.
impl Keep for () {
    const KEEPS: bool = false;

    #[inline(always)]
    fn keep(&self, _result: &ToolResult) {}

    #[inline(always)]
    fn take(&mut self) -> Option<ToolResult> {
        None
    }
}

/// The latest result of the running call: one copy of its output while the onion runs, the one
/// cost of a `wrap_tool` hook beyond dispatch.
#[derive(Debug, Default)]
pub struct KeptResult(std::sync::Mutex<Option<ToolResult>>);

impl Keep for KeptResult {
    fn keep(&self, result: &ToolResult) {
        let kept = ToolResult {
            call_id: String::new(),
            name: String::new(),
            output: result.output.clone(),
            error: result.error.clone(),
        };
        *crate::support::lock(&self.0) = Some(kept);
    }

    fn take(&mut self) -> Option<ToolResult> {
        self.0.get_mut().unwrap_or_else(|poisoned| poisoned.into_inner()).take()
    }
}

/// One layer around the rest of its onion: what the layers declared before it see as `next`.
struct Layered<'a, L, O, N> {
    layer: &'a L,
    turn: &'a Turn,
    observer: &'a O,
    next: N,
}

impl<L: ModelLayer, O: Observer, N: NextModel> NextModel for Layered<'_, L, O, N> {
    // One plain future type per layer (no combinator stack): the onion's nesting is what costs
    // rustc's layout query depth.
    fn call(
        &self,
        request: &ModelRequest,
    ) -> impl Future<Output = Result<ModelResponse, ModelError>> + Send {
        let (name, turn, observer) = (self.layer.name(), self.turn, self.observer);
        let state = if L::CONDITIONAL && !self.layer.applies(request, turn) {
            skipped::<event::WrapModel>(observer, EventKind::WrapModel, name);
            LayerState::Skipped { next: L::Skip::skipped(self.next.call(request)) }
        } else {
            LayerState::started(start::<ModelCall, _>(turn, observer, name, || {
                Bounded::new(L::TIMEOUT, self.layer.wrap(request, turn, &self.next))
            }))
        };
        LayerCall { state, wrapped: ModelCall, name, turn, observer, active: L::ACTIVE }
    }
}

impl<L: ToolLayer, O: Observer, N: NextTool> NextTool for Layered<'_, L, O, N> {
    fn call(&self, call: &ToolCall) -> impl Future<Output = ToolResult> + Send {
        let (name, turn, observer) = (self.layer.name(), self.turn, self.observer);
        let state = if L::CONDITIONAL && !self.layer.applies(call, turn) {
            skipped::<event::WrapTool>(observer, EventKind::WrapTool, name);
            LayerState::Skipped { next: L::Skip::skipped(self.next.call(call)) }
        } else {
            LayerState::started(start::<ToolCallOf<'_>, _>(turn, observer, name, || {
                Bounded::new(L::TIMEOUT, self.layer.wrap(call, turn, &self.next))
            }))
        };
        LayerCall { state, wrapped: ToolCallOf(call), name, turn, observer, active: L::ACTIVE }
    }

    fn idempotent(&self, name: &str) -> bool {
        self.next.idempotent(name)
    }
}

/// What the two onions' layers differ in: the event, what a call the onion abandoned returns,
/// and what a returned call records.
trait Wrapped {
    /// The call's result.
    type Output;
    /// The wrap event.
    const EVENT: EventKind;
    /// The result of a call abandoned because a hook in the onion panicked.
    fn abandoned(&self) -> Self::Output;
    /// Records on the turn how a layer's hook returned; whether the call succeeded.
    fn settle(&self, turn: &Turn, hook: &'static str, output: &Self::Output) -> bool;
}

/// A call through the `wrap_model` onion.
struct ModelCall;

impl Wrapped for ModelCall {
    type Output = Result<ModelResponse, ModelError>;
    const EVENT: EventKind = EventKind::WrapModel;

    fn abandoned(&self) -> Self::Output {
        Err(ModelError::Aborted)
    }

    fn settle(&self, turn: &Turn, hook: &'static str, output: &Self::Output) -> bool {
        turn.settle_model_call(Some(hook), output.is_ok());
        output.is_ok()
    }
}

/// A call through the `wrap_tool` onion: abandoned, it still answers the call.
struct ToolCallOf<'c>(&'c ToolCall);

impl Wrapped for ToolCallOf<'_> {
    type Output = ToolResult;
    const EVENT: EventKind = EventKind::WrapTool;

    fn abandoned(&self) -> ToolResult {
        not_run(self.0)
    }

    fn settle(&self, _turn: &Turn, _hook: &'static str, output: &ToolResult) -> bool {
        !output.is_error()
    }
}

/// Starts a layer's hook, unless an inner panic aborted the onion: `None` when it did, or when
/// the hook panicked before returning its future (the onion is then aborted).
fn start<W: Wrapped, F>(
    turn: &Turn,
    observer: &impl Observer,
    hook: &'static str,
    wrap: impl FnOnce() -> F,
) -> Option<F> {
    if turn.aborted.get().is_some() {
        return None;
    }
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(wrap)) {
        Ok(future) => Some(future),
        Err(payload) => {
            abort(turn, observer, W::EVENT, hook, payload);
            None
        }
    }
}

pin_project_lite::pin_project! {
    /// A call through one layer of an onion: its hook's future, guarded against panics, and
    /// reported when it returns.
    struct LayerCall<'a, O, F, G, W> {
        #[pin]
        state: LayerState<F, G>,
        wrapped: W,
        name: &'static str,
        turn: &'a Turn,
        observer: &'a O,
        active: bool,
    }
}

pin_project_lite::pin_project! {
    /// What a layer's call runs: its hook (`F`), the rest of the onion (`G`) when the hook's
    /// `when` condition skips it, or nothing when the onion was abandoned. One enum, not two
    /// options: the layer is as large as the larger of the two, not their sum.
    #[project = LayerStateProjection]
    enum LayerState<F, G> {
        Hook { #[pin] future: F },
        Skipped { #[pin] next: G },
        Abandoned,
    }
}

impl<F, G> LayerState<F, G> {
    fn started(future: Option<F>) -> Self {
        match future {
            Some(future) => LayerState::Hook { future },
            None => LayerState::Abandoned,
        }
    }
}

impl<O, W, F, G> Future for LayerCall<'_, O, F, G, W>
where
    O: Observer,
    W: Wrapped,
    F: Future<Output = Result<W::Output, Duration>>,
    G: Future<Output = W::Output>,
{
    type Output = W::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<W::Output> {
        let this = self.project();
        let future = match this.state.project() {
            LayerStateProjection::Hook { future } => future,
            // The rest of the onion reports itself.
            LayerStateProjection::Skipped { next } => return next.poll(cx),
            LayerStateProjection::Abandoned => return Poll::Ready(this.wrapped.abandoned()),
        };
        let (name, turn, observer) = (*this.name, *this.turn, *this.observer);
        poll_guarded(future, cx).map(|returned| match returned {
            Ok(Ok(output)) => {
                let ok = this.wrapped.settle(turn, name, &output);
                if *this.active {
                    let decision = Decision::Returned { ok };
                    observer.observe(&Observation::Hook { event: W::EVENT, hook: name, decision });
                }
                output
            }
            Ok(Err(after)) => {
                let failure = HookFailure::TimedOut { after };
                observer.observe(&Observation::Hook {
                    event: W::EVENT,
                    hook: name,
                    decision: failure.decision(),
                });
                turn.abort(Culprit::Hook { event: W::EVENT, hook: name }, failure);
                this.wrapped.abandoned()
            }
            Err(payload) => {
                abort(turn, observer, W::EVENT, name, payload);
                this.wrapped.abandoned()
            }
        })
    }
}

/// The result of a tool call abandoned because a `wrap_tool` hook panicked.
pub(crate) fn not_run(call: &ToolCall) -> ToolResult {
    let reason = "a wrap_tool hook panicked".to_owned();
    ToolResult::failure(call, ToolFailure::NotRun { reason })
}

fn abort(
    turn: &Turn,
    observer: &impl Observer,
    event: EventKind,
    hook: &'static str,
    payload: Box<dyn Any + Send>,
) {
    let message = report_panic(observer, event, hook, payload.as_ref());
    turn.abort(Culprit::Hook { event, hook }, HookFailure::Panicked { message });
}
