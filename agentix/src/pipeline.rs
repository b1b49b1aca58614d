//! The static pipeline: hooks composed by type, dispatched without boxing or allocation.
//!
//! [`AgentBuilder::hook`](crate::AgentBuilder::hook) grows a [`Hooks`] value whose type records
//! every hook:
//!
//! - Sequential hooks and parallel `pre` groups go into one *chain*: flat tuples of up to 16
//!   nodes, in two levels (at most 256 nodes). Each event's chain is one flat future over the
//!   nodes, so its size and the compiler's work stay flat as hooks are added; when none of an
//!   event's hooks awaits ([`Chain::IN_PLACE_EVENTS`]), the chain runs in place instead, as plain
//!   calls with no future at all. Each node
//!   declares its events ([`Chain::EVENTS`]): an event skips the nodes without hooks on it at
//!   compile time, so it costs only its own hooks, and an empty chain costs nothing. A
//!   [`Hook`] struct has a method for every event, so it is a node of every event.
//! - `wrap_model` and `wrap_tool` hooks form an *onion* each, first declared outermost. Each
//!   layer is one plain future around the hook's own (no boxing), and only hooks that can wrap
//!   are layers.

use std::any::Any;
use std::future::{Future, ready};
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use futures::future::join;

use crate::error::Error;
use crate::event::{
    self, AfterModel, AfterTool, BeforeFinal, BeforeModel, BeforeTool, Event, EventKind, EventSet,
    Post, Pre, ToolError,
};
use crate::hook::{Hook, NextModel, NextTool};
use crate::message::{AssistantMessage, Part, ToolCall, ToolFailure, ToolResult};
use crate::model::{ModelError, ModelRequest, ModelResponse};
use crate::observe::{Decision, Observation, Observer};
use crate::on::{self, OnError};
use crate::turn::{Culprit, Turn};
use crate::verdict::{Halt, Verdict};
use crate::{Bounded, Caught, Outcome, caught, panic_message, poll_guarded};

use event::Payload as _;

/// Where an event's chain of hooks ended: every hook continued, or one decided (or panicked).
/// Variants whose payload is [`Forbidden`](crate::event::Forbidden) for `E` cannot occur.
#[derive(Debug)]
pub enum Flow<E: Event> {
    /// Every hook continued.
    Continue,
    /// A hook stopped.
    Stop {
        /// The hook.
        hook: &'static str,
        /// What it stopped with.
        value: E::Stop,
    },
    /// A hook asked for a retry.
    Retry {
        /// The hook.
        hook: &'static str,
        /// Its feedback.
        feedback: E::Retry,
    },
    /// A hook rejected the tool call.
    Reject {
        /// The hook.
        hook: &'static str,
        /// Why.
        rejection: E::Reject,
    },
    /// A hook escalated the tool call.
    Escalate {
        /// The hook.
        hook: &'static str,
        /// Why.
        escalation: E::Escalate,
    },
    /// A hook halted the turn.
    Halt {
        /// The hook.
        hook: &'static str,
        /// Why.
        halt: Halt,
    },
    /// A hook failed: it panicked, or ran out of time.
    Failed {
        /// The hook.
        hook: &'static str,
        /// How.
        failure: HookFailure,
    },
}

/// How a hook failed, besides an error it returned: what the event's failure policy answers
/// for, as it does for an error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HookFailure {
    /// It panicked, with this message.
    Panicked {
        /// The panic's message.
        message: String,
    },
    /// It did not return within its `timeout`.
    TimedOut {
        /// The timeout.
        after: Duration,
    },
}

impl HookFailure {
    /// The turn's error for this failure of `hook`, at `event`.
    pub(crate) fn error(self, event: EventKind, hook: &'static str) -> Error {
        match self {
            HookFailure::Panicked { message } => Error::HookPanicked { event, hook, message },
            HookFailure::TimedOut { after } => Error::HookTimedOut { event, hook, after },
        }
    }

    /// What the failure says, for a call it refused or did not run.
    pub(crate) fn describe(&self, event: EventKind, hook: &'static str) -> String {
        match self {
            HookFailure::Panicked { message } => {
                format!("the {event} hook `{hook}` panicked: {message}")
            }
            HookFailure::TimedOut { after } => {
                format!("the {event} hook `{hook}` timed out after {after:?}")
            }
        }
    }

    fn decision(&self) -> Decision<'_> {
        match self {
            HookFailure::Panicked { message } => Decision::Panicked { message },
            HookFailure::TimedOut { after } => Decision::TimedOut { after: *after },
        }
    }
}

impl<E: Event> Flow<E> {
    #[inline]
    fn decided(hook: &'static str, verdict: Verdict<E>) -> Self {
        match verdict {
            Verdict::Continue => Flow::Continue,
            Verdict::Stop(value) => Flow::Stop { hook, value },
            Verdict::Retry(feedback) => Flow::Retry { hook, feedback },
            Verdict::Reject(rejection) => Flow::Reject { hook, rejection },
            Verdict::Escalate(escalation) => Flow::Escalate { hook, escalation },
            Verdict::Halt(halt) => Flow::Halt { hook, halt },
        }
    }

    /// Whether every hook continued.
    pub fn is_continue(&self) -> bool {
        matches!(self, Flow::Continue)
    }

