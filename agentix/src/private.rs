//! What `#[hook]` expands to, and nothing else: the code it generates names only this module,
//! so it works whatever the user calls the crate. Not a public API.
//!
//! Each contract rule the macro cannot see in the syntax is a trait bound here, with a
//! `#[diagnostic::on_unimplemented]` message that names the rule.

use std::fmt::Display;
use std::pin::Pin;
use std::task::{Context, Poll};

pub use crate::Outcome;
pub use crate::event::{
    AfterModel, AfterTool, BeforeFinal, BeforeModel, BeforeTool, Event, Post, Pre, ToolError,
    WrapModel, WrapTool,
};
pub use crate::hook::{NextModel, NextTool};
pub use crate::message::{AssistantMessage, Part, ToolCall, ToolResult};
pub use crate::model::{ModelError, ModelRequest, ModelResponse};
pub use crate::on;
pub use crate::turn::Turn;
pub use crate::verdict::{Halt, Verdict};
pub use core::future::Future as CoreFuture;
pub use core::marker::{PhantomData, Send as CoreSend, Sync as CoreSync};
pub use core::option::Option;
pub use core::primitive::{bool, str};
pub use core::result::Result;
pub use core::time::Duration;
pub use std::vec::Vec;

pub use crate::tool::Tool;
pub use core::convert::Infallible;
pub use schemars;
pub use serde;

/// What `#[hook]` and `#[tool]` leave for a function whose attribute has an error: the error is
/// reported there, and the stand-in registers as a hook or a tool, adding nothing, so that no
/// second error says it is not one.
pub trait StandIn {}

// ---- parameters ----

// One trait per event, written out: a diagnostic then shows the one impl that would fit.

/// A parameter that can receive the value of `before_model`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not the value a hook on `before_model` receives",
    label = "expected `&ModelRequest` or `&mut ModelRequest`",
    note = "a hook on `before_model` takes its value first: `&ModelRequest` or `&mut ModelRequest`"
)]
pub trait BeforeModelValue<'a> {
    /// Lends the value to the hook.
    fn lend(value: &'a mut ModelRequest) -> Self;
}

#[diagnostic::do_not_recommend]
impl<'a> BeforeModelValue<'a> for &'a ModelRequest {
    fn lend(value: &'a mut ModelRequest) -> Self {
        value
    }
}

#[diagnostic::do_not_recommend]
impl<'a> BeforeModelValue<'a> for &'a mut ModelRequest {
    fn lend(value: &'a mut ModelRequest) -> Self {
        value
    }
}

/// A parameter that can receive the value of `wrap_model`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not the value a hook on `wrap_model` receives",
    label = "expected `&ModelRequest`",
    note = "a hook on `wrap_model` takes its value first: `&ModelRequest` (to change it, pass an edited copy to `next`)"
)]
pub trait WrapModelValue<'a> {
    /// Lends the value to the hook.
    fn lend(value: &'a ModelRequest) -> Self;
}

#[diagnostic::do_not_recommend]
impl<'a> WrapModelValue<'a> for &'a ModelRequest {
    fn lend(value: &'a ModelRequest) -> Self {
        value
    }
}

/// A parameter that can receive the value of `after_model`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not the value a hook on `after_model` receives",
    label = "expected `&AssistantMessage` or `&mut AssistantMessage`",
    note = "a hook on `after_model` takes its value first: `&AssistantMessage` or `&mut AssistantMessage`"
)]
pub trait AfterModelValue<'a> {
    /// Lends the value to the hook.
    fn lend(value: &'a mut AssistantMessage) -> Self;
}

#[diagnostic::do_not_recommend]
impl<'a> AfterModelValue<'a> for &'a AssistantMessage {
    fn lend(value: &'a mut AssistantMessage) -> Self {
        value
    }
}

#[diagnostic::do_not_recommend]
impl<'a> AfterModelValue<'a> for &'a mut AssistantMessage {
    fn lend(value: &'a mut AssistantMessage) -> Self {
        value
    }
}

