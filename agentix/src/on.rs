//! One trait per event: the hook a `#[hook(EVENT)]` function becomes.
//!
//! Each trait has one method whose signature is the event's contract. Implement one by hand for
//! a single-event hook struct; for a struct that hooks several events, implement
//! [`Hook`](crate::Hook) instead. [`AgentBuilder::hook`](crate::AgentBuilder::hook) finds
//! where a hook goes by the one trait it implements; a type that implements two is registered
//! once per event, naming it: `.hook::<_, event::Pre, _>(timer)`. (Without the event, the
//! compiler says "type annotations needed … the type parameter `Event`", and lists the two
//! traits: Rust lets no library word that error itself.)

use std::future::Future;
use std::time::Duration;

use crate::Outcome;
use crate::event;
use crate::hook::{NextModel, NextTool, short_type_name};
use crate::message::{AssistantMessage, Part, ToolCall, ToolResult};
use crate::model::{ModelError, ModelRequest, ModelResponse};
use crate::tool::Tool;
use crate::turn::Turn;
use crate::verdict::{Trip, Verdict};

pub use crate::session::hooks::{
    AllTasksComplete, PlanComplete, PlanSubmit, SessionEnd, SessionStart, StepStart, TaskComplete,
    TaskStart,
};

macro_rules! single_event_traits {
    ($(
        $(#[$doc:meta])*
        $trait:ident($($when_arg:ident: $when_ty:ty),*) $($durable:ident)? $([$per_tool:ident])? $(/ $in_place:ident)? { fn $method:ident($($arg:ident: $ty:ty),*) -> $output:ty; }
    )*) => {$(
        $(#[$doc])*
        pub trait $trait: Send + Sync {
            $(
                #[doc = concat!(
                    "Whether the hook's output is ", stringify!($durable), ": appended to the ",
                    "conversation's log, where later turns see it, rather than transient."
                )]
                const DURABLE: bool = false;
            )?

            $(
                #[doc = concat!(
                    "The tool whose calls the hook runs on, by its type: a ", stringify!($per_tool),
                    " hook (`#[hook(before_tool, tool = get_weather)]`) that the other tools' ",
                    "calls pass by without a trace. `None`, the default: every call. The tool is ",
                    "the one the model's call names as it reaches the hook, after earlier hooks' edits."
                )]
                const TOOL: Option<crate::tool::ToolId> = None;
            )?

            /// How long one call of the hook may take; past it, the hook failed, and its
            /// event's failure policy answers (the turn ends, or a `before_tool` hook's call is
            /// refused). `#[hook(EVENT, timeout = "2s")]` sets it. `None`: no limit, and no timer.
            /// A timeout needs a tokio runtime with its time driver.
            const TIMEOUT: Option<Duration> = None;

            /// Whether the hook has a condition ([`applies`](Self::applies)): `#[hook(when =
            /// ...)]` says so, and the pipeline then asks it before each call.
            #[doc(hidden)]
            const CONDITIONAL: bool = false;

            /// Whether the hook runs on this value; a hook it does not is reported skipped.
            /// Asked only when [`CONDITIONAL`](Self::CONDITIONAL) is true.
            #[doc(hidden)]
            fn applies(&self, $($when_arg: $when_ty),*) -> bool {
                let _ = ($($when_arg),*);
                true
            }

            in_place_items!([$($in_place)?] $method($($arg: $ty),*) -> $output);

            /// Whether the hook may change the event's value, through a `&mut` borrow of it or
            /// by returning a replacement. `#[hook]` says `false` of a function that only reads
            /// it and returns a verdict or nothing: the chain then skips checking the value
            /// against the event's contract after it, as it cannot have changed.
            #[doc(hidden)]
            const EDITS: bool = true;

            /// Whether the hook is lent the turn to change (`&mut Turn`): the chain then marks
            /// it as the one the turn is lent to, so that what it injects is attributed to it.
            /// `#[hook]` says `false` of a function that takes no `&mut Turn`.
            #[doc(hidden)]
            const TURNS: bool = true;

            /// Whether [`name`](Self::name) returns a constant, as `#[hook]` writes it: the
            /// chain then asks it at each call, which costs less than reading a copy kept
            /// aside. Otherwise it is asked once, when the hook is added.
            #[doc(hidden)]
            const NAMED: bool = false;

            /// The hook's name in errors, the log and traces. Defaults to the type's name.
            /// Asked once, when the hook is added to an agent.
            fn name(&self) -> &'static str {
                short_type_name::<Self>()
            }

            /// Runs the hook at its event.
            fn $method(&self, $($arg: $ty),*) -> impl Future<Output = $output> + Send;
        }
    )*};
}

