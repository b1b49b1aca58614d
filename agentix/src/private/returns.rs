//! What a hook function may return at each event, and how it becomes the event's output.

use crate::event::{AfterModel, AfterTool, BeforeFinal, BeforeModel, BeforeTool, Event, ToolError};
use crate::message::{AssistantMessage, Part, ToolCall, ToolResult};
use crate::model::{ModelError, ModelRequest, ModelResponse};
use crate::verdict::{Halt, Verdict};
use core::future::Future as CoreFuture;
use std::fmt::Display;
use std::pin::Pin;
use std::task::{Context, Poll};

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
    note = "a hook returns `Verdict<{E}>`, `()` (continue), a new value for the event, or a `Result` of one of these (an `Err` halts the turn, or at a session event the session, as a failure)"
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

/// What a hook on a typed value at event `E` may return — a per-tool hook (a tool's arguments,
/// output or error) or a typed agent's `before_final` hook: it edits the value in place, so no
/// new value.
#[diagnostic::on_unimplemented(
    message = "a hook on a typed value at `{E}` cannot return `{Self}`",
    label = "not a verdict of `{E}`",
    note = "a hook on a typed value (a tool's arguments, output or error; an agent's typed answer) returns `Verdict<{E}>`, `()` (continue), or a `Result` of one of these (an `Err` halts the turn as a failure); it edits the value in place, and a typed answer's hook replaces it with `Verdict::stop_with(value)`"
)]
pub trait IntoTypedVerdict<E: Event> {
    /// The verdict.
    fn verdict(self) -> Verdict<E>;
}

#[diagnostic::do_not_recommend]
impl<E: Event> IntoTypedVerdict<E> for () {
    fn verdict(self) -> Verdict<E> {
        Verdict::Continue
    }
}

#[diagnostic::do_not_recommend]
impl<E: Event> IntoTypedVerdict<E> for Verdict<E> {
    fn verdict(self) -> Verdict<E> {
        self
    }
}

impl<E: Event, T: IntoTypedVerdict<E>, Error: Display> IntoTypedVerdict<E> for Result<T, Error> {
    fn verdict(self) -> Verdict<E> {
        match self {
            Ok(value) => value.verdict(),
            Err(error) => Verdict::Halt(Halt::failure(error)),
        }
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

/// What a `tripwire` hook returns.
#[diagnostic::on_unimplemented(
    message = "a `tripwire` hook cannot return `{Self}`",
    label = "expected `Trip`",
    note = "a tripwire can only pass or trip: return `Trip::Pass` or `Trip::trip(reason)`; a hook that edits the request or halts with a verdict is a `before_model` hook, run before the call"
)]
pub trait IntoTrip {
    /// The decision.
    fn into_trip(self) -> crate::verdict::Trip;
}

#[diagnostic::do_not_recommend]
impl IntoTrip for crate::verdict::Trip {
    fn into_trip(self) -> crate::verdict::Trip {
        self
    }
}

/// A `tripwire` hook's future, its return converted to its decision; as [`model_result`].
pub fn trip_result<R: IntoTrip, F: CoreFuture<Output = R>>(
    future: F,
) -> Converted<F, fn(R) -> crate::verdict::Trip> {
    converted(future, R::into_trip)
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