    fn decision(&self) -> Decision<'_> {
        match self {
            Flow::Continue => Decision::Continue,
            Flow::Stop { .. } => Decision::Stop,
            Flow::Retry { feedback, .. } => Decision::Retry { feedback: feedback.note() },
            Flow::Reject { rejection, .. } => {
                Decision::Reject { reason: rejection.note().unwrap_or_default() }
            }
            Flow::Escalate { escalation, .. } => {
                Decision::Escalate { reason: escalation.note().unwrap_or_default() }
            }
            Flow::Halt { halt, .. } => Decision::Halt { reason: &halt.reason },
            Flow::Failed { failure, .. } => failure.decision(),
        }
    }
}

/// Reports a hook's decision: always when it did not continue, and when it continued only if
/// the hook declares the event (a `Hook` is called at every event, but traced at its own).
#[inline]
fn report<E: Event>(observer: &impl Observer, hook: &'static str, declared: bool, flow: &Flow<E>) {
    if declared || !flow.is_continue() {
        observer.observe(&Observation::Hook { event: E::KIND, hook, decision: flow.decision() });
    }
}

/// What an event's contract requires of the value a hook leaves behind, beyond its type.
trait Contract: Event {
    /// The rule the value breaks, if it breaks one.
    fn breach(value: &Self::Value) -> Option<&'static str> {
        let _ = value;
        None
    }
}

impl Contract for BeforeModel {}
impl Contract for AfterModel {
    fn breach(message: &AssistantMessage) -> Option<&'static str> {
        message
            .duplicate_call_id()
            .is_some()
            .then_some("it left two tool calls with one id, whose results could not be told apart")
    }
}
impl Contract for BeforeTool {}
impl Contract for AfterTool {}
impl Contract for ToolError {}
impl Contract for Post {}

impl Contract for BeforeFinal {
    fn breach(message: &AssistantMessage) -> Option<&'static str> {
        message
            .calls_tools()
            .then_some("it left tool calls in the final answer, which cannot call tools")
    }
}

/// A hook that continued but left a value breaking the contract failed.
#[inline]
fn checked<E: Contract>(flow: Flow<E>, hook: &'static str, value: &E::Value) -> Flow<E> {
    match (&flow, E::breach(value)) {
        (Flow::Continue, Some(rule)) => Flow::Halt { hook, halt: Halt::failure(rule) },
        _ => flow,
    }
}

mod sealed {
    pub trait Sealed {}
}

/// The composed hooks of an agent, as its builder grew them: a chain for the sequential events
/// and an onion for each wrap event.
#[derive(Debug, Default)]
pub struct Hooks<C = ((), ()), M = (), T = ()> {
    chain: C,
    model: M,
    tool: T,
}

/// What the agent loop runs: the chain for the sequential events, and the two onions.
/// Implemented by [`Hooks`] only.
pub trait Pipeline: sealed::Sealed + Send + Sync {
    /// The chain of every event but the two wraps.
    type Chain: Chain;

    /// Where a running tool call's result is kept while `wrap_tool` hooks hold it: nowhere
    /// when the onion has no layer.
    #[doc(hidden)]
    type Kept: Keep;

    /// The chain of every event but the two wraps.
    fn chain(&self) -> &Self::Chain;

    /// The `wrap_model` onion around `model`: the loop calls it and keeps it while the call
    /// runs (no future of the pipeline's own around the call).
    fn model_onion<'a, O: Observer>(
        &'a self,
        turn: &'a Turn,
        observer: &'a O,
        model: impl NextModel + 'a,
    ) -> impl NextModel + 'a;

    /// The `wrap_tool` onion around `tool`, as [`model_onion`](Pipeline::model_onion).
    fn tool_onion<'a, O: Observer>(
        &'a self,
        turn: &'a Turn,
        observer: &'a O,
        tool: impl NextTool + 'a,
    ) -> impl NextTool + 'a;
}

impl<C, M, T> sealed::Sealed for Hooks<C, M, T> {}

impl<C: Chain, M: ModelWraps, T: ToolWraps> Pipeline for Hooks<C, M, T> {
    type Chain = C;
    type Kept = T::Kept;

    fn chain(&self) -> &C {
        &self.chain
    }

    fn model_onion<'a, O: Observer>(
        &'a self,
        turn: &'a Turn,
        observer: &'a O,
        model: impl NextModel + 'a,
    ) -> impl NextModel + 'a {
        self.model.around(turn, observer, model)
    }

    fn tool_onion<'a, O: Observer>(
        &'a self,
        turn: &'a Turn,
        observer: &'a O,
        tool: impl NextTool + 'a,
    ) -> impl NextTool + 'a {
        self.tool.around(turn, observer, tool)
    }
}

// ---- the chain ----

/// The chain's events, as `method / method_in_place: Event (value: Type)`; `pre` has no value
/// but the turn.
macro_rules! chain_events {
    ($apply:ident $(, $extra:tt)?) => {
        $apply! {
            $($extra)?
            pre / pre_in_place: Pre ();
            before_model / before_model_in_place: BeforeModel (request: &mut ModelRequest);
            after_model / after_model_in_place: AfterModel (message: &mut AssistantMessage);
            before_tool / before_tool_in_place: BeforeTool (call: &mut ToolCall);
            after_tool / after_tool_in_place: AfterTool (result: &mut ToolResult);
            tool_error / tool_error_in_place: ToolError (result: &mut ToolResult);
            before_final / before_final_in_place: BeforeFinal (message: &mut AssistantMessage);
            post / post_in_place: Post (outcome: &mut Outcome);
        }
    };
}