/// The items of a hook that can run in place, for the events whose chain calls hooks that way.
macro_rules! in_place_items {
    ([] $($rest:tt)*) => {};
    ([$in_place:ident] $method:ident($($arg:ident: $ty:ty),*) -> $output:ty) => {
        /// Whether the hook runs to its end without awaiting: `#[hook]` says so of a function
        /// whose body never awaits, and the chain then calls
        #[doc = concat!("[`", stringify!($in_place), "`](Self::", stringify!($in_place), ")")]
        /// in place, with no future.
        #[doc(hidden)]
        const IN_PLACE: bool = false;

        #[doc = concat!("[`", stringify!($method), "`](Self::", stringify!($method), ")")]
        /// run in place; called only when [`IN_PLACE`](Self::IN_PLACE) is true.
        #[doc(hidden)]
        fn $in_place(&self, $($arg: $ty),*) -> $output {
            let _ = ($($arg),*);
            unreachable!(concat!("`", stringify!($in_place), "` is called only when `IN_PLACE` is true"))
        }
    };
}

single_event_traits! {
    /// A sequential `pre` hook: it may inject content ([`Turn::inject`]) and halt.
    Pre(turn: &Turn) durable / pre_in_place { fn pre(turn: &mut Turn) -> Verdict<event::Pre>; }

    /// A `before_model` hook: it may edit the request, STOP with a message, or halt.
    BeforeModel(request: &ModelRequest, turn: &Turn) / before_model_in_place { fn before_model(request: &mut ModelRequest, turn: &mut Turn) -> Verdict<event::BeforeModel>; }
    /// A `wrap_model` hook: it owns the model call and may call `next` any number of times.
    WrapModel(request: &ModelRequest, turn: &Turn) {
        fn wrap_model(request: &ModelRequest, turn: &Turn, next: &impl NextModel) -> Result<ModelResponse, ModelError>;
    }
    /// An `after_model` hook: it may edit the message, RETRY, STOP with a final message, or halt.
    AfterModel(message: &AssistantMessage, turn: &Turn) / after_model_in_place { fn after_model(message: &mut AssistantMessage, turn: &mut Turn) -> Verdict<event::AfterModel>; }
    /// A `before_tool` hook: it may edit the call (the log records the edited call), REJECT it,
    /// ESCALATE it, or halt.
    BeforeTool(call: &ToolCall, turn: &Turn) [per_tool] / before_tool_in_place { fn before_tool(call: &mut ToolCall, turn: &mut Turn) -> Verdict<event::BeforeTool>; }
    /// A `wrap_tool` hook: it owns the tool call and may call `next` any number of times.
    WrapTool(call: &ToolCall, turn: &Turn) { fn wrap_tool(call: &ToolCall, turn: &Turn, next: &impl NextTool) -> ToolResult; }
    /// An `after_tool` hook: it may edit a successful result, or halt.
    AfterTool(result: &ToolResult, turn: &Turn) / after_tool_in_place { fn after_tool(result: &mut ToolResult, turn: &mut Turn) -> Verdict<event::AfterTool>; }
    /// A `tool_error` hook: it may edit or recover a failed result, or halt.
    ToolError(result: &ToolResult, turn: &Turn) / tool_error_in_place { fn tool_error(result: &mut ToolResult, turn: &mut Turn) -> Verdict<event::ToolError>; }
    /// A `before_final` hook: it may edit the answer, RETRY, STOP with another answer, or halt.
    BeforeFinal(message: &AssistantMessage, turn: &Turn) / before_final_in_place { fn before_final(message: &mut AssistantMessage, turn: &mut Turn) -> Verdict<event::BeforeFinal>; }
    /// A `post` hook: it sees how the turn ended, every time, and may halt.
    Post(outcome: &Outcome, turn: &Turn) durable / post_in_place { fn post(outcome: &Outcome, turn: &mut Turn) -> Verdict<event::Post>; }
}

