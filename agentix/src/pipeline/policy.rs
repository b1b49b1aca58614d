//! Policies: hooks declared once and applied to every agent built under them — a parent and
//! its sub-agents — so a guard on `before_tool` fires on every agent's tool calls. An agent
//! built under a policy carries it in its type (its chain's first node, [`Policed`]), so a
//! parent that runs under one can demand it of the agents it delegates to, at compile time
//! ([`Within`]).

use super::answer::{ReadFrom, Text};
use super::chain::Chain;
use super::register::Register;
use super::tripwire::{SkippedWires, Tripped};
use super::{Flow, Hooks, Pipeline};
use crate::Outcome;
use crate::event::{
    AfterModel, AfterTool, BeforeFinal, BeforeModel, BeforeTool, EventSet, Post, Pre, ToolError,
};
use crate::hook::{ModelWraps, ToolWraps};
use crate::message::{AssistantMessage, ToolCall, ToolResult};
use crate::model::ModelRequest;
use crate::observe::Observer;
use crate::tool::Tool;
use crate::turn::Turn;
use std::future::Future;
use std::marker::PhantomData;

/// Hooks declared once, for every agent built under them
/// ([`AgentBuilder::policy`](crate::AgentBuilder::policy)): each such agent runs them before
/// its own hooks, and its wrap hooks inside the policy's. Its hooks are cloned into each agent:
/// `#[hook]` functions cost nothing to clone; a [`Hook`](crate::Hook) struct shares its state through the
/// `Arc` the pipeline keeps it in; a hand-written [`on`](crate::on) hook is cloned, state and all.
/// Policies are told apart by type: two policies of the same hooks are one to
/// [`AgentBuilder::sub_agent`](crate::AgentBuilder::sub_agent)'s check.
///
/// ```
/// use agentix::event::BeforeTool;
/// use agentix::prelude::*;
/// use agentix::pipeline::Policy;
///
/// #[hook(before_tool)]
/// async fn no_deletes(call: &ToolCall) -> Verdict<BeforeTool> {
///     if call.name.starts_with("delete") { Verdict::reject("nothing is deleted") } else { Verdict::Continue }
/// }
///
/// let policy = Policy::new().hook(no_deletes);
/// let researcher = Agent::builder(ScriptedModel::new()).policy(&policy).build();
/// ```
#[derive(Clone, Debug, Default)]
pub struct Policy<P = Hooks> {
    hooks: P,
}

impl Policy {
    /// A policy with no hooks yet.
    pub fn new() -> Self {
        Policy::default()
    }
}

impl<C, M, T> Policy<Hooks<C, M, T, Text>> {
    /// Adds a hook after those already added, as [`AgentBuilder::hook`] does. A policy has no
    /// tools and no output type: its hooks are ones any agent takes — a hook on every call
    /// (or on tools named by a glob, `tools = "..."`), not a per-tool one; a `before_final`
    /// hook on the message, not on a typed answer.
    ///
    /// [`AgentBuilder::hook`]: crate::AgentBuilder::hook
    // The bounds beside the name: an error's note quotes one line.
    #[rustfmt::skip]
    pub fn hook<H: Register<Event, Hooks<C, M, T, Text>, Reads: ReadFrom<Text>>, Event>(self, hook: H) -> Policy<H::Output> where NeedsTool<H::Tool>: PolicyHook {
        Policy { hooks: hook.register(self.hooks) }
    }
}

impl<C: Chain + Clone, M: ModelWraps + Clone, T: ToolWraps + Clone> Policy<Hooks<C, M, T, Text>> {
    /// The pipeline an agent built under the policy starts from: the policy's chain as the
    /// first node of its own, and the policy's onions.
    pub(crate) fn start(&self) -> StartsUnder<C, M, T> {
        let hooks = &self.hooks;
        Hooks {
            chain: ((Policed(hooks.chain.clone(), PhantomData),), ()),
            model: hooks.model.clone(),
            tool: hooks.tool.clone(),
            answering: Text,
        }
    }
}

/// The pipeline of an agent built under the policy whose pipeline is `Hooks<C, M, T>`, before
/// its own hooks: the policy's chain as its chain's first node, and the policy's onions.
pub type StartsUnder<C, M, T> = Hooks<((Policed<Hooks<C, M, T, Text>>,), ()), M, T, Text>;

/// What a policy's hook needs of the agent's tools: nothing. A per-tool hook needs its tool,
/// and a policy has none.
#[diagnostic::on_unimplemented(
    message = "a policy cannot hold a per-tool hook: it has no tools",
    label = "this hook runs on one tool's calls",
    note = "add the hook to the agents that have the tool, or make it a hook on every call (drop `tool = ...`, or name the tools by a glob: `tools = \"...\"`)"
)]
pub trait PolicyHook {}

/// The tool a hook needs, as [`PolicyHook`] asks of it: wrapped, so that an error names the
/// tool in one line rather than quoting where the tool is defined.
#[derive(Debug)]
pub struct NeedsTool<T>(PhantomData<fn() -> T>);

/// Generic, with what it needs behind it: the tool's type is not inferred from the one impl
/// that holds (the error would then be a type mismatch, not this trait's message).
#[diagnostic::do_not_recommend]
impl<T: NoTool> PolicyHook for NeedsTool<T> {}

/// What a hook that needs no tool names as its tool: `()`.
#[doc(hidden)]
pub trait NoTool {}

impl NoTool for () {}

/// A policy's chain, the first node of every agent's chain built under it: it runs the
/// policy's hooks, as a chain of its own. Its type names the policy's whole pipeline — chain and
/// onions — so an agent's type says which policy it runs under ([`Governs`]).
pub struct Policed<P: Pipeline>(P::Chain, PhantomData<fn() -> P>);

