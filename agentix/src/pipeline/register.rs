//! Registration: where each kind of hook goes in the pipeline.

use super::answer::{Answering, AnyAnswer};
use super::chain::{Chain, Lifecycle, Single};
use super::grow::{Push, PushParallel};
use super::tripwire::Wire;
use super::{Hooks, Pipeline};
use crate::hook::{Hook, Membership, ModelWraps, ToolWraps, Wraps};
use crate::{event, on};
use std::marker::PhantomData;

/// Marks the registration of a [`Hook`]: into the chain and, as one layer, each onion whose wrap
/// method it defines.
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
    message = "not an agent's hook: put `#[hook(EVENT)]` on the async fn, as in `#[hook(after_model)]`; a session event's hook goes on the session",
    label = "not a hook",
    note = "a type is a hook when it implements `agentix::Hook` or one trait of `agentix::on`; a session's hooks: `Session::builder(agent).hook(...)`"
)]
pub trait Register<Role, P> {
    /// The grown pipeline.
    type Output: Pipeline;

    /// The tool the hook needs the agent to have: a per-tool hook's; `()` for the others.
    type Tool;

    /// What the hook reads of the answer: a typed `before_final` hook reads
    /// [`Typed<O>`](super::Typed), which the agent must answer with; the others [`AnyAnswer`].
    type Reads;

    /// Adds the hook after every hook of `pipeline`.
    fn register(self, pipeline: P) -> Self::Output;
}

impl<H, C, M, T, F: Answering> Register<AllEvents, Hooks<C, M, T, F>> for H
where
    H: Hook,
    C: Push<Lifecycle<H>>,
    M: ModelWraps,
    T: ToolWraps,
{
    type Output = Hooks<
        C::Output,
        <H::WrapsModel as Membership>::Model<M, Lifecycle<H>>,
        <H::WrapsTool as Membership>::Tool<T, Lifecycle<H>>,
        F,
    >;
    type Tool = ();
    type Reads = AnyAnswer;

    fn register(self, hooks: Hooks<C, M, T, F>) -> Self::Output {
        let hook = Lifecycle::new(self);
        Hooks {
            chain: hooks.chain.push(hook.clone()),
            model: <H::WrapsModel as Membership>::model(hooks.model, hook.clone()),
            tool: <H::WrapsTool as Membership>::tool(hooks.tool, hook),
            answering: hooks.answering,
        }
    }
}

impl<F, H, Role, P> Register<Factory<Role>, P> for F
where
    F: FnOnce() -> H,
    H: Register<Role, P>,
{
    type Output = H::Output;
    type Tool = H::Tool;
    type Reads = H::Reads;

    fn register(self, pipeline: P) -> Self::Output {
        self().register(pipeline)
    }
}

impl<H, C, M, T, F: Answering> Register<Parallel, Hooks<C, M, T, F>> for H
where
    H: on::ParallelPre,
    C: PushParallel<H>,
    M: ModelWraps,
    T: ToolWraps,
{
    type Output = Hooks<C::Output, M, T, F>;
    type Tool = ();
    type Reads = AnyAnswer;

    fn register(self, hooks: Hooks<C, M, T, F>) -> Self::Output {
        Hooks {
            chain: hooks.chain.push_parallel(self),
            model: hooks.model,
            tool: hooks.tool,
            answering: hooks.answering,
        }
    }
}

/// A `tripwire` hook is a node of its own in the chain: run beside the model call, not in
/// the chain's order.
impl<H, C, M, T, F: Answering> Register<event::Tripwire, Hooks<C, M, T, F>> for H
where
    H: on::Tripwire,
    C: Push<Wire<H>>,
    M: ModelWraps,
    T: ToolWraps,
{
    type Output = Hooks<C::Output, M, T, F>;
    type Tool = ();
    type Reads = AnyAnswer;

    fn register(self, hooks: Hooks<C, M, T, F>) -> Self::Output {
        let chain = hooks.chain.push(Wire::new(self));
        Hooks { chain, model: hooks.model, tool: hooks.tool, answering: hooks.answering }
    }
}

macro_rules! register_single_event {
    ($($event:ident),*) => {$(
        impl<H, C, M, T, F: Answering> Register<event::$event, Hooks<C, M, T, F>> for H
        where
            H: on::$event,
            C: Push<Single<H, event::$event>>,
            M: ModelWraps,
            T: ToolWraps,
        {
            type Output = Hooks<C::Output, M, T, F>;
            type Tool = ();
            type Reads = AnyAnswer;

            fn register(self, hooks: Hooks<C, M, T, F>) -> Self::Output {
                let name = on::$event::name(&self);
                Hooks { chain: hooks.chain.push(Single(self, PhantomData, name)), model: hooks.model, tool: hooks.tool, answering: hooks.answering }
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

impl<H, C, M, T, F: Answering> Register<event::WrapModel, Hooks<C, M, T, F>> for H
where
    H: on::WrapModel,
    C: Chain,
    M: ModelWraps,
    T: ToolWraps,
{
    type Output = Hooks<C, Wraps<M, Single<H, event::WrapModel>>, T, F>;
    type Tool = ();
    type Reads = AnyAnswer;

    fn register(self, hooks: Hooks<C, M, T, F>) -> Self::Output {
        let name = on::WrapModel::name(&self);
        let layer = Single(self, PhantomData, name);
        let model = Wraps { rest: hooks.model, layer };
        Hooks { chain: hooks.chain, model, tool: hooks.tool, answering: hooks.answering }
    }
}

impl<H, C, M, T, F: Answering> Register<event::WrapTool, Hooks<C, M, T, F>> for H
where
    H: on::WrapTool,
    C: Chain,
    M: ModelWraps,
    T: ToolWraps,
{
    type Output = Hooks<C, M, Wraps<T, Single<H, event::WrapTool>>, F>;
    type Tool = ();
    type Reads = AnyAnswer;

    fn register(self, hooks: Hooks<C, M, T, F>) -> Self::Output {
        let name = on::WrapTool::name(&self);
        let layer = Single(self, PhantomData, name);
        let tool = Wraps { rest: hooks.tool, layer };
        Hooks { chain: hooks.chain, model: hooks.model, tool, answering: hooks.answering }
    }
}

/// Marks the registration of a stand-in: what `#[hook]` leaves for a function whose attribute
/// has an error. The error is reported at the attribute; registering the stand-in adds nothing
/// (the crate does not compile anyway), so no second error says it is not a hook.
#[derive(Debug)]
pub enum AsStandIn {}

impl<H: crate::__private::StandIn, P: Pipeline> Register<AsStandIn, P> for H {
    type Output = P;
    type Tool = ();
    type Reads = AnyAnswer;

    fn register(self, pipeline: P) -> P {
        pipeline
    }
}