/// A parallel `pre` hook: it reads the turn through a shared borrow and returns content to
/// inject. Its type has no way to halt or mutate the turn, so consecutive parallel hooks run at
/// once, on one task, and their parts merge in declaration order.
pub trait ParallelPre: Send + Sync {
    /// Whether the hook's output is durable: appended to the conversation's log, where later
    /// turns see it, rather than transient.
    const DURABLE: bool = false;

    /// What the hook's panic or timeout does: fail the turn (the default), or, for content the
    /// turn can do without (retrieval that may fail), skip the hook — its failure is recorded in
    /// the log and reported, and the group's other content is kept. `#[hook(pre, parallel,
    /// on_error = skip)]` sets it; only a parallel `pre` hook has the choice: every other event
    /// is a guard, and fails closed.
    const ON_ERROR: OnError = OnError::Fail;

    /// How long one call of the hook may take; past it, the hook failed, as [`ON_ERROR`]
    /// says. `None`: no limit, and no timer. A timeout needs a tokio runtime with its time
    /// driver.
    ///
    /// [`ON_ERROR`]: ParallelPre::ON_ERROR
    const TIMEOUT: Option<Duration> = None;

    /// Whether the hook has a condition ([`applies`](Self::applies)): `#[hook(when = ...)]`
    /// says so, and the pipeline then asks it before each call.
    #[doc(hidden)]
    const CONDITIONAL: bool = false;

    /// Whether the hook runs on this turn; a hook it does not is reported skipped. Asked only
    /// when [`CONDITIONAL`](Self::CONDITIONAL) is true.
    #[doc(hidden)]
    fn applies(&self, turn: &Turn) -> bool {
        let _ = turn;
        true
    }

    /// The hook's name in errors, the log and traces. Defaults to the type's name. Asked
    /// once, when the hook is added to an agent.
    fn name(&self) -> &'static str {
        short_type_name::<Self>()
    }

    /// Runs the hook at its event.
    fn pre(&self, turn: &Turn) -> impl Future<Output = Vec<Part>> + Send;
}

/// A `tripwire` hook: a guard on the turn's input that runs beside the model call of the
/// turn's first step, not before it, so that a check taking 50 ms adds nothing to a model call
/// taking 500. It reads the request and the turn through shared borrows and can only pass or
/// trip ([`Trip`]): a trip cancels the call in flight, withdraws what it streamed, and ends the
/// turn with [`Error::Tripped`](crate::Error::Tripped), the log keeping nothing of the call.
/// `#[hook(tripwire)]` on `async fn(&ModelRequest, &Turn) -> Trip` implements it.
pub trait Tripwire: Send + Sync {
    /// What the hook's panic, error or timeout does: trip (the default: a guard fails closed),
    /// or, for a check the turn can do without, let the call go on — the failure is recorded
    /// in the log and reported (`on_error = skip`).
    const ON_ERROR: OnError = OnError::Fail;

    /// How long one call of the hook may take; past it, the hook failed, as
    /// [`ON_ERROR`](Self::ON_ERROR) says. `None`: no limit, and no timer.
    const TIMEOUT: Option<Duration> = None;

    /// Whether the hook has a condition ([`applies`](Self::applies)).
    #[doc(hidden)]
    const CONDITIONAL: bool = false;

