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
//!   [`Hook`](crate::Hook) struct has a method for every event, so it is a node of every event.
//! - `wrap_model` and `wrap_tool` hooks form an *onion* each, first declared outermost. Each
//!   layer is one plain future around the hook's own (no boxing), and only hooks that can wrap
//!   are layers.

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

// The pipeline's parts, each in a file of its own; they share this module's names.
mod answer;
mod answer_hook;
mod chain;
mod grow;
mod onion;
mod per_tool;
mod policy;
mod register;
mod tripwire;

pub use crate::error::HookFailure;
pub use answer::{Answering, AnyAnswer, ReadFrom, Text, Typed, Validator};
pub(crate) use chain::{hook_panic, settle_ended};
pub(crate) use onion::not_run;
pub use policy::Policy;
pub(crate) use tripwire::SkippedWires;

/// The pipeline's nodes: the types [`AgentBuilder::hook`](crate::AgentBuilder::hook) and
/// [`Policy`] build a [`Hooks`] value from, and the traits that compose them. They appear in
/// an agent's type and in the bounds of code generic over pipelines; an agent is built without
/// naming any of them.
pub mod node {
    pub use super::answer_hook::{ForAnswer, OnAnswer};
    pub use super::chain::{Chain, Lifecycle, Par, ParHook, ParallelGroup, Single};
    pub use super::grow::{Push, PushChunk, PushParallel};
    pub use super::onion::KeptResult;
    pub use super::per_tool::{ErrorOf, ForTool, HasTool, Here, OutputOf, PerTool, There};
    pub use super::policy::{
        Admits, ChunkPolicy, FirstChunk, Governs, NeedsTool, NoTool, Policed, PolicyHook,
        StartsUnder, Under, Ungoverned, Within,
    };
    pub use super::register::{AllEvents, AsStandIn, Factory, Parallel, Register};
    pub use super::tripwire::{Tripped, Wire};
    pub use crate::hook::{
        Keep, MaySkip, ModelLayer, ModelWraps, NeverSkipped, Skip, ToolLayer, ToolWraps,
        Unreachable, Wraps,
    };
}
use node::{Chain, Keep, ModelWraps, ToolWraps};

/// What an observer is told of a hook's failure.
impl HookFailure {
    fn decision(&self) -> Decision<'_> {
        match self {
            HookFailure::Panicked { message } => Decision::Panicked { message },
            HookFailure::TimedOut { after } => Decision::TimedOut { after: *after },
        }
    }
}

use crate::event::{
    self, AfterModel, AfterTool, BeforeFinal, BeforeModel, BeforeTool, Event, Post, ToolError,
};
use crate::hook::{NextModel, NextTool};
use crate::message::AssistantMessage;
use crate::observe::{Decision, Observation, Observer};
use crate::turn::Turn;
use crate::verdict::{Halt, Verdict};

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
    /// A hook enqueued follow-up tasks.
    Enqueue {
        /// The hook.
        hook: &'static str,
        /// The tasks.
        follow_up: E::Enqueue,
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

impl<E: Event> Flow<E> {
    #[inline]
    pub(crate) fn decided(hook: &'static str, verdict: Verdict<E>) -> Self {
        match verdict {
            Verdict::Continue => Flow::Continue,
            Verdict::Stop(value) => Flow::Stop { hook, value },
            Verdict::Retry(feedback) => Flow::Retry { hook, feedback },
            Verdict::Reject(rejection) => Flow::Reject { hook, rejection },
            Verdict::Escalate(escalation) => Flow::Escalate { hook, escalation },
            Verdict::Enqueue(follow_up) => Flow::Enqueue { hook, follow_up },
            Verdict::Halt(halt) => Flow::Halt { hook, halt },
        }
    }

    /// Whether every hook continued.
    pub fn is_continue(&self) -> bool {
        matches!(self, Flow::Continue)
    }

    pub(crate) fn decision(&self) -> Decision<'_> {
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
            Flow::Enqueue { follow_up, .. } => Decision::Enqueue { count: follow_up.tasks() },
            Flow::Halt { halt, .. } => Decision::Halt { reason: &halt.reason },
            Flow::Failed { failure, .. } => failure.decision(),
        }
    }
}

/// Reports a hook's decision: always when it did not continue, and when it continued only if
/// the hook declares the event (a `Hook` struct is traced at its `EVENTS`).
#[inline]
fn report<O: Observer>(observer: &O, hook: &'static str, declared: bool, flow: &Flow<impl Event>) {
    // Nobody to tell: the decision is not even made into an observation.
    if (declared || !flow.is_continue()) && (!O::SILENT || observer.traced()) {
        observer.observe(&Observation::Hook {
            event: flow_kind(flow),
            hook,
            decision: flow.decision(),
        });
    }
}

/// The event of a flow.
#[inline(always)]
fn flow_kind<E: Event>(_: &Flow<E>) -> crate::event::EventKind {
    E::KIND
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
    #[inline(always)]
    fn breach(message: &AssistantMessage) -> Option<&'static str> {
        // Most messages call one tool or none, and cannot break the rule: checked in place.
        let some_pair = message.tool_calls().nth(1).is_some();
        (some_pair && message.duplicate_call_id().is_some())
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

/// The composed hooks of an agent, as its builder grew them: a chain for the sequential events,
/// an onion for each wrap event, and what its final answers are made into.
#[derive(Clone, Debug, Default)]
pub struct Hooks<C = ((), ()), M = (), T = (), F = Text> {
    chain: C,
    model: M,
    tool: T,
    answering: F,
}

impl<C, M, T> Hooks<C, M, T, Text> {
    /// The same hooks, the final answer a value of `O` (`AgentBuilder::output`).
    pub(crate) fn typed<O: schemars::JsonSchema>(self) -> Hooks<C, M, T, Typed<O>> {
        Hooks { chain: self.chain, model: self.model, tool: self.tool, answering: Typed::new() }
    }
}

impl<C, M, T, O> Hooks<C, M, T, Typed<O>> {
    /// The same hooks, one validator more for the answer.
    pub(crate) fn validate(mut self, validator: Validator<O>) -> Self {
        self.answering = self.answering.validate(validator);
        self
    }
}

/// What the agent loop runs: the chain for the sequential events, and the two onions.
/// Implemented by [`Hooks`] only.
pub trait Pipeline: sealed::Sealed + Send + Sync {
    /// The chain of every event but the two wraps.
    type Chain: Chain;

    /// Where a running tool call's result is kept while `wrap_tool` hooks hold it: nowhere
    /// when the onion has no layer.
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

    /// What the agent's final answers are made into.
    type Answering: Answering;

    /// What the agent's final answers are made into.
    fn answering(&self) -> &Self::Answering;

    /// The `wrap_tool` onion around `tool`, as [`model_onion`](Pipeline::model_onion).
    fn tool_onion<'a, O: Observer>(
        &'a self,
        turn: &'a Turn,
        observer: &'a O,
        tool: impl NextTool + 'a,
    ) -> impl NextTool + 'a;
}

impl<C, M, T, F> sealed::Sealed for Hooks<C, M, T, F> {}

impl<C: Chain, M: ModelWraps, T: ToolWraps, F: Answering> Pipeline for Hooks<C, M, T, F> {
    type Chain = C;
    type Kept = T::Kept;
    type Answering = F;

    fn chain(&self) -> &C {
        &self.chain
    }

    #[inline(always)]
    fn answering(&self) -> &F {
        &self.answering
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
