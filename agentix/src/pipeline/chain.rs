//! The chain: the hooks of the sequential events, run in declaration order.

use std::cell::Cell;

use super::tripwire::{SkippedWires, Tripped};
use super::{Flow, checked, report};
use crate::error::HookFailure;
use crate::event::{
    AfterModel, AfterTool, BeforeFinal, BeforeModel, BeforeTool, Event, EventKind, EventSet, Post,
    Pre, ToolError,
};
use crate::hook::{Hook, HookMethods};
use crate::message::{AssistantMessage, Part, ToolCall, ToolResult};
use crate::model::ModelRequest;
use crate::observe::{Decision, Observation, Observer};
use crate::on::OnError;
use crate::support::{Bounded, Caught, caught, panic_message};
use crate::tool::Tool;
use crate::turn::Turn;
use crate::verdict::Verdict;
use crate::{Outcome, on};
use futures::future::join;
use std::any::Any;
use std::future::{Future, ready};
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

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

            /// Whether the node has per-tool `before_tool` hooks: the loop then finds the tool
            /// each call names before the chain runs, and only then.
            const PER_TOOL: bool = false;

            /// Whether the node has per-tool `after_tool` or `tool_error` hooks, which the tool
            /// set runs inside the call ([`ToolRunner`](crate::tool::ToolRunner)).
            const OUTPUT_HOOKS: bool = false;

            /// Runs the node's per-tool `after_tool` hooks of tool `T` on its output.
            fn after_tool_of<T: Tool + 'static, O: Observer>(
                &self,
                output: &mut T::Output,
                turn: &Turn,
                observer: &O,
            ) -> impl Future<Output = ()> + Send {
                let _ = (output, turn, observer);
                ready(())
            }

            /// Runs the node's per-tool `tool_error` hooks of tool `T` on its error.
            fn tool_error_of<T: Tool + 'static, O: Observer>(
                &self,
                error: &mut T::Error,
                turn: &Turn,
                observer: &O,
            ) -> impl Future<Output = ()> + Send {
                let _ = (error, turn, observer);
                ready(())
            }

            /// Runs the node's `tripwire` hooks on `request`, beside the model call of the
            /// turn's first step, all at once: `Err` for the first that trips (or fails, unless
            /// it may be skipped: then into `skipped`).
            fn tripwire<O: Observer>(
                &self,
                request: &ModelRequest,
                turn: &Turn,
                observer: &O,
                skipped: &SkippedWires,
            ) -> impl Future<Output = Result<(), Tripped>> + Send {
                let _ = (request, turn, observer, skipped);
                ready(Ok(()))
            }

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

/// The chain's flow — boxed, `None` when every hook continued — or the panic of the hook that
/// was running. A panic guard covers a whole chain, not each hook: each hook's [`Running`] mark
/// tells the guard whose panic it caught. A panic outside any hook (an observer's) is not a
/// hook's to answer for: it goes on unwinding.
#[inline(always)]
pub(crate) fn settle_ended<E: Event>(
    caught: Caught<Option<Box<Flow<E>>>>,
    turn: &mut Turn,
    observer: &impl Observer,
) -> Option<Box<Flow<E>>> {
    match caught {
        Ok(ended) => ended,
        Err(payload) => Some(Box::new(hook_panicked(payload, turn, observer))),
    }
}