macro_rules! chain_trait {
    ($($method:ident / $in_place:ident: $event:ident ($($arg:ident: $ty:ty)?);)*) => {
        /// A node of the sequential chain, or a flat tuple of nodes run in order. Each method
        /// runs the node's hooks for one event; a node that does not handle the event is a
        /// ready `Continue`.
        pub trait Chain: Send + Sync {
            /// The events the node has hooks for. A chain skips a node at the other events at
            /// compile time: an event costs only the hooks on it, however many hooks the agent
            /// has elsewhere.
            const EVENTS: EventSet = EventSet::NONE;

            /// The events at which none of the node's hooks awaits: those of `#[hook]` functions
            /// that never await, and every event the node has no hooks on. The loop runs such an
            /// event's chain in place, through the `_in_place` methods: no future between the
            /// loop and the hook.
            const IN_PLACE_EVENTS: EventSet = EventSet::ALL.without(Self::EVENTS);

            $(
                #[doc = concat!("Runs the node's `", stringify!($method), "` hooks.")]
                fn $method<O: Observer>(
                    &self,
                    $($arg: $ty,)?
                    turn: &mut Turn,
                    observer: &O,
                ) -> impl Future<Output = Flow<$event>> + Send {
                    let _ = ($($arg,)? turn, observer);
                    ready(Flow::Continue)
                }

                #[doc = concat!(
                    "Runs the node's `", stringify!($method), "` hooks in place; called only ",
                    "when [`IN_PLACE_EVENTS`](Chain::IN_PLACE_EVENTS) holds the event."
                )]
                fn $in_place<O: Observer>(&self, $($arg: $ty,)? turn: &mut Turn, observer: &O) -> Flow<$event> {
                    let _ = ($($arg,)? turn, observer);
                    Flow::Continue
                }
            )*
        }
    };
}

chain_events!(chain_trait);

/// The chain's flow, or the panic of the hook that was running. A panic guard covers a whole
/// chain, not each hook: each hook is marked running on the turn for as long as it runs, so the
/// guard knows whose panic it caught. A panic outside any hook (an observer's) is not a hook's
/// to answer for: it goes on unwinding.
#[inline]
pub(crate) fn settle<E: Event>(
    caught: Caught<Flow<E>>,
    turn: &mut Turn,
    observer: &impl Observer,
) -> Flow<E> {
    match caught {
        Ok(flow) => flow,
        Err(payload) => hook_panicked(payload, turn, observer),
    }
}

/// [`hook_panic`], as the guarded chain's flow; out of line, as panics are rare.
#[cold]
fn hook_panicked<E: Event>(
    payload: Box<dyn Any + Send>,
    turn: &mut Turn,
    observer: &impl Observer,
) -> Flow<E> {
    match hook_panic(payload, turn, observer) {
        Ok((_, hook, message)) => Flow::Failed { hook, failure: HookFailure::Panicked { message } },
        // Not a hook's panic: the turn's guard answers for it.
        Err(payload) => std::panic::resume_unwind(payload),
    }
}

/// The hook whose panic a guard caught — an event's own, or the turn's around the loop —
/// reported as panicked at its event, with the panic's message. A panic outside any hook goes
/// on unwinding.
#[cold]
pub(crate) fn hook_panic(
    payload: Box<dyn Any + Send>,
    turn: &mut Turn,
    observer: &impl Observer,
) -> Result<(EventKind, &'static str, String), Box<dyn Any + Send>> {
    let Some(hook) = turn.leave_hook() else {
        return Err(payload);
    };
    let event = turn.running_event();
    let message = report_panic(observer, event, hook, payload.as_ref());
    Ok((event, hook, message))
}

/// Reports a hook its `when` condition skipped; the chain goes on.
#[inline]
fn skipped<E: Event>(observer: &impl Observer, event: EventKind, hook: &'static str) -> Flow<E> {
    observer.observe(&Observation::Hook { event, hook, decision: Decision::Skipped });
    Flow::Continue
}

/// Tells the observer that `hook` panicked at `event`, and returns the panic's message.
fn report_panic(
    observer: &impl Observer,
    event: EventKind,
    hook: &'static str,
    payload: &(dyn Any + Send),
) -> String {
    let message = panic_message(payload);
    observer.observe(&Observation::Hook {
        event,
        hook,
        decision: Decision::Panicked { message: &message },
    });
    message
}

/// A [`Hook`] in the pipeline; shared between the chain and both onions.
#[derive(Debug)]
pub struct Lifecycle<H>(Arc<H>);

impl<H> Clone for Lifecycle<H> {
    fn clone(&self) -> Self {
        Lifecycle(Arc::clone(&self.0))
    }
}

/// The flow of a hook's verdict, or of its running out of time.
#[inline]
fn timed<E: Event>(hook: &'static str, verdict: Result<Verdict<E>, Duration>) -> Flow<E> {
    match verdict {
        Ok(verdict) => Flow::decided(hook, verdict),
        Err(after) => Flow::Failed { hook, failure: HookFailure::TimedOut { after } },
    }
}

