//! The parameters a hook function may take at each session event, each lent by a trait whose
//! diagnostic names the rule.

use crate::task::{Plan, PlanReport, QueuedTask, SessionState, TaskReport};
use crate::turn::Turn;

/// A parameter that can receive the value of `task_start`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not the value a hook on `task_start` receives",
    label = "expected `&QueuedTask` or `&mut QueuedTask`",
    note = "a hook on `task_start` takes the task first: `&QueuedTask` or `&mut QueuedTask` (to edit its prompt, title or `max_steps`), then the session (`&SessionState`)"
)]
pub trait TaskStartValue<'a> {
    /// Lends the value to the hook.
    fn lend(value: &'a mut QueuedTask) -> Self;
}

#[diagnostic::do_not_recommend]
impl<'a> TaskStartValue<'a> for &'a QueuedTask {
    fn lend(value: &'a mut QueuedTask) -> Self {
        value
    }
}

#[diagnostic::do_not_recommend]
impl<'a> TaskStartValue<'a> for &'a mut QueuedTask {
    fn lend(value: &'a mut QueuedTask) -> Self {
        value
    }
}

/// A parameter that can receive the value of `step_start`: the task's turn.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not the value a hook on `step_start` receives",
    label = "expected `&Turn` or `&mut Turn`",
    note = "a hook on `step_start` takes the task's turn first: `&Turn` or `&mut Turn`, then the session (`&SessionState`)"
)]
pub trait StepStartValue<'a> {
    /// Lends the value to the hook.
    fn lend(value: &'a mut Turn) -> Self;
}

#[diagnostic::do_not_recommend]
impl<'a> StepStartValue<'a> for &'a Turn {
    fn lend(value: &'a mut Turn) -> Self {
        value
    }
}

#[diagnostic::do_not_recommend]
impl<'a> StepStartValue<'a> for &'a mut Turn {
    fn lend(value: &'a mut Turn) -> Self {
        value
    }
}

/// A parameter that can receive the value of `plan_submit`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not the value a hook on `plan_submit` receives",
    label = "expected `&Plan` or `&mut Plan`",
    note = "a hook on `plan_submit` takes the plan first: `&Plan` or `&mut Plan` (to rewrite its tasks, title or `clear_existing`), then the session (`&SessionState`)"
)]
pub trait PlanSubmitValue<'a> {
    /// Lends the value to the hook.
    fn lend(value: &'a mut Plan) -> Self;
}

#[diagnostic::do_not_recommend]
impl<'a> PlanSubmitValue<'a> for &'a Plan {
    fn lend(value: &'a mut Plan) -> Self {
        value
    }
}

#[diagnostic::do_not_recommend]
impl<'a> PlanSubmitValue<'a> for &'a mut Plan {
    fn lend(value: &'a mut Plan) -> Self {
        value
    }
}

/// A parameter that can receive the value of `task_complete`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not the value a hook on `task_complete` receives",
    label = "expected `&TaskReport`",
    note = "a hook on `task_complete` takes the task's report first: `&TaskReport` (the task has ended: its report can be read, not changed), then the session (`&SessionState`)"
)]
pub trait TaskCompleteValue<'a> {
    /// Lends the value to the hook.
    fn lend(value: &'a TaskReport) -> Self;
}

#[diagnostic::do_not_recommend]
impl<'a> TaskCompleteValue<'a> for &'a TaskReport {
    fn lend(value: &'a TaskReport) -> Self {
        value
    }
}

/// A parameter that can receive the value of `plan_complete`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not the value a hook on `plan_complete` receives",
    label = "expected `&PlanReport`",
    note = "a hook on `plan_complete` takes the plan's report first: `&PlanReport` (its counts, read-only), then the session (`&SessionState`)"
)]
pub trait PlanCompleteValue<'a> {
    /// Lends the value to the hook.
    fn lend(value: &'a PlanReport) -> Self;
}

#[diagnostic::do_not_recommend]
impl<'a> PlanCompleteValue<'a> for &'a PlanReport {
    fn lend(value: &'a PlanReport) -> Self {
        value
    }
}

/// A parameter that can receive the session's state.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not how a hook takes the session",
    label = "expected `&SessionState`",
    note = "a session hook reads the session through a shared borrow: `&SessionState`; it changes the session through its verdict (REJECT, ENQUEUE, HALT) or its value"
)]
pub trait SessionParam<'a> {
    /// Lends the session to the hook.
    fn lend(session: &'a SessionState) -> Self;
}

#[diagnostic::do_not_recommend]
impl<'a> SessionParam<'a> for &'a SessionState {
    fn lend(session: &'a SessionState) -> Self {
        session
    }
}
