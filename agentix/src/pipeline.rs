//! The static pipeline: hooks composed by type, dispatched without boxing or allocation.
//!
//! [`AgentBuilder::hook`](crate::AgentBuilder::hook) grows the pipeline one node at a time, as
//! `tower::ServiceBuilder` grows a `Stack`: `Stack<Stack<Identity, Seq<A>>, Par<((), B)>>` is
//! "A, then a parallel group holding B". Each event's chain is one nested future whose size is
//! known at compile time; a hook whose [`Hook::EVENTS`] lacks an event is skipped by a constant
//! branch, and an empty pipeline ([`Identity`]) costs nothing.

use std::any::Any;
use std::future::{Future, ready};
use std::panic::AssertUnwindSafe;

use futures::FutureExt;
use futures::future::join;

use crate::event::{
    AfterModel, AfterTool, BeforeFinal, BeforeModel, BeforeTool, Event, EventKind, Payload, Post,
    Pre, ToolError,
};
use crate::hook::{Hook, NextModel, NextTool, ParallelPre};
use crate::message::{AssistantMessage, Part, ToolCall, ToolFailure, ToolResult};
use crate::model::{ModelError, ModelRequest, ModelResponse};
use crate::observe::{Decision, Observation, Observer};
use crate::turn::Turn;
use crate::verdict::{Halt, Verdict};
use crate::{Outcome, panic_message};

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
    /// A hook panicked.
    Panicked {
        /// The hook.
        hook: &'static str,
        /// The panic's message.
        message: String,
    },
}

impl<E: Event> Flow<E> {
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
            Flow::Retry { feedback, .. } => Decision::Retry {
                feedback: feedback.note(),
            },
            Flow::Reject { rejection, .. } => Decision::Reject {
                reason: rejection.note().unwrap_or_default(),
            },
            Flow::Escalate { escalation, .. } => Decision::Escalate {
                reason: escalation.note().unwrap_or_default(),
            },
            Flow::Halt { halt, .. } => Decision::Halt {
                reason: &halt.reason,
            },
            Flow::Panicked { message, .. } => Decision::Panicked { message },
        }
    }
}

type Caught<T> = Result<T, Box<dyn Any + Send>>;

/// Turns a hook's (caught) verdict into the chain's flow, and reports it.
fn settle<E: Event>(
    hook: &'static str,
    result: Caught<Verdict<E>>,
    observer: &impl Observer,
) -> Flow<E> {
    let flow = match result {
        Ok(verdict) => Flow::decided(hook, verdict),
        Err(payload) => Flow::Panicked {
            hook,
            message: panic_message(payload.as_ref()),
        },
    };
    observer.observe(&Observation::Hook {
        event: E::KIND,
        hook,
        decision: flow.decision(),
    });
    flow
}

mod sealed {
    pub trait Sealed {}
}

/// A composed chain of hooks for every event. Built by the agent builder; not implemented by
/// hand (implement [`Hook`] or [`ParallelPre`] instead).
pub trait Pipeline: sealed::Sealed + Send + Sync {
    /// Runs the `pre` chain.
    fn pre<O: Observer>(
        &self,
        turn: &mut Turn,
        observer: &O,
    ) -> impl Future<Output = Flow<Pre>> + Send;

    /// Runs the `before_model` chain.
    fn before_model<O: Observer>(
        &self,
        request: &mut ModelRequest,
        turn: &mut Turn,
        observer: &O,
    ) -> impl Future<Output = Flow<BeforeModel>> + Send;

    /// Runs the `wrap_model` chain around `next`, first hook outermost.
    fn wrap_model<O: Observer>(
        &self,
        request: &ModelRequest,
        turn: &Turn,
        observer: &O,
        next: impl NextModel,
    ) -> impl Future<Output = Result<ModelResponse, ModelError>> + Send;

    /// Runs the `after_model` chain.
    fn after_model<O: Observer>(
        &self,
        message: &mut AssistantMessage,
        turn: &mut Turn,
        observer: &O,
    ) -> impl Future<Output = Flow<AfterModel>> + Send;

    /// Runs the `before_tool` chain.
    fn before_tool<O: Observer>(
        &self,
        call: &mut ToolCall,
        turn: &mut Turn,
        observer: &O,
    ) -> impl Future<Output = Flow<BeforeTool>> + Send;

    /// Runs the `wrap_tool` chain around `next`, first hook outermost.
    fn wrap_tool<O: Observer>(
        &self,
        call: &ToolCall,
        turn: &Turn,
        observer: &O,
        next: impl NextTool,
    ) -> impl Future<Output = ToolResult> + Send;

