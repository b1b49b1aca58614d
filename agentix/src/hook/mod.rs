//! The hook traits: what `#[hook]` implements, and what a struct may implement by hand.

mod onion;

pub use onion::{
    Keep, MaySkip, ModelLayer, ModelWraps, NeverSkipped, Skip, ToolLayer, ToolWraps, Unreachable,
    Wraps,
};

use std::future::{Future, ready};
use std::time::Duration;

use crate::Outcome;
use crate::event::{
    AfterModel, AfterTool, BeforeFinal, BeforeModel, BeforeTool, EventSet, Post, Pre, ToolError,
};
use crate::message::{AssistantMessage, ToolCall, ToolResult};
use crate::model::{ModelError, ModelRequest, ModelResponse};
use crate::turn::Turn;
use crate::verdict::Verdict;

/// The hidden `_in_place` twins of [`Hook`]'s methods, which `#[hook]` writes for a method
/// whose body never awaits; called only for the events in [`HookMethods::IN_PLACE`].
macro_rules! in_place_methods {
    ($($method:ident($($arg:ident: $ty:ty)?) $(-> $event:ident)?,)*) => {$(
        #[doc(hidden)]
        fn $method(&self, $($arg: $ty,)? turn: &mut Turn) -> in_place_methods!(@verdict $($event)?) {
            let _ = ($($arg,)? turn);
            unreachable!(concat!("`", stringify!($method), "` is called only for `IN_PLACE` events"))
        }
    )*};
    (@verdict) => { Verdict<Pre> };
    (@verdict $event:ident) => { Verdict<$event> };
}

/// What `#[hook]` on an `impl Hook` block says of the impl: which events' methods it defines
/// (the pipeline calls only those: the others would continue), which of them never await (their
/// bodies are the `_in_place` twins, called with no future), and whether it is a layer of each
/// wrap onion. Implemented by `#[hook]` only.
#[diagnostic::on_unimplemented(
    message = "`{Self}` implements `Hook` without `#[hook]` on the impl",
    label = "`impl Hook for {Self}` needs `#[hook]` above it",
    note = "`#[hook]` on the `impl Hook` block tells the pipeline which methods the impl defines, so that the others cost nothing"
)]
#[doc(hidden)]
pub trait HookMethods {
    /// The events whose methods the impl defines.
    const RUNS: EventSet;
    /// The events whose methods never await: the pipeline calls their `_in_place` twins.
    const IN_PLACE: EventSet;
    /// The events whose methods may change the event's value: all but those whose value
    /// parameter is `_`. The chain checks the value against the event's contract after these
    /// only.
    const EDITS: EventSet = EventSet::ALL;
    /// The events whose methods may change the turn (inject): all but those whose turn
    /// parameter is `_`. The chain marks the hook as the one the turn is lent to before these
    /// only.
    const TURNS: EventSet = EventSet::ALL;
    /// [`Joins`] when the impl defines `wrap_model`, else [`PassesBy`].
    type WrapsModel: Membership;
    /// [`Joins`] when the impl defines `wrap_tool`, else [`PassesBy`].
    type WrapsTool: Membership;

    in_place_methods! {
        pre_in_place(),
        before_model_in_place(request: &mut ModelRequest) -> BeforeModel,
        after_model_in_place(message: &mut AssistantMessage) -> AfterModel,
        before_tool_in_place(call: &mut ToolCall) -> BeforeTool,
        after_tool_in_place(result: &mut ToolResult) -> AfterTool,
        tool_error_in_place(result: &mut ToolResult) -> ToolError,
        before_final_in_place(message: &mut AssistantMessage) -> BeforeFinal,
        post_in_place(outcome: &Outcome) -> Post,
    }
}

/// Whether a [`Hook`] struct is a layer of a wrap onion: [`Joins`] or [`PassesBy`]; the onion
/// it grows into. Its bounds are declared here, so that `H: Hook` alone says everything the
/// pipeline needs to add `H`: a generic function registers a hook with no more bounds.
#[doc(hidden)]
pub trait Membership: 'static {
    /// The `wrap_model` onion `Rest` with, or without, `L`.
    type Model<Rest: ModelWraps, L: ModelLayer>: ModelWraps;
    /// The `wrap_tool` onion `Rest` with, or without, `L`.
    type Tool<Rest: ToolWraps, L: ToolLayer>: ToolWraps;
    /// Grows the `wrap_model` onion, or not.
    fn model<Rest: ModelWraps, L: ModelLayer>(rest: Rest, layer: L) -> Self::Model<Rest, L>;
    /// Grows the `wrap_tool` onion, or not.
    fn tool<Rest: ToolWraps, L: ToolLayer>(rest: Rest, layer: L) -> Self::Tool<Rest, L>;
}