/// A parameter that can receive the value of `before_tool`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not the value a hook on `before_tool` receives",
    label = "expected `&ToolCall` or `&mut ToolCall`",
    note = "a hook on `before_tool` takes its value first: `&ToolCall` or `&mut ToolCall`"
)]
pub trait BeforeToolValue<'a> {
    /// Lends the value to the hook.
    fn lend(value: &'a mut ToolCall) -> Self;
}

#[diagnostic::do_not_recommend]
impl<'a> BeforeToolValue<'a> for &'a ToolCall {
    fn lend(value: &'a mut ToolCall) -> Self {
        value
    }
}

#[diagnostic::do_not_recommend]
impl<'a> BeforeToolValue<'a> for &'a mut ToolCall {
    fn lend(value: &'a mut ToolCall) -> Self {
        value
    }
}

/// A parameter that can receive the value of `wrap_tool`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not the value a hook on `wrap_tool` receives",
    label = "expected `&ToolCall`",
    note = "a hook on `wrap_tool` takes its value first: `&ToolCall` (to change it, pass an edited copy to `next`)"
)]
pub trait WrapToolValue<'a> {
    /// Lends the value to the hook.
    fn lend(value: &'a ToolCall) -> Self;
}

#[diagnostic::do_not_recommend]
impl<'a> WrapToolValue<'a> for &'a ToolCall {
    fn lend(value: &'a ToolCall) -> Self {
        value
    }
}

/// A parameter that can receive the value of `after_tool`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not the value a hook on `after_tool` receives",
    label = "expected `&ToolResult` or `&mut ToolResult`",
    note = "a hook on `after_tool` takes its value first: `&ToolResult` or `&mut ToolResult`"
)]
pub trait AfterToolValue<'a> {
    /// Lends the value to the hook.
    fn lend(value: &'a mut ToolResult) -> Self;
}

#[diagnostic::do_not_recommend]
impl<'a> AfterToolValue<'a> for &'a ToolResult {
    fn lend(value: &'a mut ToolResult) -> Self {
        value
    }
}

#[diagnostic::do_not_recommend]
impl<'a> AfterToolValue<'a> for &'a mut ToolResult {
    fn lend(value: &'a mut ToolResult) -> Self {
        value
    }
}

/// A parameter that can receive the value of `tool_error`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not the value a hook on `tool_error` receives",
    label = "expected `&ToolResult` or `&mut ToolResult`",
    note = "a hook on `tool_error` takes its value first: `&ToolResult` or `&mut ToolResult`"
)]
pub trait ToolErrorValue<'a> {
    /// Lends the value to the hook.
    fn lend(value: &'a mut ToolResult) -> Self;
}

#[diagnostic::do_not_recommend]
impl<'a> ToolErrorValue<'a> for &'a ToolResult {
    fn lend(value: &'a mut ToolResult) -> Self {
        value
    }
}

#[diagnostic::do_not_recommend]
impl<'a> ToolErrorValue<'a> for &'a mut ToolResult {
    fn lend(value: &'a mut ToolResult) -> Self {
        value
    }
}

/// A parameter that can receive the value of `before_final`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not the value a hook on `before_final` receives",
    label = "expected `&AssistantMessage` or `&mut AssistantMessage`",
    note = "a hook on `before_final` takes its value first: `&AssistantMessage` or `&mut AssistantMessage`"
)]
pub trait BeforeFinalValue<'a> {
    /// Lends the value to the hook.
    fn lend(value: &'a mut AssistantMessage) -> Self;
}

#[diagnostic::do_not_recommend]
impl<'a> BeforeFinalValue<'a> for &'a AssistantMessage {
    fn lend(value: &'a mut AssistantMessage) -> Self {
        value
    }
}

#[diagnostic::do_not_recommend]
impl<'a> BeforeFinalValue<'a> for &'a mut AssistantMessage {
    fn lend(value: &'a mut AssistantMessage) -> Self {
        value
    }
}

/// A parameter that can receive the value of `post`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not the value a hook on `post` receives",
    label = "expected `&Outcome`",
    note = "a hook on `post` takes its value first: `&Outcome` (the turn has ended: its outcome can be read, not changed)"
)]
pub trait PostValue<'a> {
    /// Lends the value to the hook.
    fn lend(value: &'a Outcome) -> Self;
}

