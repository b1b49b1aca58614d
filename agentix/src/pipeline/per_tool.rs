//! Per-tool hooks: a hook of [`on::BeforeToolOf`] joins the chain as a `before_tool` hook that
//! only its tool's calls reach; one of [`on::AfterToolOf`] or [`on::ToolErrorOf`] as a node the
//! tool set runs inside the call, on the tool's own output or error. An agent takes a per-tool
//! hook only if it has the tool.

use super::answer::{Answering, AnyAnswer};
use super::chain::{Chain, Single};
use super::chain::{report_panic, skipped};
use super::grow::Push;
use super::register::Register;
use super::{Flow, Hooks, report};
use crate::error::HookFailure;
use crate::event::{BeforeTool, Event};
use crate::hook::{ModelWraps, ToolWraps};
use crate::message::ToolCall;
use crate::observe::{Decision, Observation, Observer};
use crate::support::caught;
use crate::tool::Tool;
use crate::tool::{Arguments, ToolId, Toolbox};
use crate::turn::{Culprit, Turn};
use crate::verdict::{Halt, Verdict};
use crate::{event, on};
use std::any::{Any, TypeId};
use std::future::Future;
use std::marker::PhantomData;
use std::time::Duration;

/// A per-tool `before_tool` hook in the chain: it reads the call's arguments as the tool's own
/// type, lends them to the hook, and writes an edit back into the call.
#[derive(Debug)]
pub struct PerTool<H>(pub(super) H);

impl<H: on::BeforeToolOf> on::BeforeTool for PerTool<H> {
    const TOOL: Option<ToolId> = Some(ToolId::of::<H::Tool>());
    const TIMEOUT: Option<Duration> = H::TIMEOUT;
    const CONDITIONAL: bool = H::CONDITIONAL;

    fn applies(&self, call: &ToolCall, turn: &Turn) -> bool {
        // Arguments that do not fit are passed by in `before_tool`, not reported skipped.
        <<H::Tool as Tool>::Args>::from_json(&call.arguments)
            .map_or(true, |args| self.0.applies(&args, turn))
    }

    fn name(&self) -> &'static str {
        self.0.name()
    }

    async fn before_tool(&self, call: &mut ToolCall, turn: &mut Turn) -> Verdict<BeforeTool> {
        // Arguments that do not fit the tool's type: the tool refuses them and says why.
        let Ok(mut args) = <<H::Tool as Tool>::Args>::from_json(&call.arguments) else {
            return Verdict::Continue;
        };
        // Written back only if the hook edited them: the log keeps the model's own JSON
        // otherwise (a field left out where the type reads `None`, say).
        let before = H::EDITS.then(|| serde_json::to_value(&args).ok()).flatten();
        let verdict = self.0.before_tool(&mut args, turn).await;
        if H::EDITS {
            match serde_json::to_value(&args) {
                Ok(arguments) if before.as_ref() == Some(&arguments) => {}
                Ok(arguments) => call.arguments = arguments,
                Err(error) => {
                    return Verdict::Halt(Halt::failure(format!(
                        "the edited arguments of `{}` did not serialize: {error}",
                        <H::Tool as Tool>::NAME
                    )));
                }
            }
        }
        verdict
    }
}

/// A per-tool `after_tool` hook in the chain, with its name: the tool set runs it on its
/// tool's output.
#[derive(Debug)]
pub struct OutputOf<H>(pub(super) H, &'static str);

/// A per-tool `tool_error` hook in the chain, with its name: the tool set runs it on its
/// tool's error.
#[derive(Debug)]
pub struct ErrorOf<H>(pub(super) H, &'static str);

impl<H: on::AfterToolOf> Chain for OutputOf<H> {
    const OUTPUT_HOOKS: bool = true;

    async fn after_tool_of<T: Tool + 'static, O: Observer>(
        &self,
        output: &mut T::Output,
        turn: &Turn,
        observer: &O,
    ) {
        // Another tool's call: settled at compile time, as the types are. (Its output may be
        // of the same type: the tool decides, not the output.)
        if TypeId::of::<T>() != TypeId::of::<H::Tool>() {
            return;
        }
        let Some(output) = (output as &mut dyn Any).downcast_mut::<<H::Tool as Tool>::Output>()
        else {
            unreachable!("the tool is `H::Tool`, so is its output's type");
        };
        let hook = self.1;
        let skip = H::CONDITIONAL && !self.0.applies(output, turn);
        in_call(hook, skip, H::TIMEOUT, || self.0.after_tool(output, turn), turn, observer).await;
    }
}

impl<H: on::ToolErrorOf> Chain for ErrorOf<H> {
    const OUTPUT_HOOKS: bool = true;

    async fn tool_error_of<T: Tool + 'static, O: Observer>(
        &self,
        error: &mut T::Error,
        turn: &Turn,
        observer: &O,
    ) {
        if TypeId::of::<T>() != TypeId::of::<H::Tool>() {
            return;
        }
        let Some(error) = (error as &mut dyn Any).downcast_mut::<<H::Tool as Tool>::Error>() else {
            unreachable!("the tool is `H::Tool`, so is its error's type");
        };
        let hook = self.1;
        let skip = H::CONDITIONAL && !self.0.applies(error, turn);
        in_call(hook, skip, H::TIMEOUT, || self.0.tool_error(error, turn), turn, observer).await;
    }
}