/// A node's hook has returned: it stops running, and the observer hears of its decision (`flow`,
/// checked against the event's contract by the caller).
#[inline]
fn ended<E: Event>(
    hook: &'static str,
    flow: Flow<E>,
    declared: bool,
    turn: &mut Turn,
    observer: &impl Observer,
) -> Flow<E> {
    turn.leave_hook();
    report(observer, hook, declared, &flow);
    flow
}

macro_rules! lifecycle_chain {
    ($($method:ident / $in_place:ident: $event:ident ($($arg:ident: $ty:ty)?);)*) => {
        impl<H: Hook> Chain for Lifecycle<H> {
            // Called at every event: `H::EVENTS` only says where it is traced.
            const EVENTS: EventSet = EventSet::ALL;

            $(
                async fn $method<O: Observer>(&self, $($arg: $ty,)? turn: &mut Turn, observer: &O) -> Flow<$event> {
                    let name = self.0.name();
                    // Only `pre` and `post` output can be durable.
                    let durable = H::DURABLE && matches!($event::KIND, EventKind::Pre | EventKind::Post);
                    turn.enter_hook(name, $event::KIND, durable);
                    let verdict = bounded!(H::TIMEOUT, self.0.$method($(&mut *$arg,)? turn));
                    let flow = timed(name, verdict);
                    $(let flow = checked(flow, name, &*$arg);)?
                    ended(name, flow, H::EVENTS.contains(EventKind::$event), turn, observer)
                }
            )*
        }
    };
}

chain_events!(lifecycle_chain);

/// A hook on one event `E`: a `#[hook]` function, or a hand-written [`on`] trait.
pub struct Single<H, E>(H, PhantomData<fn() -> E>);

impl<H: std::fmt::Debug, E> std::fmt::Debug for Single<H, E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Single").field(&self.0).finish()
    }
}

/// The events a single-event hook runs in place at: the others, and its own if it never awaits.
const fn in_place_events<E: Event>(in_place: bool) -> EventSet {
    if in_place { EventSet::ALL } else { EventSet::ALL.without(EventSet::of(E::KIND)) }
}

/// Whether a single-event hook's output joins the log: only `pre` and `post` hooks can be
/// durable.
macro_rules! durable_output {
    (Pre, $hook:ident) => {
        <$hook as on::Pre>::DURABLE
    };
    (Post, $hook:ident) => {
        <$hook as on::Post>::DURABLE
    };
    ($event:ident, $hook:ident) => {
        false
    };
}

macro_rules! single_chain {
    ($($method:ident / $in_place:ident: $event:ident ($($arg:ident: $ty:ty)?);)*) => {$(
        impl<H: on::$event> Chain for Single<H, $event> {
            const EVENTS: EventSet = EventSet::of(EventKind::$event);
            // A hook with a timeout is awaited, under its timer.
            const IN_PLACE_EVENTS: EventSet =
                in_place_events::<$event>(H::IN_PLACE && H::TIMEOUT.is_none());

            async fn $method<O: Observer>(&self, $($arg: $ty,)? turn: &mut Turn, observer: &O) -> Flow<$event> {
                let name = self.0.name();
                if H::CONDITIONAL && !self.0.applies($(&*$arg,)? turn) {
                    return skipped(observer, $event::KIND, name);
                }
                turn.enter_hook(name, $event::KIND, durable_output!($event, H));
                let verdict = bounded!(H::TIMEOUT, self.0.$method($(&mut *$arg,)? turn));
                let flow = timed(name, verdict);
                $(let flow = checked(flow, name, &*$arg);)?
                ended(name, flow, true, turn, observer)
            }

            fn $in_place<O: Observer>(&self, $($arg: $ty,)? turn: &mut Turn, observer: &O) -> Flow<$event> {
                let name = self.0.name();
                if H::CONDITIONAL && !self.0.applies($(&*$arg,)? turn) {
                    return skipped(observer, $event::KIND, name);
                }
                turn.enter_hook(name, $event::KIND, durable_output!($event, H));
                let verdict = self.0.$in_place($(&mut *$arg,)? turn);
                let flow = Flow::decided(name, verdict);
                $(let flow = checked(flow, name, &*$arg);)?
                ended(name, flow, true, turn, observer)
            }
        }
    )*};
}

chain_events!(single_chain);

/// A group of consecutive parallel `pre` hooks; `G` is `((), A)`, `(((), A), B)`, … in
/// declaration order.
#[derive(Debug)]
pub struct Par<G>(G);

impl<G: ParallelGroup> Chain for Par<G> {
    const EVENTS: EventSet = EventSet::of(EventKind::Pre);

    async fn pre<O: Observer>(&self, turn: &mut Turn, observer: &O) -> Flow<Pre> {
        let output = self.0.run(turn).await;
        match self.0.merge(output, turn, observer) {
            Ok(()) => Flow::Continue,
            Err((hook, failure)) => Flow::Failed { hook, failure },
        }
    }
}

/// A group of parallel `pre` hooks: run together on one task, merged in declaration order.
pub trait ParallelGroup: Send + Sync {
    /// Every hook's parts (or panic), in declaration order.
    type Output: Send;