/// The struct defines the wrap method: it is a layer of the onion.
#[doc(hidden)]
#[derive(Debug)]
pub enum Joins {}

/// The struct does not define the wrap method: the onion has no layer for it.
#[doc(hidden)]
#[derive(Debug)]
pub enum PassesBy {}

impl Membership for Joins {
    type Model<Rest: ModelWraps, L: ModelLayer> = Wraps<Rest, L>;
    type Tool<Rest: ToolWraps, L: ToolLayer> = Wraps<Rest, L>;

    fn model<Rest: ModelWraps, L: ModelLayer>(rest: Rest, layer: L) -> Wraps<Rest, L> {
        Wraps { rest, layer }
    }

    fn tool<Rest: ToolWraps, L: ToolLayer>(rest: Rest, layer: L) -> Wraps<Rest, L> {
        Wraps { rest, layer }
    }
}

impl Membership for PassesBy {
    type Model<Rest: ModelWraps, L: ModelLayer> = Rest;
    type Tool<Rest: ToolWraps, L: ToolLayer> = Rest;

    fn model<Rest: ModelWraps, L: ModelLayer>(rest: Rest, _layer: L) -> Rest {
        rest
    }

    fn tool<Rest: ToolWraps, L: ToolLayer>(rest: Rest, _layer: L) -> Rest {
        rest
    }
}

/// A hook on any of the turn's events but `tripwire`, one method per event: one struct that
/// hooks several events and keeps its state between them. (A tripwire runs beside the
/// model call, not in the chain's order: it is a hook of its own, [`on::Tripwire`](crate::on::Tripwire).)
///
/// Every method has a default that continues (or, for the wrap events, calls `next` once), so
/// an implementation overrides just the events it cares about. The impl is marked `#[hook]`,
/// which reads the methods it defines: the pipeline calls only those (the others would
/// continue), runs one whose body never awaits in place, with no future, as it runs a `#[hook]`
/// function, and makes the struct a layer of the `wrap_model` or `wrap_tool` onion only if it
/// defines that method. [`EVENTS`](Hook::EVENTS), unless written, is the events it defines; it
/// says where traces report the hook's "continue". Without `#[hook]`, the impl does not compile,
/// and the error says to add it. A hook on a single event is usually a `#[hook]` function, which
/// implements the matching trait of [`on`](crate::on) instead.
///
/// Each method gets the event's value (`&mut`: edit it in place) and the turn (`&mut`: its scope
/// and [`inject`](Turn::inject) are the effects), and returns a [`Verdict`] whose type is the
/// event's contract.
///
/// ```
/// use agentix::event::{AfterModel, BeforeTool};
/// use agentix::{AssistantMessage, Hook, ToolCall, Turn, Verdict, hook};
///
/// /// One struct, two events.
/// struct Guard;
///
/// #[hook]
/// impl Hook for Guard {
///     fn name(&self) -> &'static str {
///         "guard"
///     }
///
///     async fn after_model(&self, message: &mut AssistantMessage, _turn: &mut Turn) -> Verdict<AfterModel> {
///         if message.joined_text().contains("<plan>") || message.calls_tools() {
///             Verdict::Continue
///         } else {
///             Verdict::retry("Start with a <plan> block.")
///         }
///     }
///
///     async fn before_tool(&self, call: &mut ToolCall, _turn: &mut Turn) -> Verdict<BeforeTool> {
///         if call.name == "delete_everything" {
///             Verdict::reject("not allowed")
///         } else {
///             Verdict::Continue
///         }
///     }
/// }
/// ```
pub trait Hook: Send + Sync + HookMethods {
    /// The events this hook handles, where traces report it even when it continues. Every other
    /// decision is reported wherever it happens, and every method runs whatever this says.
    const EVENTS: EventSet = EventSet::ALL;

    /// How long one call of any of the hook's methods may take; past it, the hook failed at
    /// that event, and the event's failure policy answers. `None`: no limit, and no timer. A
    /// timeout needs a tokio runtime with its time driver.
    const TIMEOUT: Option<Duration> = None;

    /// Whether what the hook injects at `pre` and `post` is durable: appended to the
    /// conversation's log, where later turns see it, rather than transient.
    const DURABLE: bool = false;