#[diagnostic::do_not_recommend]
impl<'a> PostValue<'a> for &'a Outcome {
    fn lend(value: &'a Outcome) -> Self {
        value
    }
}

/// A parameter that can receive the turn of a sequential hook.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not how a hook takes the turn",
    label = "expected `&mut Turn` or `&Turn`",
    note = "a sequential hook's last parameter is the turn: `&mut Turn` (to change its scope or inject) or `&Turn`"
)]
pub trait TurnParam<'a> {
    /// Lends the turn to the hook.
    fn lend(turn: &'a mut Turn) -> Self;
}

#[diagnostic::do_not_recommend]
impl<'a> TurnParam<'a> for &'a Turn {
    fn lend(turn: &'a mut Turn) -> Self {
        turn
    }
}

#[diagnostic::do_not_recommend]
impl<'a> TurnParam<'a> for &'a mut Turn {
    fn lend(turn: &'a mut Turn) -> Self {
        turn
    }
}

/// A parameter that can receive the turn of a parallel `pre` hook: a shared borrow only.
#[diagnostic::on_unimplemented(
    message = "a parallel hook cannot take `{Self}`",
    label = "expected `&Turn`",
    note = "parallel hooks run at the same time and read the turn through a shared borrow: take `&Turn`; a hook that changes the turn is a sequential `pre` hook"
)]
pub trait ParallelTurnParam<'a> {
    /// Lends the turn to the hook.
    fn lend(turn: &'a Turn) -> Self;
}

#[diagnostic::do_not_recommend]
impl<'a> ParallelTurnParam<'a> for &'a Turn {
    fn lend(turn: &'a Turn) -> Self {
        turn
    }
}

/// A parameter that can receive the turn of a wrap hook: a shared borrow only.
#[diagnostic::on_unimplemented(
    message = "a wrap hook cannot take `{Self}`",
    label = "expected `&Turn`",
    note = "a wrap hook holds the turn while `next` runs, so it reads it through a shared borrow: take `&Turn`"
)]
pub trait WrapTurnParam<'a> {
    /// Lends the turn to the hook.
    fn lend(turn: &'a Turn) -> Self;
}

#[diagnostic::do_not_recommend]
impl<'a> WrapTurnParam<'a> for &'a Turn {
    fn lend(turn: &'a Turn) -> Self {
        turn
    }
}

// ---- returns ----

/// What a sequential hook's return means: a verdict, or a new value for the event.
pub enum Returned<E: Event> {
    /// A verdict.
    Verdict(Verdict<E>),
    /// Replace the event's value and continue.
    Replace(E::Value),
}

/// A type a sequential hook at event `E` may return.
#[diagnostic::on_unimplemented(
    message = "a hook at `{E}` cannot return `{Self}`",
    label = "not a verdict of `{E}`",
    note = "a hook returns `Verdict<{E}>`, `()` (continue), a new value for the event, or a `Result` of one of these (an `Err` halts the turn as a failure)"
)]
pub trait IntoVerdict<E: Event> {
    /// What the return means.
    fn returned(self) -> Returned<E>;
}

#[diagnostic::do_not_recommend]
impl<E: Event> IntoVerdict<E> for () {
    fn returned(self) -> Returned<E> {
        Returned::Verdict(Verdict::Continue)
    }
}

#[diagnostic::do_not_recommend]
impl<E: Event> IntoVerdict<E> for Verdict<E> {
    fn returned(self) -> Returned<E> {
        Returned::Verdict(self)
    }
}

impl<E: Event, T: IntoVerdict<E>, Error: Display> IntoVerdict<E> for Result<T, Error> {
    fn returned(self) -> Returned<E> {
        match self {
            Ok(value) => value.returned(),
            Err(error) => Returned::Verdict(Verdict::Halt(Halt::failure(error))),
        }
    }
}

macro_rules! replacements {
    ($($event:ident: $value:ty;)*) => {$(
        #[diagnostic::do_not_recommend]
        impl IntoVerdict<$event> for $value {
            fn returned(self) -> Returned<$event> {
                Returned::Replace(self)
            }
        }
    )*};
}