impl<P: Pipeline> std::fmt::Debug for Policed<P>
where
    P::Chain: std::fmt::Debug,
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Policed").field(&self.0).finish()
    }
}

impl<P: Pipeline> Clone for Policed<P>
where
    P::Chain: Clone,
{
    fn clone(&self) -> Self {
        Policed(self.0.clone(), PhantomData)
    }
}

macro_rules! policed_chain {
    ($($method:ident / $in_place:ident: $event:ident ($($arg:ident: $ty:ty)?);)*) => {
        impl<P: Pipeline> Chain for Policed<P> {
            const EVENTS: EventSet = <P::Chain as Chain>::EVENTS;
            const IN_PLACE_EVENTS: EventSet = <P::Chain as Chain>::IN_PLACE_EVENTS;
            const PER_TOOL: bool = <P::Chain as Chain>::PER_TOOL;
            const OUTPUT_HOOKS: bool = <P::Chain as Chain>::OUTPUT_HOOKS;

            fn after_tool_of<T: Tool + 'static, O: Observer>(
                &self,
                output: &mut T::Output,
                turn: &Turn,
                observer: &O,
            ) -> impl Future<Output = ()> + Send {
                self.0.after_tool_of::<T, O>(output, turn, observer)
            }

            fn tool_error_of<T: Tool + 'static, O: Observer>(
                &self,
                error: &mut T::Error,
                turn: &Turn,
                observer: &O,
            ) -> impl Future<Output = ()> + Send {
                self.0.tool_error_of::<T, O>(error, turn, observer)
            }

            fn tripwire<O: Observer>(
                &self,
                request: &ModelRequest,
                turn: &Turn,
                observer: &O,
                skipped: &SkippedWires,
            ) -> impl Future<Output = Result<(), Tripped>> + Send {
                self.0.tripwire(request, turn, observer, skipped)
            }

            $(
                #[inline(always)]
                fn $method<O: Observer>(
                    &self,
                    $($arg: $ty,)?
                    turn: &mut Turn,
                    observer: &O,
                ) -> impl Future<Output = Flow<$event>> + Send {
                    self.0.$method($($arg,)? turn, observer)
                }

                #[inline(always)]
                fn $in_place<O: Observer>(&self, $($arg: $ty,)? turn: &mut Turn, observer: &O) -> Flow<$event> {
                    self.0.$in_place($($arg,)? turn, observer)
                }
            )*
        }
    };
}

chain_events!(policed_chain);

/// The policy a chain runs under: [`Under<P>`] for an agent built
/// under the policy whose pipeline is `P`, [`Ungoverned`] for one built without.
pub trait Governs {
    /// [`Under<P>`] or [`Ungoverned`].
    type Policy;
}

/// Runs under the policy whose pipeline is `P`.
#[derive(Debug)]
pub struct Under<P>(PhantomData<fn() -> P>);

/// Runs under no policy.
#[derive(Debug)]
pub enum Ungoverned {}

impl<Full: FirstChunk, Current> Governs for (Full, Current) {
    type Policy = Full::Policy;
}

/// The chain's full chunks, whose first is a policy's chain if the agent has one.
pub trait FirstChunk {
    /// The policy the first chunk says the agent runs under.
    type Policy;
}

/// What a chain's first full chunk says of the policy: a policy's chain says which; a chunk of
/// the agent's own hooks (sixteen of them), none.
pub trait ChunkPolicy {
    /// [`Under<P>`] or [`Ungoverned`].
    type Policy;
}

impl<P: Pipeline> ChunkPolicy for Policed<P> {
    type Policy = Under<P>;
}

impl<X0, X1, X2, X3, X4, X5, X6, X7, X8, X9, X10, X11, X12, X13, X14, X15> ChunkPolicy
    for (X0, X1, X2, X3, X4, X5, X6, X7, X8, X9, X10, X11, X12, X13, X14, X15)
{
    type Policy = Ungoverned;
}

impl FirstChunk for () {
    type Policy = Ungoverned;
}

macro_rules! first_chunk {
    ($($chunk:ident $index:tt)*) => {
        impl<First: ChunkPolicy, $($chunk),*> FirstChunk for (First, $($chunk,)*) {
            type Policy = First::Policy;
        }
    };
}

prefixes!(first_chunk [] X1 1 X2 2 X3 3 X4 4 X5 5 X6 6 X7 7 X8 8 X9 9 X10 10 X11 11 X12 12 X13 13 X14 14 X15 15);

/// A sub-agent's policy, as its parent demands: any, of a parent under no policy; the parent's
/// own, of a parent under one.
#[diagnostic::on_unimplemented(
    message = "this agent does not run under the policy of the agent that delegates to it",
    label = "the parent runs under a policy, and this agent was built without it (or under another)",
    note = "a sub-agent, or an agent a turn is handed to, runs under its parent's policy: build it with `Agent::builder(model).policy(&policy)` first; its own tools and hooks come after"
)]
pub trait Within<Parent> {}

/// One impl for every pair, which holds when the parent admits the child: an error then finds
/// no impl "for another policy" to list beside its own message, nor the impls behind it.
#[diagnostic::do_not_recommend]
impl<Child, Parent: Admits<Child>> Within<Parent> for Child {}

/// Whether a parent's policy admits a child's: any, under no policy; its own, under one.
#[doc(hidden)]
pub trait Admits<Child> {}

impl<Child> Admits<Child> for Ungoverned {}

impl<P> Admits<Under<P>> for Under<P> {}