/// Runs a per-tool hook inside a tool call, where the turn is shared: its decision is reported,
/// and a halt, a panic or a timeout ends the call and the turn, naming the hook.
async fn in_call<E: Event, F: Future<Output = Verdict<E>>>(
    hook: &'static str,
    skip: bool,
    timeout: Option<Duration>,
    start: impl FnOnce() -> F,
    turn: &Turn,
    observer: &impl Observer,
) {
    if skip {
        let _ = skipped::<E>(observer, E::KIND, hook);
        return;
    }
    let failure = match bounded!(timeout, caught(start)) {
        Ok(Ok(verdict)) => {
            let flow = Flow::decided(hook, verdict);
            report(observer, hook, true, &flow);
            if let Flow::Halt { halt, .. } = flow {
                turn.halt_in_call(E::KIND, hook, halt);
            }
            return;
        }
        Ok(Err(payload)) => {
            let message = report_panic(observer, E::KIND, hook, payload.as_ref());
            HookFailure::Panicked { message }
        }
        Err(after) => {
            let decision = Decision::TimedOut { after };
            observer.observe(&Observation::Hook { event: E::KIND, hook, decision });
            HookFailure::TimedOut { after }
        }
    };
    turn.abort(Culprit::Hook { event: E::KIND, hook }, failure);
}

/// Marks the registration of a per-tool hook at event `E`, on tool `T`.
#[derive(Debug)]
pub struct ForTool<E, T>(PhantomData<fn() -> (E, T)>);

/// A tool set that holds tool `T`; `Index` is where, found by inference.
#[diagnostic::on_unimplemented(
    message = "the agent has no tool `{T}` for the hook that names it",
    label = "this hook runs on `{T}`'s calls, and the agent has no such tool",
    note = "add the tool with `.tool({T})` before `.hook(...)`: a per-tool hook is checked where it is registered"
)]
pub trait HasTool<T, Index> {}

/// The tool is the set's last.
#[derive(Debug)]
pub enum Here {}

/// The tool is among the rest, at `I`.
#[derive(Debug)]
pub struct There<I>(PhantomData<I>);

#[diagnostic::do_not_recommend]
impl<Rest, T: Tool> HasTool<T, Here> for Toolbox<Rest, T> {}

#[diagnostic::do_not_recommend]
impl<Rest: HasTool<T, I>, U, T: Tool, I> HasTool<T, There<I>> for Toolbox<Rest, U> {}

/// Any tool set has what a hook that needs no tool (`()`, not a tool) needs.
impl<T> HasTool<(), ()> for T {}

impl<H, C, M, T, F: Answering> Register<ForTool<event::BeforeTool, H::Tool>, Hooks<C, M, T, F>>
    for H
where
    H: on::BeforeToolOf,
    C: Push<Single<PerTool<H>, event::BeforeTool>>,
    M: ModelWraps,
    T: ToolWraps,
{
    type Output = Hooks<C::Output, M, T, F>;
    type Tool = H::Tool;
    type Reads = AnyAnswer;

    fn register(self, hooks: Hooks<C, M, T, F>) -> Self::Output {
        let name = self.name();
        let hook = Single(PerTool(self), PhantomData, name);
        Hooks {
            chain: hooks.chain.push(hook),
            model: hooks.model,
            tool: hooks.tool,
            answering: hooks.answering,
        }
    }
}

macro_rules! register_per_tool_result {
    ($($trait:ident => $node:ident at $event:ident),*) => {$(
        impl<H, C, M, T, F: Answering> Register<ForTool<event::$event, H::Tool>, Hooks<C, M, T, F>> for H
        where
            H: on::$trait,
            C: Push<$node<H>>,
            M: ModelWraps,
            T: ToolWraps,
        {
            type Output = Hooks<C::Output, M, T, F>;
            type Tool = H::Tool;
            type Reads = AnyAnswer;

            fn register(self, hooks: Hooks<C, M, T, F>) -> Self::Output {
                let name = self.name();
                let node = $node(self, name);
                Hooks { chain: hooks.chain.push(node), model: hooks.model, tool: hooks.tool, answering: hooks.answering }
            }
        }
    )*};
}

register_per_tool_result!(AfterToolOf => OutputOf at AfterTool, ToolErrorOf => ErrorOf at ToolError);