replacements! {
    BeforeModel: ModelRequest;
    AfterModel: AssistantMessage;
    BeforeTool: ToolCall;
    AfterTool: ToolResult;
    ToolError: ToolResult;
    BeforeFinal: AssistantMessage;
}

/// Applies a hook's return to the event's value.
#[inline(always)]
pub fn apply<E: Event>(returned: Returned<E>, value: &mut E::Value) -> Verdict<E> {
    match returned {
        Returned::Verdict(verdict) => verdict,
        Returned::Replace(replacement) => {
            *value = replacement;
            Verdict::Continue
        }
    }
}

/// Applies the return of a hook whose event has no value to replace (`pre`, `post`).
#[inline(always)]
pub fn verdict<E: Event>(returned: Returned<E>) -> Verdict<E> {
    match returned {
        Returned::Verdict(verdict) => verdict,
        Returned::Replace(_) => Verdict::Continue,
    }
}

/// Content a parallel `pre` hook may return.
#[diagnostic::on_unimplemented(
    message = "a parallel hook cannot return `{Self}`",
    label = "a parallel hook returns content; it cannot halt",
    note = "parallel `pre` hooks are append-only: return `Vec<Part>`, `Part`, `Option<Part>` or `String`; a hook that may halt is a sequential `pre` hook (drop `parallel`)"
)]
pub trait IntoParts {
    /// The parts to inject.
    fn into_parts(self) -> Vec<Part>;
}

#[diagnostic::do_not_recommend]
impl IntoParts for Vec<Part> {
    fn into_parts(self) -> Vec<Part> {
        self
    }
}

#[diagnostic::do_not_recommend]
impl IntoParts for Part {
    fn into_parts(self) -> Vec<Part> {
        vec![self]
    }
}

#[diagnostic::do_not_recommend]
impl IntoParts for Option<Part> {
    fn into_parts(self) -> Vec<Part> {
        self.into_iter().collect()
    }
}

#[diagnostic::do_not_recommend]
impl IntoParts for String {
    fn into_parts(self) -> Vec<Part> {
        vec![Part::Text(self)]
    }
}

/// What a `wrap_model` hook returns.
#[diagnostic::on_unimplemented(
    message = "a `wrap_model` hook cannot return `{Self}`",
    label = "expected `Result<ModelResponse, ModelError>`",
    note = "a `wrap_model` hook owns the model call and returns its result: `Result<ModelResponse, ModelError>`"
)]
pub trait IntoModelResult {
    /// The call's result.
    fn into_result(self) -> Result<ModelResponse, ModelError>;
}

#[diagnostic::do_not_recommend]
impl IntoModelResult for Result<ModelResponse, ModelError> {
    fn into_result(self) -> Result<ModelResponse, ModelError> {
        self
    }
}

/// What a `wrap_tool` hook returns.
#[diagnostic::on_unimplemented(
    message = "a `wrap_tool` hook cannot return `{Self}`",
    label = "expected `ToolResult`",
    note = "a `wrap_tool` hook owns the tool call and returns its result: a `ToolResult`"
)]
pub trait IntoToolResult {
    /// The call's result.
    fn into_result(self) -> ToolResult;
}

#[diagnostic::do_not_recommend]
impl IntoToolResult for ToolResult {
    fn into_result(self) -> ToolResult {
        self
    }
}

/// A `wrap_model` hook's future, its return converted to the call's result.
/// Its type names no bound on `R`: a return type that cannot convert is one error, at the call.
#[allow(clippy::type_complexity)]
pub fn model_result<R: IntoModelResult, F: CoreFuture<Output = R>>(
    future: F,
) -> Converted<F, fn(R) -> Result<ModelResponse, ModelError>> {
    converted(future, R::into_result)
}

/// A `wrap_tool` hook's future, its return converted to the call's result; as
/// [`model_result`].
pub fn tool_result<R: IntoToolResult, F: CoreFuture<Output = R>>(
    future: F,
) -> Converted<F, fn(R) -> ToolResult> {
    converted(future, R::into_result)
}