/// [`hook_panic`], as the guarded chain's flow; out of line, as panics are rare.
#[cold]
fn hook_panicked<E: Event>(
    payload: Box<dyn Any + Send>,
    turn: &mut Turn,
    observer: &impl Observer,
) -> Flow<E> {
    let _ = turn;
    match hook_panic(payload, observer) {
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
    observer: &impl Observer,
) -> Result<(EventKind, &'static str, String), Box<dyn Any + Send>> {
    let Some((hook, event)) = PANICKED.with(Cell::take) else {
        return Err(payload);
    };
    let message = report_panic(observer, event, hook, payload.as_ref());
    Ok((event, hook, message))
}

thread_local! {
    /// The hook a panic unwound out of, left by its [`Running`] mark for the guard that
    /// catches the panic ([`hook_panic`]), which takes it.
    static PANICKED: Cell<Option<(&'static str, EventKind)>> = const { Cell::new(None) };
}

/// A hook running, for the panic guard around its chain: dropped while the hook unwinds, it
/// leaves the hook and its event where the guard finds them; forgotten when the hook returns
/// ([`done`](Running::done)), it costs nothing on the way of a hook that does not panic — no
/// store on the turn before the call, none after.
pub(crate) struct Running(&'static str, EventKind);

impl Running {
    #[inline(always)]
    pub(crate) fn mark(hook: &'static str, event: EventKind) -> Self {
        Running(hook, event)
    }

    /// The hook returned.
    #[inline(always)]
    pub(crate) fn done(self) {
        std::mem::forget(self);
    }
}

impl Drop for Running {
    /// Only while unwinding (or when the hook's future is dropped mid-call: a timeout, a turn
    /// dropped, which is no panic): the innermost hook's mark is the one kept.
    #[cold]
    fn drop(&mut self) {
        if std::thread::panicking() {
            PANICKED.with(|panicked| {
                if panicked.get().is_none() {
                    panicked.set(Some((self.0, self.1)));
                }
            });
        }
    }
}

/// Reports a hook its `when` condition skipped (or a typed answer's hook, an answer that did
/// not read as its type); the chain goes on.
#[inline]
pub(super) fn skipped<E: Event>(
    observer: &impl Observer,
    event: EventKind,
    hook: &'static str,
) -> Flow<E> {
    observer.observe(&Observation::Hook { event, hook, decision: Decision::Skipped });
    Flow::Continue
}

/// Tells the observer that `hook` panicked at `event`, and returns the panic's message.
pub(super) fn report_panic(
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

/// A [`Hook`] in the pipeline; shared between the chain and both onions. Its name is asked
/// once, when it is added: a default name is found by searching the type's name, too slow for
/// every event.
#[derive(Debug)]
pub struct Lifecycle<H>(pub(super) Arc<H>, pub(super) &'static str);

impl<H: Hook> Lifecycle<H> {
    pub(super) fn new(hook: H) -> Self {
        let name = hook.name();
        Lifecycle(Arc::new(hook), name)
    }
}

impl<H> Clone for Lifecycle<H> {
    fn clone(&self) -> Self {
        Lifecycle(Arc::clone(&self.0), self.1)
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

/// A node's hook has returned: the observer hears of its decision (`flow`, checked against the
/// event's contract by the caller). A `Continue` is reported without the flow: nothing of it is
/// kept in memory, so a chain of hooks that continue folds to their calls.
#[inline(always)]
fn ended<E: Event, O: Observer>(
    hook: &'static str,
    flow: Flow<E>,
    declared: bool,
    observer: &O,
) -> Flow<E> {
    if flow.is_continue() {
        // `Continue` owns nothing: no drop call for it.
        std::mem::forget(flow);
        if declared && (!O::SILENT || observer.traced()) {
            continued(observer, E::KIND, hook);
        }
        return Flow::Continue;
    }
    report(observer, hook, declared, &flow);
    flow
}

/// Tells the observer `hook` continued at `event`.
#[inline(never)]
fn continued(observer: &impl Observer, event: EventKind, hook: &'static str) {
    observer.observe(&Observation::Hook { event, hook, decision: Decision::Continue });
}

/// After a `before_tool` hook that may rename the call (any but a per-tool one, which edits
/// only its tool's arguments): the later per-tool hooks see the name it left.
macro_rules! may_rename {
    (BeforeTool, $per_tool:expr, $turn:ident, $call:ident) => {
        if !$per_tool {
            $turn.tool_in_hand.after_edit($call);
        }
    };
    ($event:ident, $per_tool:expr, $turn:ident $(, $value:ident)?) => {};
}

macro_rules! lifecycle_chain {
    ($($method:ident / $in_place:ident: $event:ident ($($arg:ident: $ty:ty)?);)*) => {
        impl<H: Hook> Chain for Lifecycle<H> {
            // Called at the events whose methods it defines, as `#[hook]` on its impl found
            // them; `H::EVENTS` says where it is traced.
            const EVENTS: EventSet = <H as HookMethods>::RUNS;
            // A hook with a timeout is awaited, under its timer.
            const IN_PLACE_EVENTS: EventSet = if H::TIMEOUT.is_none() {
                EventSet::ALL.without(<H as HookMethods>::RUNS).union(<H as HookMethods>::IN_PLACE)
            } else {
                EventSet::ALL.without(<H as HookMethods>::RUNS)
            };

            $(
                async fn $method<O: Observer>(&self, $($arg: $ty,)? turn: &mut Turn, observer: &O) -> Flow<$event> {
                    let name = self.1;
                    let running = Running::mark(name, $event::KIND);
                    if <H as HookMethods>::TURNS.contains(EventKind::$event) {
                        // Only `pre` and `post` output can be durable.
                        let durable = H::DURABLE && matches!($event::KIND, EventKind::Pre | EventKind::Post);
                        turn.attribute(name, durable);
                    }
                    let verdict = bounded!(H::TIMEOUT, self.0.$method($(&mut *$arg,)? turn));
                    running.done();
                    let edits = <H as HookMethods>::EDITS.contains(EventKind::$event);
                    if edits {
                        may_rename!($event, false, turn $(, $arg)?);
                    }
                    let flow = timed(name, verdict);
                    $(let flow = if edits { checked(flow, name, &*$arg) } else { flow };)?
                    ended(name, flow, H::EVENTS.contains(EventKind::$event), observer)
                }

                #[inline(always)]
                fn $in_place<O: Observer>(&self, $($arg: $ty,)? turn: &mut Turn, observer: &O) -> Flow<$event> {
                    let name = self.1;
                    let running = Running::mark(name, $event::KIND);
                    if <H as HookMethods>::TURNS.contains(EventKind::$event) {
                        let durable = H::DURABLE && matches!($event::KIND, EventKind::Pre | EventKind::Post);
                        turn.attribute(name, durable);
                    }
                    let verdict = HookMethods::$in_place(&*self.0, $(&mut *$arg,)? turn);
                    running.done();
                    let edits = <H as HookMethods>::EDITS.contains(EventKind::$event);
                    if edits {
                        may_rename!($event, false, turn $(, $arg)?);
                    }
                    let flow = Flow::decided(name, verdict);
                    $(let flow = if edits { checked(flow, name, &*$arg) } else { flow };)?
                    ended(name, flow, H::EVENTS.contains(EventKind::$event), observer)
                }
            )*
        }
    };
}

chain_events!(lifecycle_chain);

/// A hook on one event `E`: a `#[hook]` function, or a hand-written [`on`] trait; with its
/// name, asked once, when it was added.
pub struct Single<H, E>(pub(super) H, pub(super) PhantomData<fn() -> E>, pub(super) &'static str);

/// A copy for each agent built under a [`Policy`](super::Policy) that holds the hook.
impl<H: Clone, E> Clone for Single<H, E> {
    fn clone(&self) -> Self {
        Single(self.0.clone(), PhantomData, self.2)
    }
}

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

/// Whether a single-event hook runs on one tool's calls only: only `before_tool` hooks can.
macro_rules! per_tool {
    (BeforeTool, $hook:ident) => {
        <$hook as on::BeforeTool>::TOOL.is_some()
    };
    ($event:ident, $hook:ident) => {
        false
    };
}

/// Passes a per-tool hook by, untraced, on another tool's call.
macro_rules! other_tool {
    (BeforeTool, $hook:ident, $turn:ident, $call:ident) => {
        if let Some(tool) = <$hook as on::BeforeTool>::TOOL
            && !$turn.tool_in_hand.is(tool, $call)
        {
            return Flow::Continue;
        }
    };
    ($event:ident, $hook:ident, $turn:ident $(, $value:ident)?) => {};
}

macro_rules! single_chain {
    ($($method:ident / $in_place:ident: $event:ident ($($arg:ident: $ty:ty)?);)*) => {$(
        impl<H: on::$event> Chain for Single<H, $event> {
            const EVENTS: EventSet = EventSet::of(EventKind::$event);
            // A hook with a timeout is awaited, under its timer.
            const IN_PLACE_EVENTS: EventSet =
                in_place_events::<$event>(H::IN_PLACE && H::TIMEOUT.is_none());
            const PER_TOOL: bool = per_tool!($event, H);

            async fn $method<O: Observer>(&self, $($arg: $ty,)? turn: &mut Turn, observer: &O) -> Flow<$event> {
                other_tool!($event, H, turn $(, $arg)?);
                let name = if H::NAMED { self.0.name() } else { self.2 };
                if H::CONDITIONAL && !self.0.applies($(&*$arg,)? turn) {
                    return skipped(observer, $event::KIND, name);
                }
                let running = Running::mark(name, $event::KIND);
                if H::TURNS {
                    turn.attribute(name, durable_output!($event, H));
                }
                let verdict = bounded!(H::TIMEOUT, self.0.$method($(&mut *$arg,)? turn));
                running.done();
                if H::EDITS {
                    may_rename!($event, per_tool!($event, H), turn $(, $arg)?);
                }
                let flow = timed(name, verdict);
                // A hook that only reads the value left it as the contract found it.
                $(let flow = if H::EDITS { checked(flow, name, &*$arg) } else { flow };)?
                ended(name, flow, true, observer)
            }

            // Inlined into the tuple's: a hook's decision reported to a traced turn's span
            // makes it too big for the inliner's own choice.
            #[inline]
            fn $in_place<O: Observer>(&self, $($arg: $ty,)? turn: &mut Turn, observer: &O) -> Flow<$event> {
                other_tool!($event, H, turn $(, $arg)?);
                let name = if H::NAMED { self.0.name() } else { self.2 };
                if H::CONDITIONAL && !self.0.applies($(&*$arg,)? turn) {
                    return skipped(observer, $event::KIND, name);
                }
                let running = Running::mark(name, $event::KIND);
                if H::TURNS {
                    turn.attribute(name, durable_output!($event, H));
                }
                let verdict = self.0.$in_place($(&mut *$arg,)? turn);
                running.done();
                if H::EDITS {
                    may_rename!($event, per_tool!($event, H), turn $(, $arg)?);
                }
                let flow = Flow::decided(name, verdict);
                $(let flow = if H::EDITS { checked(flow, name, &*$arg) } else { flow };)?
                ended(name, flow, true, observer)
            }
        }
    )*};
}

chain_events!(single_chain);

/// A group of consecutive parallel `pre` hooks; `G` is `((), A)`, `(((), A), B)`, … in
/// declaration order.
#[derive(Clone, Debug)]
pub struct Par<G>(pub(super) G);

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

/// A parallel `pre` hook of a group, with its name, asked once, when it was added.
#[derive(Clone, Debug)]
pub struct ParHook<P>(P, &'static str);

impl<P: on::ParallelPre> ParHook<P> {
    pub(super) fn new(hook: P) -> Self {
        let name = hook.name();
        ParHook(hook, name)
    }
}

impl<G: ParallelGroup, P: on::ParallelPre> ParallelGroup for (G, ParHook<P>) {
    /// Every hook's parts, panic or timeout; `None` for one its `when` condition skipped.
    type Output = (G::Output, Option<Result<Caught<Vec<Part>>, Duration>>);

    fn run(&self, turn: &Turn) -> impl Future<Output = Self::Output> + Send {
        let hook = &self.1.0;
        let runs = !P::CONDITIONAL || hook.applies(turn);
        let run = runs.then(|| Bounded::new(P::TIMEOUT, caught(|| hook.pre(turn))));
        join(self.0.run(turn), MaybeRun { run })
    }

    fn merge<O: Observer>(
        &self,
        (earlier, parts): Self::Output,
        turn: &mut Turn,
        observer: &O,
    ) -> Result<(), (&'static str, HookFailure)> {
        self.0.merge(earlier, turn, observer)?;
        let hook = self.1.1;
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

        // Into the loop, as a hand-written one would call its hooks: a call per event's chain
        // would cost more than a hook that continues.
        #[inline(always)]
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

/// A tuple's per-tool result hooks of tool `T`: each node's in turn, until one ends the call.
macro_rules! tuple_per_tool_method {
    ($method:ident($value:ident: $assoc:ident) [$($node:ident $index:tt)*]) => {
        fn $method<T: Tool + 'static, O: Observer>(
            &self,
            $value: &mut T::$assoc,
            turn: &Turn,
            observer: &O,
        ) -> impl Future<Output = ()> + Send {
            async move {
                $(
                    if $node::OUTPUT_HOOKS && turn.aborted.get().is_none() {
                        self.$index.$method::<T, O>(&mut *$value, turn, observer).await;
                    }
                )*
                let _ = ($value, turn, observer);
            }
        }
    };
}

/// One node's `tripwire` checks, boxed: a tuple's run together without a combinator per node
/// (as deep as the tuple is long, which the compiler pays for on every agent). Only the nodes
/// that have tripwires are boxed, and only a turn that runs them.
type WireCheck<'a> = Pin<Box<dyn Future<Output = Result<(), Tripped>> + Send + 'a>>;

/// A tuple's `tripwire` hooks: every node's at once, the first trip ending the wait.
macro_rules! tuple_tripwire_method {
    ([$($node:ident $index:tt)*]) => {
        fn tripwire<O: Observer>(
            &self,
            request: &ModelRequest,
            turn: &Turn,
            observer: &O,
            skipped: &SkippedWires,
        ) -> impl Future<Output = Result<(), Tripped>> + Send {
            async move {
                #[allow(unused_mut)]
                let mut checks: Vec<WireCheck<'_>> = Vec::new();
                $(
                    if $node::EVENTS.contains(EventKind::Tripwire) {
                        checks.push(Box::pin(self.$index.tripwire(request, turn, observer, skipped)));
                    }
                )*
                let _ = (request, turn, observer, skipped);
                futures::future::try_join_all(checks).await.map(drop)
            }
        }
    };
}

macro_rules! tuple_chain {
    ($($node:ident $index:tt)*) => {
        impl<$($node: Chain),*> Chain for ($($node,)*) {
            const EVENTS: EventSet = EventSet::NONE$(.union($node::EVENTS))*;
            // An event runs in place when no node has hooks on it that await.
            const IN_PLACE_EVENTS: EventSet =
                EventSet::ALL.without(EventSet::NONE$(.union($node::EVENTS.without($node::IN_PLACE_EVENTS)))*);
            const PER_TOOL: bool = false $(|| $node::PER_TOOL)*;
            const OUTPUT_HOOKS: bool = false $(|| $node::OUTPUT_HOOKS)*;

            chain_events!(tuple_chain_methods, [$($node $index)*]);

            tuple_per_tool_method!(after_tool_of(output: Output) [$($node $index)*]);
            tuple_per_tool_method!(tool_error_of(error: Error) [$($node $index)*]);
            tuple_tripwire_method!([$($node $index)*]);
        }
    };
}

prefixes!(tuple_chain [] X0 0 X1 1 X2 2 X3 3 X4 4 X5 5 X6 6 X7 7 X8 8 X9 9 X10 10 X11 11 X12 12 X13 13 X14 14 X15 15);