    /// Runs the `after_tool` chain.
    fn after_tool<O: Observer>(
        &self,
        result: &mut ToolResult,
        turn: &mut Turn,
        observer: &O,
    ) -> impl Future<Output = Flow<AfterTool>> + Send;

    /// Runs the `tool_error` chain.
    fn tool_error<O: Observer>(
        &self,
        result: &mut ToolResult,
        turn: &mut Turn,
        observer: &O,
    ) -> impl Future<Output = Flow<ToolError>> + Send;

    /// Runs the `before_final` chain.
    fn before_final<O: Observer>(
        &self,
        message: &mut AssistantMessage,
        turn: &mut Turn,
        observer: &O,
    ) -> impl Future<Output = Flow<BeforeFinal>> + Send;

    /// Runs the `post` chain.
    fn post<O: Observer>(
        &self,
        outcome: &Outcome,
        turn: &mut Turn,
        observer: &O,
    ) -> impl Future<Output = Flow<Post>> + Send;
}

/// The empty pipeline.
#[derive(Clone, Copy, Debug, Default)]
pub struct Identity;

/// A pipeline grown by one node: `Rest`'s hooks run first, then `Node`'s.
#[derive(Clone, Debug, Default)]
pub struct Stack<Rest, Node> {
    rest: Rest,
    node: Node,
}

/// A node holding one sequential [`Hook`].
#[derive(Clone, Debug, Default)]
pub struct Seq<H>(H);

/// A node holding a group of [`ParallelPre`] hooks that run concurrently; `G` is `((), A)`,
/// `(((), A), B)`, … in declaration order.
#[derive(Clone, Debug, Default)]
pub struct Par<G>(G);

impl sealed::Sealed for Identity {}
impl<Rest, Node> sealed::Sealed for Stack<Rest, Node> {}

/// Calls `$method` on every node of the chain for the events that pass only values and the turn;
/// the wrap events and parallel groups are written out below.
macro_rules! identity_events {
    ($($method:ident: $event:ident ($($arg:ident: $ty:ty),*);)*) => {$(
        fn $method<O: Observer>(
            &self,
            $($arg: $ty,)*
            turn: &mut Turn,
            observer: &O,
        ) -> impl Future<Output = Flow<$event>> + Send {
            let _ = ($($arg,)* turn, observer);
            ready(Flow::Continue)
        }
    )*};
}

macro_rules! sequential_events {
    ($($method:ident: $event:ident ($($arg:ident: $ty:ty),*);)*) => {$(
        fn $method<O: Observer>(
            &self,
            $($arg: $ty,)*
            turn: &mut Turn,
            observer: &O,
        ) -> impl Future<Output = Flow<$event>> + Send {
            async move {
                let flow = self.rest.$method($($arg,)* turn, observer).await;
                if !flow.is_continue() || !H::EVENTS.contains($event::KIND) {
                    return flow;
                }
                let hook = &self.node.0;
                let name = hook.name();
                turn.enter_hook(name);
                let result = AssertUnwindSafe(hook.$method($($arg,)* turn)).catch_unwind().await;
                settle(name, result, observer)
            }
        }
    )*};
}

macro_rules! delegated_events {
    ($($method:ident: $event:ident ($($arg:ident: $ty:ty),*);)*) => {$(
        fn $method<O: Observer>(
            &self,
            $($arg: $ty,)*
            turn: &mut Turn,
            observer: &O,
        ) -> impl Future<Output = Flow<$event>> + Send {
            self.rest.$method($($arg,)* turn, observer)
        }
    )*};
}

/// The events with a value and the turn, as `method: Event (value: &mut Type);`.
macro_rules! value_events {
    ($apply:ident) => {
        $apply! {
            before_model: BeforeModel (request: &mut ModelRequest);
            after_model: AfterModel (message: &mut AssistantMessage);
            before_tool: BeforeTool (call: &mut ToolCall);
            after_tool: AfterTool (result: &mut ToolResult);
            tool_error: ToolError (result: &mut ToolResult);
            before_final: BeforeFinal (message: &mut AssistantMessage);
        }
    };
}

impl Pipeline for Identity {
    identity_events! {
        pre: Pre ();
        post: Post (outcome: &Outcome);
    }
    value_events!(identity_events);

    async fn wrap_model<O: Observer>(
        &self,
        request: &ModelRequest,
        _turn: &Turn,
        _observer: &O,
        next: impl NextModel,
    ) -> Result<ModelResponse, ModelError> {
        next.call(request).await
    }

    async fn wrap_tool<O: Observer>(
        &self,
        call: &ToolCall,
        _turn: &Turn,
        _observer: &O,
        next: impl NextTool,
    ) -> ToolResult {
        next.call(call).await
    }
}