pin_project_lite::pin_project! {
    /// A wrap hook's future with its output converted to the call's result. A plain future, not
    /// an `async` block: each layer of a wrap onion then nests one coroutine (the user's), and
    /// the onion's depth is what rustc's layout queries pay for.
    pub struct Converted<F, C> {
        #[pin]
        future: F,
        convert: Option<C>,
    }
}

impl<F: CoreFuture, C: FnOnce(F::Output) -> R, R> CoreFuture for Converted<F, C> {
    type Output = R;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<R> {
        let this = self.project();
        let output = std::task::ready!(this.future.poll(cx));
        let convert = this.convert.take().expect("a finished future is not polled again");
        Poll::Ready(convert(output))
    }
}

/// `future`, its output converted by `convert`.
pub fn converted<F: CoreFuture, C: FnOnce(F::Output) -> R, R>(
    future: F,
    convert: C,
) -> Converted<F, C> {
    Converted { future, convert: Some(convert) }
}

// ---- conditions ----

// A `when` condition is called through `(&&When(&condition)).holds(value, turn)`: a function
// of the right shape takes the first method (autoref picks it), any other the fallback, whose
// bound fails with a message that names `when` and the signature expected. A bound on the
// first impl alone would let rustc report the closure's arity or argument types instead.

/// A hook's `when` condition, for method resolution: `V` is the hook's value (`()` for a `pre`
/// hook), named so that a condition over another event's value takes the fallback.
pub struct When<'f, V: ?Sized, F>(pub &'f F, pub core::marker::PhantomData<fn(&V)>);

/// A `when` condition of the right shape, over a hook's value and turn.
pub trait WhenHolds<V: ?Sized> {
    /// Whether the hook runs.
    fn holds(&self, value: &V, turn: &Turn) -> bool;
}

impl<V: ?Sized, F: Fn(&V, &Turn) -> bool> WhenHolds<V> for &When<'_, V, F> {
    fn holds(&self, value: &V, turn: &Turn) -> bool {
        (self.0)(value, turn)
    }
}

/// A `when` condition of another shape: its bound fails, naming the shape expected.
pub trait WhenFallback<V: ?Sized, F> {
    /// Never called: the crate does not compile.
    fn holds(&self, value: &V, turn: &Turn) -> bool
    where
        F: NotACondition<V>;
}

impl<V: ?Sized, F> WhenFallback<V, F> for When<'_, V, F> {
    fn holds(&self, _value: &V, _turn: &Turn) -> bool
    where
        F: NotACondition<V>,
    {
        unreachable!("a `when` condition of the wrong shape does not compile")
    }
}

/// Implemented by nothing: the bound a `when` condition of the wrong shape fails.
#[diagnostic::on_unimplemented(
    message = "`when = ...` must be a `fn(&{V}, &Turn) -> bool`: the hook's value, the turn, whether it runs",
    label = "not a `fn(&{V}, &Turn) -> bool`",
    note = "a `when` condition takes the hook's value and the turn by shared reference and returns `bool` (a `pre` hook's condition takes only `&Turn`)"
)]
pub trait NotACondition<V: ?Sized> {}

/// A `pre` hook's `when` condition of the right shape, over the turn.
pub trait WhenHoldsForTurn {
    /// Whether the hook runs.
    fn holds(&self, turn: &Turn) -> bool;
}

impl<F: Fn(&Turn) -> bool> WhenHoldsForTurn for &When<'_, (), F> {
    fn holds(&self, turn: &Turn) -> bool {
        (self.0)(turn)
    }
}

/// A `pre` hook's `when` condition of another shape.
pub trait WhenFallbackForTurn<F> {
    /// Never called: the crate does not compile.
    fn holds(&self, turn: &Turn) -> bool
    where
        F: NotATurnCondition;
}

impl<F> WhenFallbackForTurn<F> for When<'_, (), F> {
    fn holds(&self, _turn: &Turn) -> bool
    where
        F: NotATurnCondition,
    {
        unreachable!("a `when` condition of the wrong shape does not compile")
    }
}