    /// Runs every hook of the group concurrently, polling them in one future (no spawn, no
    /// allocation).
    fn run(&self, turn: &Turn) -> impl Future<Output = Self::Output> + Send;

    /// Injects the parts in declaration order; the first failure (a panic, a timeout) of a hook
    /// that fails the turn, in declaration order, is returned instead. A hook whose failure is
    /// skipped (`on_error = skip`) is recorded in the log and adds nothing.
    fn merge<O: Observer>(
        &self,
        output: Self::Output,
        turn: &mut Turn,
        observer: &O,
    ) -> Result<(), (&'static str, HookFailure)>;
}

impl ParallelGroup for () {
    type Output = ();

    fn run(&self, _turn: &Turn) -> impl Future<Output = ()> + Send {
        ready(())
    }

    fn merge<O: Observer>(
        &self,
        (): (),
        _turn: &mut Turn,
        _observer: &O,
    ) -> Result<(), (&'static str, HookFailure)> {
        Ok(())
    }
}

impl<G: ParallelGroup, P: on::ParallelPre> ParallelGroup for (G, P) {
    /// Every hook's parts, panic or timeout; `None` for one its `when` condition skipped.
    type Output = (G::Output, Option<Result<Caught<Vec<Part>>, Duration>>);

    fn run(&self, turn: &Turn) -> impl Future<Output = Self::Output> + Send {
        let runs = !P::CONDITIONAL || self.1.applies(turn);
        let run = runs.then(|| Bounded::new(P::TIMEOUT, caught(|| self.1.pre(turn))));
        join(self.0.run(turn), MaybeRun { run })
    }

    fn merge<O: Observer>(
        &self,
        (earlier, parts): Self::Output,
        turn: &mut Turn,
        observer: &O,
    ) -> Result<(), (&'static str, HookFailure)> {
        self.0.merge(earlier, turn, observer)?;
        let hook = self.1.name();
        let failure = match parts {
            None => {
                let decision = Decision::Skipped;
                observer.observe(&Observation::Hook { event: EventKind::Pre, hook, decision });
                return Ok(());
            }
            Some(Ok(Ok(parts))) => {
                let decision = Decision::Parts { count: parts.len() };
                observer.observe(&Observation::Hook { event: EventKind::Pre, hook, decision });
                turn.inject_as(hook, P::DURABLE, parts);
                return Ok(());
            }
            Some(Ok(Err(payload))) => {
                let message = report_panic(observer, EventKind::Pre, hook, payload.as_ref());
                HookFailure::Panicked { message }
            }
            Some(Err(after)) => {
                let decision = Decision::TimedOut { after };
                observer.observe(&Observation::Hook { event: EventKind::Pre, hook, decision });
                HookFailure::TimedOut { after }
            }
        };
        match P::ON_ERROR {
            OnError::Fail => Err((hook, failure)),
            OnError::Skip => {
                turn.record_skipped(EventKind::Pre, hook, failure.describe(EventKind::Pre, hook));
                Ok(())
            }
        }
    }
}

pin_project_lite::pin_project! {
    /// A future that may not run: `None` when it does not.
    struct MaybeRun<F> {
        #[pin]
        run: Option<F>,
    }
}

impl<F: Future> Future for MaybeRun<F> {
    type Output = Option<F::Output>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project().run.as_pin_mut() {
            Some(run) => run.poll(cx).map(Some),
            None => Poll::Ready(None),
        }
    }
}

/// A node's method called with the event's value, if the event has one, then the turn and the
/// observer.
macro_rules! call_node {
    ($node:expr, $method:ident, (), $turn:ident, $observer:ident) => {
        $node.$method($turn, $observer)
    };
    ($node:expr, $method:ident, ($value:ident), $turn:ident, $observer:ident) => {
        $node.$method($value, $turn, $observer)
    };
}

macro_rules! tuple_chain_method {
    ($method:ident / $in_place:ident: $event:ident ($($arg:ident: $ty:ty)?) $value:tt [$($node:ident $index:tt)*]) => {
        fn $method<O: Observer>(
            &self,
            $($arg: $ty,)?
            turn: &mut Turn,
            observer: &O,
        ) -> impl Future<Output = Flow<$event>> + Send {
            async move {
                $(
                    if $node::EVENTS.contains(EventKind::$event) {
                        let flow = call_node!(self.$index, $method, $value, turn, observer).await;
                        if !flow.is_continue() {
                            return flow;
                        }
                        // `Continue` owns nothing: no out-of-line drop call for it.
                        std::mem::forget(flow);
                    }
                )*
                let _ = ($($arg,)? turn, observer);
                Flow::Continue
            }
        }

        fn $in_place<O: Observer>(&self, $($arg: $ty,)? turn: &mut Turn, observer: &O) -> Flow<$event> {
            $(
                if $node::EVENTS.contains(EventKind::$event) {
                    let flow = call_node!(self.$index, $in_place, $value, turn, observer);
                    if !flow.is_continue() {
                        return flow;
                    }
                    std::mem::forget(flow);
                }
            )*
            let _ = ($($arg,)? turn, observer);
            Flow::Continue
        }
    };
}