    /// Whether [`name`](Self::name) is a literal (a `#[hook]` function's).
    #[doc(hidden)]
    const NAMED: bool = false;

    /// Whether the hook runs on this request; asked only when
    /// [`CONDITIONAL`](Self::CONDITIONAL) is true.
    #[doc(hidden)]
    fn applies(&self, request: &ModelRequest, turn: &Turn) -> bool {
        let _ = (request, turn);
        true
    }

    /// The hook's name in errors, the log and traces. Defaults to the type's name.
    fn name(&self) -> &'static str {
        short_type_name::<Self>()
    }

    /// Checks the request the model is being asked.
    fn tripwire(&self, request: &ModelRequest, turn: &Turn) -> impl Future<Output = Trip> + Send;
}

/// A per-tool `before_tool` hook: it runs on the calls of one tool, [`Tool`](Self::Tool), and
/// reads or edits its arguments as their own type, not as JSON. Other tools' calls pass it by
/// without a trace. `#[hook(before_tool, tool = get_weather)]` on a function taking
/// `&mut GetWeatherArgs` implements it.
///
/// It runs in declaration order with the other `before_tool` hooks. An edit is written back
/// into the call, so the log records the call that ran, as for any `before_tool` hook. A call
/// whose arguments do not fit the tool's type passes it by: the tool refuses those arguments
/// anyway, and the model is told why.
pub trait BeforeToolOf: Send + Sync {
    /// The tool whose calls the hook runs on. Its arguments serialize, for the edit to be
    /// written back.
    type Tool: Tool<Args: serde::Serialize> + 'static;

    /// Whether the hook may edit the arguments (it takes them `&mut`): they are then written
    /// back into the call.
    const EDITS: bool = true;

    /// How long one call of the hook may take, as [`BeforeTool::TIMEOUT`].
    const TIMEOUT: Option<Duration> = None;

    /// Whether the hook has a condition ([`applies`](Self::applies)), as for the other hooks.
    #[doc(hidden)]
    const CONDITIONAL: bool = false;

    /// Whether the hook runs on these arguments; asked only when
    /// [`CONDITIONAL`](Self::CONDITIONAL) is true.
    #[doc(hidden)]
    fn applies(&self, args: &<Self::Tool as Tool>::Args, turn: &Turn) -> bool {
        let _ = (args, turn);
        true
    }

    /// The hook's name in errors, the log and traces. Defaults to the type's name. Asked
    /// once, when the hook is added to an agent.
    fn name(&self) -> &'static str {
        short_type_name::<Self>()
    }

    /// Runs the hook on a call of its tool.
    fn before_tool(
        &self,
        args: &mut <Self::Tool as Tool>::Args,
        turn: &mut Turn,
    ) -> impl Future<Output = Verdict<event::BeforeTool>> + Send;
}

/// A `before_final` hook on a typed agent's answer: it reads or edits the answer as the agent's
/// output type, [`Answer`](Self::Answer), not as the message's JSON. `#[hook(before_final)]` on
/// a function taking `&mut Invoice` (or `&Invoice`) implements it; the agent must answer with
/// that type (`.output::<Invoice>()`), or it does not compile.
///
/// It runs in declaration order with the other `before_final` hooks. An edit is written back
/// as the message's JSON, so the log keeps the answer the caller gets. RETRY sends the answer
/// back with feedback; STOP (`Verdict::stop_with(invoice)`) ends the chain with a replacement
/// value. An answer that does not read as the type is reported skipped by the hook, and the
/// agent's check then sends it back to the model. The agent's validators run after every
/// `before_final` hook, on the answer they leave.
pub trait BeforeFinalOf: Send + Sync {
    /// The agent's output type, which the hook reads the answer as.
    type Answer: crate::model::OutputType;

    /// Whether the hook may edit the answer (it takes it `&mut`): an edit is then written back.
    const EDITS: bool = true;

    /// How long one call of the hook may take, as [`BeforeFinal::TIMEOUT`].
    const TIMEOUT: Option<Duration> = None;