/// Implemented by nothing: the bound a `pre` hook's `when` condition of the wrong shape fails.
#[diagnostic::on_unimplemented(
    message = "`when = ...` on a `pre` hook must be a `fn(&Turn) -> bool`: whether it runs this turn",
    label = "not a `fn(&Turn) -> bool`",
    note = "a `pre` hook has no value: its `when` condition takes `&Turn` and returns `bool`"
)]
pub trait NotATurnCondition {}

// ---- tools ----

/// A parameter that can receive `V` — the arguments, the output or the error of tool `T` — for
/// a per-tool hook.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not what a hook on `{T}`'s calls receives",
    label = "expected `&mut {V}` or `&{V}`",
    note = "a per-tool hook takes its tool's arguments (`before_tool`), output (`after_tool`) or error (`tool_error`) first: `&mut {V}` to edit it, `&{V}` to read it"
)]
pub trait ToolValueParam<'a, T, V> {
    /// Lends the value to the hook.
    fn lend(value: &'a mut V) -> Self;
}

#[diagnostic::do_not_recommend]
impl<'a, T, V> ToolValueParam<'a, T, V> for &'a mut V {
    fn lend(value: &'a mut V) -> Self {
        value
    }
}

#[diagnostic::do_not_recommend]
impl<'a, T, V> ToolValueParam<'a, T, V> for &'a V {
    fn lend(value: &'a mut V) -> Self {
        value
    }
}

/// A parameter that can receive the turn of a per-tool `after_tool` or `tool_error` hook, which
/// runs inside the tool call: a shared borrow only.
#[diagnostic::on_unimplemented(
    message = "a per-tool `after_tool` or `tool_error` hook cannot take `{Self}`",
    label = "expected `&Turn`",
    note = "the hook runs inside the tool call, where the turn is shared: take `&Turn`; a hook that changes the turn is an `after_tool` hook without `tool = ...`"
)]
pub trait InCallTurnParam<'a> {
    /// Lends the turn to the hook.
    fn lend(turn: &'a Turn) -> Self;
}

#[diagnostic::do_not_recommend]
impl<'a> InCallTurnParam<'a> for &'a Turn {
    fn lend(turn: &'a Turn) -> Self {
        turn
    }
}

/// What a per-tool hook at event `E` may return: it edits its value in place, so no new value.
#[diagnostic::on_unimplemented(
    message = "a per-tool hook at `{E}` cannot return `{Self}`",
    label = "not a verdict of `{E}`",
    note = "a per-tool hook returns `Verdict<{E}>`, `()` (continue), or a `Result` of one of these (an `Err` halts the turn as a failure); it edits the typed value in place"
)]
pub trait IntoToolVerdict<E: Event> {
    /// The verdict.
    fn verdict(self) -> Verdict<E>;
}

#[diagnostic::do_not_recommend]
impl<E: Event> IntoToolVerdict<E> for () {
    fn verdict(self) -> Verdict<E> {
        Verdict::Continue
    }
}

#[diagnostic::do_not_recommend]
impl<E: Event> IntoToolVerdict<E> for Verdict<E> {
    fn verdict(self) -> Verdict<E> {
        self
    }
}

impl<E: Event, T: IntoToolVerdict<E>, Error: Display> IntoToolVerdict<E> for Result<T, Error> {
    fn verdict(self) -> Verdict<E> {
        match self {
            Ok(value) => value.verdict(),
            Err(error) => Verdict::Halt(Halt::failure(error)),
        }
    }
}

/// What a `#[tool]` function's parameter must be: the model's JSON deserializes into it, a hook's
/// edit serializes back, and its JSON schema is what the model is shown.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool's argument",
    label = "not `Deserialize`, `Serialize` and `JsonSchema`",
    note = "a tool's arguments are read from the model's JSON and shown to it as a JSON schema: derive `Deserialize`, `Serialize` and `JsonSchema` for `{Self}` (through `agentix::serde` and `agentix::schemars`, or `agentix::prelude`)"
)]
pub trait ToolArgument: Sized {
    /// Deserializes one argument of a `#[tool]` function: the one place its type is checked.
    fn deserialize_argument<'de, D: serde::Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Self, D::Error>;
}