impl<Rest: Pipeline, H: Hook> Pipeline for Stack<Rest, Seq<H>> {
    async fn pre<O: Observer>(&self, turn: &mut Turn, observer: &O) -> Flow<Pre> {
        let flow = self.rest.pre(turn, observer).await;
        if !flow.is_continue() || !H::EVENTS.contains(EventKind::Pre) {
            return flow;
        }
        let hook = &self.node.0;
        let name = hook.name();
        turn.enter_hook(name);
        let result = AssertUnwindSafe(hook.pre(turn)).catch_unwind().await;
        settle(name, result, observer)
    }

    sequential_events! {
        post: Post (outcome: &Outcome);
    }
    value_events!(sequential_events);

    async fn wrap_model<O: Observer>(
        &self,
        request: &ModelRequest,
        turn: &Turn,
        observer: &O,
        next: impl NextModel,
    ) -> Result<ModelResponse, ModelError> {
        if H::EVENTS.contains(EventKind::WrapModel) {
            let hooked = Wrapped {
                hook: &self.node.0,
                turn,
                observer,
                next,
            };
            self.rest.wrap_model(request, turn, observer, hooked).await
        } else {
            self.rest.wrap_model(request, turn, observer, next).await
        }
    }

    async fn wrap_tool<O: Observer>(
        &self,
        call: &ToolCall,
        turn: &Turn,
        observer: &O,
        next: impl NextTool,
    ) -> ToolResult {
        if H::EVENTS.contains(EventKind::WrapTool) {
            let hooked = Wrapped {
                hook: &self.node.0,
                turn,
                observer,
                next,
            };
            self.rest.wrap_tool(call, turn, observer, hooked).await
        } else {
            self.rest.wrap_tool(call, turn, observer, next).await
        }
    }
}

/// One wrap hook around the rest of its chain: what the hooks declared before it see as `next`.
struct Wrapped<'a, H, O, N> {
    hook: &'a H,
    turn: &'a Turn,
    observer: &'a O,
    next: N,
}

impl<H: Hook, O: Observer, N: NextModel> NextModel for Wrapped<'_, H, O, N> {
    async fn call(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        if self.turn.aborted.get().is_some() {
            return Err(ModelError::Aborted);
        }
        let name = self.hook.name();
        let call = self.hook.wrap_model(request, self.turn, &self.next);
        let returned = AssertUnwindSafe(call).catch_unwind().await;
        match returned {
            Ok(result) => {
                let decision = Decision::Returned { ok: result.is_ok() };
                self.observe(EventKind::WrapModel, name, decision);
                result
            }
            Err(payload) => {
                self.abort(EventKind::WrapModel, name, payload);
                Err(ModelError::Aborted)
            }
        }
    }
}

impl<H: Hook, O: Observer, N: NextTool> NextTool for Wrapped<'_, H, O, N> {
    async fn call(&self, call: &ToolCall) -> ToolResult {
        let aborted = || {
            let reason = "a wrap_tool hook panicked".to_owned();
            ToolResult::failure(call, ToolFailure::NotRun { reason })
        };
        if self.turn.aborted.get().is_some() {
            return aborted();
        }
        let name = self.hook.name();
        let returned = AssertUnwindSafe(self.hook.wrap_tool(call, self.turn, &self.next))
            .catch_unwind()
            .await;
        match returned {
            Ok(result) => {
                self.observe(
                    EventKind::WrapTool,
                    name,
                    Decision::Returned {
                        ok: !result.is_error(),
                    },
                );
                result
            }
            Err(payload) => {
                self.abort(EventKind::WrapTool, name, payload);
                aborted()
            }
        }
    }
}

impl<H, O: Observer, N> Wrapped<'_, H, O, N> {
    fn observe(&self, event: EventKind, hook: &str, decision: Decision<'_>) {
        self.observer.observe(&Observation::Hook {
            event,
            hook,
            decision,
        });
    }

    fn abort(&self, event: EventKind, hook: &'static str, payload: Box<dyn Any + Send>) {
        let message = panic_message(payload.as_ref());
        self.observe(event, hook, Decision::Panicked { message: &message });
        self.turn.abort(event, hook, message);
    }
}

impl<Rest: Pipeline, G: ParallelGroup> Pipeline for Stack<Rest, Par<G>> {
    async fn pre<O: Observer>(&self, turn: &mut Turn, observer: &O) -> Flow<Pre> {
        let flow = self.rest.pre(turn, observer).await;
        if !flow.is_continue() {
            return flow;
        }
        let output = self.node.0.run(turn).await;
        match self.node.0.merge(output, turn, observer) {
            Ok(()) => Flow::Continue,
            Err((hook, message)) => Flow::Panicked { hook, message },
        }
    }

    delegated_events! {
        post: Post (outcome: &Outcome);
    }
    value_events!(delegated_events);

