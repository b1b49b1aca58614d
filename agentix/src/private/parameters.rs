//! The parameters a hook function may take at each event, each lent by a trait whose
//! diagnostic names the rule.

use crate::Outcome;
use crate::message::{AssistantMessage, ToolCall, ToolResult};
use crate::model::ModelRequest;
use crate::turn::Turn;

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

/// A parameter that can receive the value of `tripwire`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not the value a hook on `tripwire` receives",
    label = "expected `&ModelRequest`",
    note = "a tripwire reads the request beside the model call, which is already on its way: it takes `&ModelRequest` and cannot edit it (a hook that edits the request is a `before_model` hook)"
)]
pub trait TripwireValue<'a> {
    /// Lends the value to the hook.
    fn lend(value: &'a ModelRequest) -> Self;
}

#[diagnostic::do_not_recommend]
impl<'a> TripwireValue<'a> for &'a ModelRequest {
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
    note = "a hook on `before_final` takes its value first: `&AssistantMessage` or `&mut AssistantMessage`, or a typed agent's answer by reference: `&T` or `&mut T` of its output type"
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

/// A parameter that can receive the turn of a `tripwire` hook: a shared borrow only.
#[diagnostic::on_unimplemented(
    message = "a `tripwire` hook cannot take `{Self}`",
    label = "expected `&Turn`",
    note = "a tripwire runs beside the model call and can only pass or trip: it reads the turn through a shared borrow, and cannot inject (take `&Turn`)"
)]
pub trait TripwireTurnParam<'a> {
    /// Lends the turn to the hook.
    fn lend(turn: &'a Turn) -> Self;
}

#[diagnostic::do_not_recommend]
impl<'a> TripwireTurnParam<'a> for &'a Turn {
    fn lend(turn: &'a Turn) -> Self {
        turn
    }
}