macro_rules! tuple_chain_methods {
    ($indices:tt $($method:ident / $in_place:ident: $event:ident ($($arg:ident: $ty:ty)?);)*) => {
        $(tuple_chain_method!($method / $in_place: $event ($($arg: $ty)?) ($($arg)?) $indices);)*
    };
}

macro_rules! tuple_chain {
    ($($node:ident $index:tt)*) => {
        impl<$($node: Chain),*> Chain for ($($node,)*) {
            const EVENTS: EventSet = EventSet::NONE$(.union($node::EVENTS))*;
            // An event runs in place when no node has hooks on it that await.
            const IN_PLACE_EVENTS: EventSet =
                EventSet::ALL.without(EventSet::NONE$(.union($node::EVENTS.without($node::IN_PLACE_EVENTS)))*);

            chain_events!(tuple_chain_methods, [$($node $index)*]);
        }
    };
}

/// Invokes `$apply!` with every prefix of the list, shortest first.
macro_rules! prefixes {
    ($apply:ident [$($done:tt)*]) => {
        $apply!($($done)*);
    };
    ($apply:ident [$($done:tt)*] $node:ident $index:tt $($rest:tt)*) => {
        $apply!($($done)*);
        prefixes!($apply [$($done)* $node $index] $($rest)*);
    };
}

prefixes!(tuple_chain [] X0 0 X1 1 X2 2 X3 3 X4 4 X5 5 X6 6 X7 7 X8 8 X9 9 X10 10 X11 11 X12 12 X13 13 X14 14 X15 15);

// ---- growing the chain ----

/// Appends a node to the chain `(full chunks, current chunk)`; a full chunk of 16 nodes moves
/// into the full chunks.
pub trait Push<Node> {
    /// The grown chain.
    type Output: Chain;
    /// Appends `node`.
    fn push(self, node: Node) -> Self::Output;
}

/// Appends a parallel `pre` hook: it joins the group right before it, or starts one.
pub trait PushParallel<P> {
    /// The grown chain.
    type Output: Chain;
    /// Appends `hook`.
    fn push_parallel(self, hook: P) -> Self::Output;
}

/// Appends a full chunk to the full chunks.
#[diagnostic::on_unimplemented(
    message = "an agent holds at most 256 hooks",
    label = "this hook is one too many",
    note = "combine related hooks into one struct that implements `agentix::Hook`"
)]
pub trait PushChunk<Chunk> {
    /// The grown chunks.
    type Output: Chain;
    /// Appends `chunk`.
    fn push_chunk(self, chunk: Chunk) -> Self::Output;
}

macro_rules! push_chunk {
    ($($chunk:ident $index:tt)*) => {
        impl<$($chunk: Chain,)* New: Chain> PushChunk<New> for ($($chunk,)*) {
            type Output = ($($chunk,)* New,);

            #[allow(non_snake_case)]
            fn push_chunk(self, new: New) -> Self::Output {
                let ($($chunk,)*) = self;
                ($($chunk,)* new,)
            }
        }
    };
}

macro_rules! push_node {
    ($($node:ident $index:tt)*) => {
        impl<Full: Chain, $($node: Chain,)* New: Chain> Push<New> for (Full, ($($node,)*)) {
            type Output = (Full, ($($node,)* New,));

            #[allow(non_snake_case)]
            fn push(self, new: New) -> Self::Output {
                let (full, ($($node,)*)) = self;
                (full, ($($node,)* new,))
            }
        }

        impl<Full: Chain, $($node: Chain,)* G: ParallelGroup, P: on::ParallelPre> PushParallel<P>
            for (Full, ($($node,)* Par<G>,))
        {
            type Output = (Full, ($($node,)* Par<(G, P)>,));

            #[allow(non_snake_case)]
            fn push_parallel(self, hook: P) -> Self::Output {
                let (full, ($($node,)* Par(group),)) = self;
                (full, ($($node,)* Par((group, hook)),))
            }
        }

        push_parallel_after!([$($node)*] Lifecycle<Last>; Last);
        push_parallel_after!([$($node)*] Single<Last, Kind>; Last, Kind);
    };
}

/// A parallel hook after a sequential node starts a new group (in this chunk, or a new one).
macro_rules! push_parallel_after {
    ([$($node:ident)*] $last:ty; $($param:ident),*) => {
        impl<Full: Chain, $($node: Chain,)* $($param,)* P: on::ParallelPre> PushParallel<P>
            for (Full, ($($node,)* $last,))
        where
            $last: Chain,
            (Full, ($($node,)* $last,)): Push<Par<((), P)>>,
        {
            type Output = <(Full, ($($node,)* $last,)) as Push<Par<((), P)>>>::Output;

            fn push_parallel(self, hook: P) -> Self::Output {
                self.push(Par(((), hook)))
            }
        }
    };
}

prefixes!(push_chunk [] X0 0 X1 1 X2 2 X3 3 X4 4 X5 5 X6 6 X7 7 X8 8 X9 9 X10 10 X11 11 X12 12 X13 13 X14 14);
prefixes!(push_node [] X0 0 X1 1 X2 2 X3 3 X4 4 X5 5 X6 6 X7 7 X8 8 X9 9 X10 10 X11 11 X12 12 X13 13 X14 14);