    fn wrap_model<O: Observer>(
        &self,
        request: &ModelRequest,
        turn: &Turn,
        observer: &O,
        next: impl NextModel,
    ) -> impl Future<Output = Result<ModelResponse, ModelError>> + Send {
        self.rest.wrap_model(request, turn, observer, next)
    }

    fn wrap_tool<O: Observer>(
        &self,
        call: &ToolCall,
        turn: &Turn,
        observer: &O,
        next: impl NextTool,
    ) -> impl Future<Output = ToolResult> + Send {
        self.rest.wrap_tool(call, turn, observer, next)
    }
}

/// A group of parallel `pre` hooks: run together on one task, merged in declaration order.
pub trait ParallelGroup: Send + Sync {
    /// Every hook's parts (or panic), in declaration order.
    type Output: Send;

    /// Runs every hook of the group concurrently, polling them in one future (no spawn, no
    /// allocation).
    fn run(&self, turn: &Turn) -> impl Future<Output = Self::Output> + Send;

    /// Injects the parts in declaration order; the first panic, in declaration order, is
    /// returned instead.
    fn merge<O: Observer>(
        &self,
        output: Self::Output,
        turn: &mut Turn,
        observer: &O,
    ) -> Result<(), (&'static str, String)>;
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
    ) -> Result<(), (&'static str, String)> {
        Ok(())
    }
}

impl<G: ParallelGroup, P: ParallelPre> ParallelGroup for (G, P) {
    type Output = (G::Output, Caught<Vec<Part>>);

    fn run(&self, turn: &Turn) -> impl Future<Output = Self::Output> + Send {
        join(
            self.0.run(turn),
            AssertUnwindSafe(self.1.pre(turn)).catch_unwind(),
        )
    }

    fn merge<O: Observer>(
        &self,
        (earlier, parts): Self::Output,
        turn: &mut Turn,
        observer: &O,
    ) -> Result<(), (&'static str, String)> {
        self.0.merge(earlier, turn, observer)?;
        let hook = self.1.name();
        let report = |decision| {
            observer.observe(&Observation::Hook {
                event: EventKind::Pre,
                hook,
                decision,
            })
        };
        match parts {
            Ok(parts) => {
                report(Decision::Parts { count: parts.len() });
                turn.inject_as(hook, parts);
                Ok(())
            }
            Err(payload) => {
                let message = panic_message(payload.as_ref());
                report(Decision::Panicked { message: &message });
                Err((hook, message))
            }
        }
    }
}

/// Marks a [`Hook`] registration.
#[derive(Debug)]
pub enum Sequential {}

/// Marks a [`ParallelPre`] registration.
#[derive(Debug)]
pub enum Parallel {}

/// Adds a hook to pipeline `P`. Implemented for every [`Hook`] and every [`ParallelPre`]; a
/// parallel hook joins the group right before it, or starts one.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a hook",
    label = "not a hook",
    note = "put `#[hook(...)]` on an async fn, or implement `agentix::Hook` (or `agentix::ParallelPre`) for the type"
)]
pub trait Register<Marker, P> {
    /// The grown pipeline.
    type Output: Pipeline;

    /// Adds the hook after every hook of `pipeline`.
    fn register(self, pipeline: P) -> Self::Output;
}

impl<H: Hook, P: Pipeline> Register<Sequential, P> for H {
    type Output = Stack<P, Seq<H>>;

    fn register(self, pipeline: P) -> Self::Output {
        Stack {
            rest: pipeline,
            node: Seq(self),
        }
    }
}

impl<H: ParallelPre> Register<Parallel, Identity> for H {
    type Output = Stack<Identity, Par<((), H)>>;

    fn register(self, pipeline: Identity) -> Self::Output {
        Stack {
            rest: pipeline,
            node: Par(((), self)),
        }
    }
}

impl<H: ParallelPre, Rest: Pipeline, S: Hook> Register<Parallel, Stack<Rest, Seq<S>>> for H {
    type Output = Stack<Stack<Rest, Seq<S>>, Par<((), H)>>;

    fn register(self, pipeline: Stack<Rest, Seq<S>>) -> Self::Output {
        Stack {
            rest: pipeline,
            node: Par(((), self)),
        }
    }
}

impl<H: ParallelPre, Rest: Pipeline, G: ParallelGroup> Register<Parallel, Stack<Rest, Par<G>>>
    for H
{
    type Output = Stack<Rest, Par<(G, H)>>;

    fn register(self, pipeline: Stack<Rest, Par<G>>) -> Self::Output {
        let Stack {
            rest,
            node: Par(group),
        } = pipeline;
        Stack {
            rest,
            node: Par((group, self)),
        }
    }
}