    /// The hook's name in errors, the log and traces. Defaults to the type's name. Asked once,
    /// when the hook is added to an agent: the same for every call.
    fn name(&self) -> &'static str {
        short_type_name::<Self>()
    }

    /// `pre`: once per turn, before the first model call.
    fn pre(&self, turn: &mut Turn) -> impl Future<Output = Verdict<Pre>> + Send {
        let _ = turn;
        ready(Verdict::Continue)
    }

    /// `before_model`: before every model call, with the request about to be sent.
    fn before_model(
        &self,
        request: &mut ModelRequest,
        turn: &mut Turn,
    ) -> impl Future<Output = Verdict<BeforeModel>> + Send {
        let _ = (request, turn);
        ready(Verdict::Continue)
    }

    /// `wrap_model`: around every model call. `next` runs the rest of the chain and the model;
    /// call it zero times (answer from a cache), once, or many times (retry, fallback).
    fn wrap_model(
        &self,
        request: &ModelRequest,
        turn: &Turn,
        next: &impl NextModel,
    ) -> impl Future<Output = Result<ModelResponse, ModelError>> + Send {
        let _ = turn;
        next.call(request)
    }

    /// `after_model`: after every model response.
    fn after_model(
        &self,
        message: &mut AssistantMessage,
        turn: &mut Turn,
    ) -> impl Future<Output = Verdict<AfterModel>> + Send {
        let _ = (message, turn);
        ready(Verdict::Continue)
    }

    /// `before_tool`: before each tool call. An edit to the call is what runs and what the log
    /// records — the model's own call is not kept, so record it here if an audit needs it. The
    /// id is the call's too: the result answers the id the call leaves the hooks with.
    fn before_tool(
        &self,
        call: &mut ToolCall,
        turn: &mut Turn,
    ) -> impl Future<Output = Verdict<BeforeTool>> + Send {
        let _ = (call, turn);
        ready(Verdict::Continue)
    }

    /// `wrap_tool`: around each tool execution. `next` runs the rest of the chain and the tool;
    /// call it any number of times.
    fn wrap_tool(
        &self,
        call: &ToolCall,
        turn: &Turn,
        next: &impl NextTool,
    ) -> impl Future<Output = ToolResult> + Send {
        let _ = turn;
        next.call(call)
    }

    /// `after_tool`: after a tool returns successfully.
    fn after_tool(
        &self,
        result: &mut ToolResult,
        turn: &mut Turn,
    ) -> impl Future<Output = Verdict<AfterTool>> + Send {
        let _ = (result, turn);
        ready(Verdict::Continue)
    }

    /// `tool_error`: when a tool fails. Clearing [`ToolResult::error`] recovers the call.
    fn tool_error(
        &self,
        result: &mut ToolResult,
        turn: &mut Turn,
    ) -> impl Future<Output = Verdict<ToolError>> + Send {
        let _ = (result, turn);
        ready(Verdict::Continue)
    }

    /// `before_final`: before the turn's final answer is committed.
    fn before_final(
        &self,
        message: &mut AssistantMessage,
        turn: &mut Turn,
    ) -> impl Future<Output = Verdict<BeforeFinal>> + Send {
        let _ = (message, turn);
        ready(Verdict::Continue)
    }

    /// `post`: once at the end of every turn — completed, halted or failed — with its outcome.
    fn post(
        &self,
        outcome: &Outcome,
        turn: &mut Turn,
    ) -> impl Future<Output = Verdict<Post>> + Send {
        let _ = (outcome, turn);
        ready(Verdict::Continue)
    }
}

/// The rest of a `wrap_model` chain: the remaining hooks, then the model.
pub trait NextModel: Send + Sync {
    /// Runs the rest of the chain on `request`. May be called any number of times.
    fn call(
        &self,
        request: &ModelRequest,
    ) -> impl Future<Output = Result<ModelResponse, ModelError>> + Send;
}

impl<N: NextModel + ?Sized> NextModel for &N {
    fn call(
        &self,
        request: &ModelRequest,
    ) -> impl Future<Output = Result<ModelResponse, ModelError>> + Send {
        (**self).call(request)
    }
}

/// The rest of a `wrap_tool` chain: the remaining hooks, then the tool.
pub trait NextTool: Send + Sync {
    /// Runs the rest of the chain on `call`. May be called any number of times.
    fn call(&self, call: &ToolCall) -> impl Future<Output = ToolResult> + Send;

    /// Whether the tool called `name` says that calling it again with the same arguments
    /// does what calling it once does ([`Tool::IDEMPOTENT`](crate::Tool::IDEMPOTENT), an MCP
    /// tool's `idempotentHint`): what a hook that calls `next` again for a failed call asks.
    fn idempotent(&self, name: &str) -> bool {
        let _ = name;
        false
    }
}

impl<N: NextTool + ?Sized> NextTool for &N {
    fn call(&self, call: &ToolCall) -> impl Future<Output = ToolResult> + Send {
        (**self).call(call)
    }

    fn idempotent(&self, name: &str) -> bool {
        (**self).idempotent(name)
    }
}

/// The last path segment of a type's name, generics included: `my_app::Guard<u8>` → `Guard<u8>`.
pub(crate) fn short_type_name<T: ?Sized>() -> &'static str {
    let full = std::any::type_name::<T>();
    let path_end = full.find('<').unwrap_or(full.len());
    let start = full[..path_end].rfind("::").map_or(0, |at| at + 2);
    &full[start..]
}