#[diagnostic::do_not_recommend]
impl<T: serde::de::DeserializeOwned + serde::Serialize + schemars::JsonSchema> ToolArgument for T {
    fn deserialize_argument<'de, D: serde::Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Self, D::Error> {
        T::deserialize(deserializer)
    }
}

/// Takes the generated arguments struct's doc comment, written for its Rust readers, out of the
/// schema the model reads; the tool's description is the function's.
pub fn undocumented_root(schema: &mut schemars::Schema) {
    schema.remove("description");
}

/// Stands for the type `T` in the method calls of [`SerializeArgument`] and [`ArgumentSchema`],
/// which resolve to their fallbacks, silently, for a type [`ToolArgument`] has already reported.
pub struct Probe<T: ?Sized>(core::marker::PhantomData<T>);

impl<T: ?Sized> Probe<T> {
    /// The probe.
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        Probe(core::marker::PhantomData)
    }
}

/// Serializes an argument of a type that can be one.
pub trait SerializeArgument<T: ?Sized> {
    /// Serializes `value`.
    fn serialize_argument<S: serde::Serializer>(
        &self,
        value: &T,
        serializer: S,
    ) -> Result<S::Ok, S::Error>;
}

impl<T: serde::Serialize + ?Sized> SerializeArgument<T> for &Probe<T> {
    fn serialize_argument<S: serde::Serializer>(
        &self,
        value: &T,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        value.serialize(serializer)
    }
}

/// The fallback of [`SerializeArgument`], for a type that cannot be an argument: a crate that
/// reaches it does not compile, so it never runs.
pub trait SerializeFallback<T: ?Sized> {
    /// Fails.
    fn serialize_argument<S: serde::Serializer>(
        &self,
        value: &T,
        serializer: S,
    ) -> Result<S::Ok, S::Error>;
}

impl<T: ?Sized> SerializeFallback<T> for Probe<T> {
    fn serialize_argument<S: serde::Serializer>(
        &self,
        _value: &T,
        _serializer: S,
    ) -> Result<S::Ok, S::Error> {
        Err(serde::ser::Error::custom("not a tool argument"))
    }
}

/// The schema of an argument of a type that can be one.
pub trait ArgumentSchema {
    /// The schema.
    fn argument_schema(&self, generator: &mut schemars::SchemaGenerator) -> schemars::Schema;
}

impl<T: schemars::JsonSchema + ?Sized> ArgumentSchema for &Probe<T> {
    fn argument_schema(&self, generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        generator.subschema_for::<T>()
    }
}

/// The fallback of [`ArgumentSchema`], for a type that cannot be an argument: a crate that
/// reaches it does not compile, so it never runs.
pub trait ArgumentSchemaFallback {
    /// An empty schema.
    fn argument_schema(&self, generator: &mut schemars::SchemaGenerator) -> schemars::Schema;
}

impl<T: ?Sized> ArgumentSchemaFallback for Probe<T> {
    fn argument_schema(&self, _generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::Schema::default()
    }
}

/// What a fallible `#[tool]` function returns: `Result<T, E>`, `T` the output the model reads,
/// `E` the failure it is told.
#[diagnostic::on_unimplemented(
    message = "a tool cannot return `{Self}`",
    label = "expected `Result<T, E>` with `T: Serialize` and `E: Display`",
    note = "a tool returns `Result<T, E>` (`T` serialized for the model, `E` displayed to it) or a plain `T` that cannot fail"
)]
pub trait ToolReturn {
    /// What the model reads.
    type Output: serde::Serialize + Send + 'static;
    /// What the model is told of a failure.
    type Error: Display + Send;

    /// The call's result.
    fn into_result(self) -> Result<Self::Output, Self::Error>;
}

#[diagnostic::do_not_recommend]
impl<T: serde::Serialize + Send + 'static, E: Display + Send> ToolReturn for Result<T, E> {
    type Output = T;
    type Error = E;

    fn into_result(self) -> Result<T, E> {
        self
    }
}
