//! Per-tool hooks: a hook of [`on::BeforeToolOf`] joins the chain as a `before_tool` hook that
//! only its tool's calls reach, and an agent takes it only if it has the tool.

use super::*;
use crate::tool::{Arguments, Tool, Toolbox};

/// A per-tool `before_tool` hook in the chain: it reads the call's arguments as the tool's own
/// type, lends them to the hook, and writes an edit back into the call.
#[derive(Debug)]
pub struct PerTool<H>(pub(super) H);

impl<H: on::BeforeToolOf> on::BeforeTool for PerTool<H> {
    const TOOL: Option<TypeId> = Some(TypeId::of::<H::Tool>());
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
        let verdict = self.0.before_tool(&mut args, turn).await;
        if H::EDITS {
            match serde_json::to_value(&args) {
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

impl<H, C, M, T> Register<ForTool<event::BeforeTool, H::Tool>, Hooks<C, M, T>> for H
where
    H: on::BeforeToolOf,
    C: Push<Single<PerTool<H>, event::BeforeTool>>,
    M: ModelWraps,
    T: ToolWraps,
{
    type Output = Hooks<C::Output, M, T>;
    type Tool = H::Tool;

    fn register(self, hooks: Hooks<C, M, T>) -> Self::Output {
        let hook = Single(PerTool(self), PhantomData);
        Hooks { chain: hooks.chain.push(hook), model: hooks.model, tool: hooks.tool }
    }
}