    /// Whether the hook has a condition ([`applies`](Self::applies)), as for the other hooks.
    #[doc(hidden)]
    const CONDITIONAL: bool = false;

    /// Whether the hook runs on this answer; asked only when
    /// [`CONDITIONAL`](Self::CONDITIONAL) is true.
    #[doc(hidden)]
    fn applies(&self, answer: &Self::Answer, turn: &Turn) -> bool {
        let _ = (answer, turn);
        true
    }

    /// The hook's name in errors, the log and traces. Defaults to the type's name. Asked
    /// once, when the hook is added to an agent.
    fn name(&self) -> &'static str {
        short_type_name::<Self>()
    }

    /// Runs the hook on the turn's answer.
    fn before_final(
        &self,
        answer: &mut Self::Answer,
        turn: &mut Turn,
    ) -> impl Future<Output = Verdict<event::BeforeFinal>> + Send;
}

macro_rules! per_tool_result_traits {
    ($(
        $(#[$doc:meta])*
        $trait:ident: $method:ident($value:ident: $assoc:ident) -> $event:ident;
    )*) => {$(
        $(#[$doc])*
        pub trait $trait: Send + Sync {
            /// The tool whose calls the hook runs on.
            type Tool: Tool + 'static;

            /// How long one call of the hook may take; past it, the hook failed and the turn
            /// ends, the call logged with what the tool returned.
            const TIMEOUT: Option<Duration> = None;

            /// Whether the hook has a condition ([`applies`](Self::applies)), as for the other
            /// hooks.
            #[doc(hidden)]
            const CONDITIONAL: bool = false;

            /// Whether the hook runs on this value; asked only when
            /// [`CONDITIONAL`](Self::CONDITIONAL) is true.
            #[doc(hidden)]
            fn applies(&self, $value: &<Self::Tool as Tool>::$assoc, turn: &Turn) -> bool {
                let _ = ($value, turn);
                true
            }

            /// The hook's name in errors, the log and traces. Defaults to the type's name.
            /// Asked once, when the hook is added to an agent.
            fn name(&self) -> &'static str {
                short_type_name::<Self>()
            }

            /// Runs the hook on a call of its tool.
            fn $method(
                &self,
                $value: &mut <Self::Tool as Tool>::$assoc,
                turn: &Turn,
            ) -> impl Future<Output = Verdict<event::$event>> + Send;
        }
    )*};
}

per_tool_result_traits! {
    /// A per-tool `after_tool` hook: it runs on a successful call of one tool,
    /// [`Tool`](Self::Tool), on the tool's own output, before that output is rendered for the
    /// model — it reads or edits a typed value, not text. `#[hook(after_tool, tool =
    /// get_weather)]` on a function taking `&mut` the tool's output implements it.
    ///
    /// It runs inside the tool call, so inside the `wrap_tool` hooks and before the
    /// `after_tool` hooks that see every call; the turn is shared there (`&Turn`). A halt, a
    /// panic or a timeout ends the turn naming the hook; the call is logged with what the tool
    /// returned.
    AfterToolOf: after_tool(output: Output) -> AfterTool;

    /// A per-tool `tool_error` hook: it runs on a failed call of one tool,
    /// [`Tool`](Self::Tool), on the tool's own error, before the error is displayed to the
    /// model. `#[hook(tool_error, tool = get_weather)]` on a function taking `&mut` the tool's
    /// error implements it. It runs inside the tool call, as [`AfterToolOf`] does.
    ToolErrorOf: tool_error(error: Error) -> ToolError;
}

/// What a parallel `pre` hook's failure (a panic, a timeout) does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnError {
    /// The turn ends with the hook's error, before the model is called: fail closed.
    Fail,
    /// The turn goes on without the hook's content; the failure is recorded in the log
    /// ([`Entry::HookSkipped`](crate::Entry::HookSkipped)) and reported to the observer.
    Skip,
}