/// A full current chunk moves into the full chunks, and the new node starts the next chunk.
impl<Full, X0, X1, X2, X3, X4, X5, X6, X7, X8, X9, X10, X11, X12, X13, X14, X15, New> Push<New>
    for (Full, (X0, X1, X2, X3, X4, X5, X6, X7, X8, X9, X10, X11, X12, X13, X14, X15))
where
    Full: PushChunk<(X0, X1, X2, X3, X4, X5, X6, X7, X8, X9, X10, X11, X12, X13, X14, X15)>,
    (X0, X1, X2, X3, X4, X5, X6, X7, X8, X9, X10, X11, X12, X13, X14, X15): Chain,
    New: Chain,
{
    type Output = (Full::Output, (New,));

    fn push(self, new: New) -> Self::Output {
        let (full, chunk) = self;
        (full.push_chunk(chunk), (new,))
    }
}

impl<Full: Chain, P: on::ParallelPre> PushParallel<P> for (Full, ()) {
    type Output = (Full, (Par<((), P)>,));

    fn push_parallel(self, hook: P) -> Self::Output {
        (self.0, (Par(((), hook)),))
    }
}

// ---- the onions ----

/// One layer of the `wrap_model` onion.
pub trait ModelLayer: Send + Sync {
    /// Whether the layer's hook handles the event (and so is traced); one that does not only
    /// calls `next`.
    const ACTIVE: bool;
    /// How long one call of the layer's hook may take, `next` included.
    const TIMEOUT: Option<Duration> = None;
    /// Whether the layer's hook has a `when` condition, asked before each call.
    const CONDITIONAL: bool = false;
    /// Whether the hook runs on this call; the layer passes a call it skips on to `next`.
    fn applies(&self, request: &ModelRequest, turn: &Turn) -> bool {
        let _ = (request, turn);
        true
    }
    /// The hook's name.
    fn name(&self) -> &'static str;
    /// Runs the hook around `next`.
    fn wrap(
        &self,
        request: &ModelRequest,
        turn: &Turn,
        next: &impl NextModel,
    ) -> impl Future<Output = Result<ModelResponse, ModelError>> + Send;
}

/// One layer of the `wrap_tool` onion.
pub trait ToolLayer: Send + Sync {
    /// Whether the layer's hook handles the event (and so is traced); one that does not only
    /// calls `next`.
    const ACTIVE: bool;
    /// How long one call of the layer's hook may take, `next` included.
    const TIMEOUT: Option<Duration> = None;
    /// Whether the layer's hook has a `when` condition, asked before each call.
    const CONDITIONAL: bool = false;
    /// Whether the hook runs on this call; the layer passes a call it skips on to `next`.
    fn applies(&self, call: &ToolCall, turn: &Turn) -> bool {
        let _ = (call, turn);
        true
    }
    /// The hook's name.
    fn name(&self) -> &'static str;
    /// Runs the hook around `next`.
    fn wrap(
        &self,
        call: &ToolCall,
        turn: &Turn,
        next: &impl NextTool,
    ) -> impl Future<Output = ToolResult> + Send;
}

impl<H: Hook> ModelLayer for Lifecycle<H> {
    const ACTIVE: bool = H::EVENTS.contains(EventKind::WrapModel);
    const TIMEOUT: Option<Duration> = H::TIMEOUT;

    fn name(&self) -> &'static str {
        self.0.name()
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

    fn name(&self) -> &'static str {
        self.0.name()
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

    fn applies(&self, request: &ModelRequest, turn: &Turn) -> bool {
        self.0.applies(request, turn)
    }

    fn name(&self) -> &'static str {
        self.0.name()
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

    fn applies(&self, call: &ToolCall, turn: &Turn) -> bool {
        self.0.applies(call, turn)
    }

    fn name(&self) -> &'static str {
        self.0.name()
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

/// An onion grown by one layer: `Rest`'s layers outside, `Layer` innermost.
#[derive(Debug, Default)]
pub struct Wraps<Rest, Layer> {
    rest: Rest,
    layer: Layer,
}

/// The `wrap_model` onion.
pub trait ModelWraps: Send + Sync {
    /// `innermost` with every layer around it, first declared outermost.
    fn around<'a, O: Observer>(
        &'a self,
        turn: &'a Turn,
        observer: &'a O,
        innermost: impl NextModel + 'a,
    ) -> impl NextModel + 'a;
}

/// The `wrap_tool` onion.
pub trait ToolWraps: Send + Sync {
    /// Where a call's result is kept while the onion's hooks hold it.
    #[doc(hidden)]
    type Kept: Keep;

    /// `innermost` with every layer around it, first declared outermost.
    fn around<'a, O: Observer>(
        &'a self,
        turn: &'a Turn,
        observer: &'a O,
        innermost: impl NextTool + 'a,
    ) -> impl NextTool + 'a;
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

/// Where a running tool call's result is kept while `wrap_tool` hooks hold it, so that a hook
/// that panics or times out after `next` returned cannot lose what the tool did.
#[doc(hidden)]
pub trait Keep: Default + Send + Sync {
    /// Keeps what the tool set returned (its output and failure: the id and name are the
    /// call's).
    fn keep(&self, result: &ToolResult);
    /// What was kept, taken out.
    fn take(&mut self) -> Option<ToolResult>;
}

/// Nothing to keep: no `wrap_tool` hook can hold a result.
impl Keep for () {
    #[inline(always)]
    fn keep(&self, _result: &ToolResult) {}

    #[inline(always)]
    fn take(&mut self) -> Option<ToolResult> {
        None
    }
}

/// The latest result of the running call: one copy of its output while the onion runs, the one
/// cost of a `wrap_tool` hook beyond dispatch.
#[doc(hidden)]
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
        *crate::lock(&self.0) = Some(kept);
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
            LayerState::Skipped { next: self.next.call(request) }
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
            LayerState::Skipped { next: self.next.call(call) }
        } else {
            LayerState::started(start::<ToolCallOf<'_>, _>(turn, observer, name, || {
                Bounded::new(L::TIMEOUT, self.layer.wrap(call, turn, &self.next))
            }))
        };
        LayerCall { state, wrapped: ToolCallOf(call), name, turn, observer, active: L::ACTIVE }
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

// ---- registration ----

/// Marks the registration of a [`Hook`]: into the chain and, as one layer each, both onions.
#[derive(Debug)]
pub enum AllEvents {}

/// Marks the registration of an [`on::ParallelPre`] hook.
#[derive(Debug)]
pub enum Parallel {}

/// Marks the registration of a hook through a function that makes it: the function of the same
/// name that `#[hook]` generates beside the hook's type, so `.hook(require_plan)` works.
#[derive(Debug)]
pub struct Factory<Role>(PhantomData<Role>);

/// Adds a hook to the pipeline `P`. Implemented for every [`Hook`] and every hook of [`on`];
/// `Role` tells which, so a type that implements one of them needs no annotation.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a hook",
    label = "not a hook",
    note = "put `#[hook(...)]` on an async fn, or implement `agentix::Hook` or one trait of `agentix::on` for the type"
)]
pub trait Register<Role, P> {
    /// The grown pipeline.
    type Output: Pipeline;

    /// Adds the hook after every hook of `pipeline`.
    fn register(self, pipeline: P) -> Self::Output;
}

impl<H, C, M, T> Register<AllEvents, Hooks<C, M, T>> for H
where
    H: Hook,
    C: Push<Lifecycle<H>>,
    M: ModelWraps,
    T: ToolWraps,
{
    type Output = Hooks<C::Output, Wraps<M, Lifecycle<H>>, Wraps<T, Lifecycle<H>>>;

    fn register(self, hooks: Hooks<C, M, T>) -> Self::Output {
        let hook = Lifecycle(Arc::new(self));
        Hooks {
            chain: hooks.chain.push(hook.clone()),
            model: Wraps { rest: hooks.model, layer: hook.clone() },
            tool: Wraps { rest: hooks.tool, layer: hook },
        }
    }
}

impl<F, H, Role, P> Register<Factory<Role>, P> for F
where
    F: FnOnce() -> H,
    H: Register<Role, P>,
{
    type Output = H::Output;

    fn register(self, pipeline: P) -> Self::Output {
        self().register(pipeline)
    }
}

impl<H, C, M, T> Register<Parallel, Hooks<C, M, T>> for H
where
    H: on::ParallelPre,
    C: PushParallel<H>,
    M: ModelWraps,
    T: ToolWraps,
{
    type Output = Hooks<C::Output, M, T>;

    fn register(self, hooks: Hooks<C, M, T>) -> Self::Output {
        Hooks { chain: hooks.chain.push_parallel(self), model: hooks.model, tool: hooks.tool }
    }
}

macro_rules! register_single_event {
    ($($event:ident),*) => {$(
        impl<H, C, M, T> Register<event::$event, Hooks<C, M, T>> for H
        where
            H: on::$event,
            C: Push<Single<H, event::$event>>,
            M: ModelWraps,
            T: ToolWraps,
        {
            type Output = Hooks<C::Output, M, T>;

            fn register(self, hooks: Hooks<C, M, T>) -> Self::Output {
                Hooks { chain: hooks.chain.push(Single(self, PhantomData)), model: hooks.model, tool: hooks.tool }
            }
        }
    )*};
}

register_single_event!(
    Pre,
    BeforeModel,
    AfterModel,
    BeforeTool,
    AfterTool,
    ToolError,
    BeforeFinal,
    Post
);

impl<H, C, M, T> Register<event::WrapModel, Hooks<C, M, T>> for H
where
    H: on::WrapModel,
    C: Chain,
    M: ModelWraps,
    T: ToolWraps,
{
    type Output = Hooks<C, Wraps<M, Single<H, event::WrapModel>>, T>;

    fn register(self, hooks: Hooks<C, M, T>) -> Self::Output {
        let layer = Single(self, PhantomData);
        Hooks { chain: hooks.chain, model: Wraps { rest: hooks.model, layer }, tool: hooks.tool }
    }
}

impl<H, C, M, T> Register<event::WrapTool, Hooks<C, M, T>> for H
where
    H: on::WrapTool,
    C: Chain,
    M: ModelWraps,
    T: ToolWraps,
{
    type Output = Hooks<C, M, Wraps<T, Single<H, event::WrapTool>>>;

    fn register(self, hooks: Hooks<C, M, T>) -> Self::Output {
        let layer = Single(self, PhantomData);
        Hooks { chain: hooks.chain, model: hooks.model, tool: Wraps { rest: hooks.tool, layer } }
    }
}
