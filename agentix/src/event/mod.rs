//! The lifecycle events and their contracts: the turn's, and the session's.
//!
//! Each event is a type whose associated types *are* its contract: the value that flows through
//! it, and the payload of each verdict a hook may return there. A verdict the contract forbids has
//! the uninhabited payload [`Forbidden`], so it cannot be constructed, and a `match` on a concrete
//! event's verdict needs no arm for it.
//!
//! | event | value | STOP carries | RETRY | other verdicts | a hook's panic, error or timeout |
//! |---|---|---|---|---|---|
//! | [`Pre`] | the [`Turn`] | — | no | halt; inject | ends the turn (fail closed) |
//! | [`Pre`], parallel | the [`Turn`], shared | — | no | — (returns content) | ends the turn; with `on_error = skip`, the group goes on without it, logged |
//! | [`BeforeModel`] | [`ModelRequest`] | [`AssistantMessage`] (skips the call) | no | halt | ends the turn (fail closed) |
//! | [`Tripwire`] | [`ModelRequest`], shared, beside the first model call | — | no | trip (cancels the call, ends the turn) | trips (fail closed); with `on_error = skip`, the call goes on, logged |
//! | [`WrapModel`] | request → response | — | by calling `next` again | — | fails the model call, and the turn |
//! | [`AfterModel`] | [`AssistantMessage`] | [`AssistantMessage`] (final) | bounded | halt | ends the turn (fail closed) |
//! | [`BeforeTool`] | [`ToolCall`] | — | no | reject, escalate, halt | refuses the call, which never runs; the turn goes on |
//! | [`WrapTool`] | call → result | — | by calling `next` again | — | ends the turn; a tool that ran is logged with what it returned |
//! | [`AfterTool`] | [`ToolResult`] | — | no | halt | ends the turn; the log keeps what ran |
//! | [`ToolError`] | [`ToolResult`] (failed) | — | no | halt | ends the turn; the log keeps what ran |
//! | [`BeforeFinal`] | [`AssistantMessage`] | [`AssistantMessage`] | bounded | halt | ends the turn (fail closed) |
//! | [`Post`] | the [`Outcome`] | — | no | halt | ends the turn with the hook's error; the log keeps what ran |
//!
//! A hook's error is the `Err` of a `#[hook]` function that returns a `Result`; its timeout,
//! `#[hook(EVENT, timeout = "2s")]` (or a hook type's `TIMEOUT`). The turn's error names the
//! event and the hook: [`Error::HookFailed`], [`Error::HookPanicked`], [`Error::HookTimedOut`].
//! A deliberate halt is a verdict, not a failure: it ends the turn at every event.
//!
//! [`Error::HookFailed`]: crate::Error::HookFailed
//! [`Error::HookPanicked`]: crate::Error::HookPanicked
//! [`Error::HookTimedOut`]: crate::Error::HookTimedOut
//!
//! [`Turn`]: crate::Turn
//! [`ModelRequest`]: crate::model::ModelRequest
//! [`AssistantMessage`]: crate::AssistantMessage
//! [`ToolCall`]: crate::ToolCall
//! [`ToolResult`]: crate::ToolResult
//! [`Outcome`]: crate::Outcome
//!
#![doc = include_str!("../../docs/choosing.md")]

use serde::{Deserialize, Serialize};

use crate::message::{AssistantMessage, ToolCall, ToolResult};
use crate::model::ModelRequest;
use crate::task::{FollowUp, Plan, PlanReport, QueuedTask, SessionState, TaskReport};
use crate::verdict::{Escalation, Feedback, Rejection};

/// The payload of a verdict an event's contract forbids. It has no values, so the verdict cannot
/// be built and needs no `match` arm.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Forbidden {}

mod sealed {
    pub trait Sealed {}
}

/// A lifecycle event. Its associated types are its contract; the set of events is closed.
pub trait Event: sealed::Sealed + Send + Sync + 'static {
    /// Which event this is, at run time.
    const KIND: EventKind;
    /// The value that flows through the event's hooks.
    type Value;
    /// What a STOP carries, or [`Forbidden`].
    type Stop: Payload;
    /// What a RETRY carries, or [`Forbidden`].
    type Retry: Payload;
    /// What a REJECT carries, or [`Forbidden`].
    type Reject: Payload;
    /// What an ESCALATE carries, or [`Forbidden`].
    type Escalate: Payload;
    /// What an ENQUEUE carries, or [`Forbidden`].
    type Enqueue: Payload;
}

/// A verdict's payload: one of the contract's value types, or [`Forbidden`].
pub trait Payload: sealed::Sealed + Send + Sync + 'static {
    /// The text a trace shows for it: feedback or a reason.
    fn note(&self) -> Option<&str>;

    /// How many tasks it enqueues: an ENQUEUE's.
    fn tasks(&self) -> usize {
        0
    }
}

impl sealed::Sealed for Forbidden {}
impl Payload for Forbidden {
    fn note(&self) -> Option<&str> {
        match *self {}
    }
}

impl sealed::Sealed for AssistantMessage {}
impl Payload for AssistantMessage {
    fn note(&self) -> Option<&str> {
        None
    }
}

impl sealed::Sealed for Feedback {}
impl Payload for Feedback {
    fn note(&self) -> Option<&str> {
        self.text.as_deref()
    }
}

impl sealed::Sealed for Rejection {}
impl Payload for Rejection {
    fn note(&self) -> Option<&str> {
        Some(&self.reason)
    }
}

impl sealed::Sealed for FollowUp {}
impl Payload for FollowUp {
    fn note(&self) -> Option<&str> {
        None
    }

    fn tasks(&self) -> usize {
        self.tasks.len()
    }
}

impl sealed::Sealed for Escalation {}
impl Payload for Escalation {
    fn note(&self) -> Option<&str> {
        Some(&self.reason)
    }
}

/// Events whose contract has a STOP.
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no STOP",
    label = "STOP is not part of this event's contract",
    note = "STOP is legal only on before_model, after_model and before_final"
)]
pub trait Stoppable: Event<Stop = AssistantMessage> {}

/// Events whose contract allows RETRY.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot RETRY",
    label = "RETRY is not part of this event's contract",
    note = "RETRY is legal only on after_model and before_final; wrap hooks retry by calling `next` again"
)]
pub trait Retryable: Event<Retry = Feedback> {}

/// Events whose contract allows REJECT.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot REJECT",
    label = "REJECT is not part of this event's contract",
    note = "REJECT is legal only on before_tool, task_start, step_start and plan_submit"
)]
pub trait Rejectable: Event<Reject = Rejection> {}

/// Events whose contract allows ESCALATE.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot ESCALATE",
    label = "ESCALATE is not part of this event's contract",
    note = "ESCALATE is legal only on before_tool and step_start"
)]
pub trait Escalatable: Event<Escalate = Escalation> {}

/// Events whose contract allows ENQUEUE.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot ENQUEUE",
    label = "ENQUEUE is not part of this event's contract",
    note = "ENQUEUE is legal only on all_tasks_complete: a session adds follow-up work when its queue is empty"
)]
pub trait Enqueues: Event<Enqueue = FollowUp> {}

/// What a STOP at this event may carry: an [`AssistantMessage`].
///
/// The bound is on the event, so the compiler knows the event before it judges the value, and
/// its message can name both.
#[diagnostic::on_unimplemented(
    message = "a STOP at `{Self}` carries an `AssistantMessage`, not `{V}`",
    label = "not an `AssistantMessage`",
    note = "STOP ends an event's work early with the assistant message to use in place of the model's; build one with `AssistantMessage::text(..)` (a typed agent's hook STOPs with a value of its output type through `Verdict::stop_with(value)`)"
)]
pub trait StopsWith<V>: Event {
    /// The message the STOP carries.
    fn stop_with(value: V) -> AssistantMessage;
}

/// Every event takes an `AssistantMessage` here; whether the event has a STOP at all is
/// [`Stoppable`]'s question, so each mistake gets its own message.
impl<E: Event> StopsWith<AssistantMessage> for E {
    fn stop_with(message: AssistantMessage) -> AssistantMessage {
        message
    }
}

/// The first type of the list.
macro_rules! first {
    ($first:ty $(, $rest:ty)*) => {
        $first
    };
}

/// The list of events, each with its attribute word and its contract, handed to `$apply!`: the
/// events' types here, their names in `kind`.
macro_rules! with_events {
    ($apply:ident) => {
        $apply! {
            /// Once per turn, after the user message, before the first model call. Sequential hooks may
            /// inject content and halt; parallel hooks only return content.
            Pre = "pre", Pre {
                value: crate::Turn, stop: Forbidden, retry: Forbidden, reject: Forbidden, escalate: Forbidden,
            };
            /// Before every model call, with the request about to be sent. STOP skips the call and uses
            /// the message it carries as the model's response.
            BeforeModel = "before_model", BeforeModel {
                value: ModelRequest, stop: AssistantMessage, retry: Forbidden, reject: Forbidden, escalate: Forbidden,
            } impl Stoppable;
            /// Beside the model call of the turn's first step: a check of the request (moderation, a
            /// policy classifier) that runs while the model answers, and can only pass or trip. A
            /// trip cancels the call in flight and ends the turn; nothing of the call is kept.
            Tripwire = "tripwire", Tripwire {
                value: ModelRequest, stop: Forbidden, retry: Forbidden, reject: Forbidden, escalate: Forbidden,
            };
            /// Around every model call; a hook owns the call and may call `next` any number of times.
            WrapModel = "wrap_model", WrapModel {
                value: ModelRequest, stop: Forbidden, retry: Forbidden, reject: Forbidden, escalate: Forbidden,
            };
            /// After every model response. RETRY discards the response and calls the model again; STOP
            /// ends the turn with the message it carries.
            AfterModel = "after_model", AfterModel {
                value: AssistantMessage, stop: AssistantMessage, retry: Feedback, reject: Forbidden, escalate: Forbidden,
            } impl Stoppable impl Retryable;
            /// Before each tool call. REJECT answers the call with the reason instead of running it;
            /// ESCALATE asks the approver.
            BeforeTool = "before_tool", BeforeTool {
                value: ToolCall, stop: Forbidden, retry: Forbidden, reject: Rejection, escalate: Escalation,
            } impl Rejectable impl Escalatable;
            /// Around each tool execution; a hook owns the call and may call `next` any number of times.
            WrapTool = "wrap_tool", WrapTool {
                value: ToolCall, stop: Forbidden, retry: Forbidden, reject: Forbidden, escalate: Forbidden,
            };
            /// After a tool returns successfully.
            AfterTool = "after_tool", AfterTool {
                value: ToolResult, stop: Forbidden, retry: Forbidden, reject: Forbidden, escalate: Forbidden,
            };
            /// When a tool fails (including an unknown tool or invalid arguments); hooks may recover the
            /// result.
            ToolError = "tool_error", ToolError {
                value: ToolResult, stop: Forbidden, retry: Forbidden, reject: Forbidden, escalate: Forbidden,
            };
            /// Before the turn's final answer is committed. RETRY sends it back to the model; STOP
            /// replaces it.
            BeforeFinal = "before_final", BeforeFinal {
                value: AssistantMessage, stop: AssistantMessage, retry: Feedback, reject: Forbidden, escalate: Forbidden,
            } impl Stoppable impl Retryable;
            /// Once at the end of every turn, whatever ended it.
            Post = "post", Post {
                value: crate::Outcome, stop: Forbidden, retry: Forbidden, reject: Forbidden, escalate: Forbidden,
            };

            /// Once per session, when it first runs, before its first task. HALT ends the session
            /// before any task runs.
            SessionStart = "session_start", SessionStart {
                value: SessionState, stop: Forbidden, retry: Forbidden, reject: Forbidden, escalate: Forbidden,
            };
            /// Before each task's turn. REJECT ends the task before it runs (status `rejected`); HALT
            /// ends the session.
            TaskStart = "task_start", TaskStart {
                value: QueuedTask, stop: Forbidden, retry: Forbidden, reject: Rejection, escalate: Forbidden,
            } impl Rejectable;
            /// Before each of a task's steps (a model call and its tool calls), ahead of its
            /// `before_model`; a RETRY within the step does not fire it again. REJECT ends the task
            /// before the call (status `rejected`); ESCALATE asks the approver whether it may go on;
            /// HALT ends the session. `#[hook(turn_start)]` is this event too (an older word for a step),
            /// and a log written before format 2 names it `turn_start`.
            StepStart = "step_start" | "turn_start", StepStart {
                value: crate::Turn, stop: Forbidden, retry: Forbidden, reject: Rejection, escalate: Escalation,
            } impl Rejectable impl Escalatable;
            /// When a plan is submitted — by the model through the `submit_plan` tool, or by
            /// [`Session::submit_plan`](crate::session::Session::submit_plan) — before its tasks are
            /// queued. Hooks may edit it (its tasks, title, `clear_existing`); REJECT drops it.
            PlanSubmit = "plan_submit", PlanSubmit {
                value: Plan, stop: Forbidden, retry: Forbidden, reject: Rejection, escalate: Forbidden,
            } impl Rejectable;
            /// Exactly once per task, whatever ended it, with its terminal status.
            TaskComplete = "task_complete", TaskComplete {
                value: TaskReport, stop: Forbidden, retry: Forbidden, reject: Forbidden, escalate: Forbidden,
            };
            /// Once per plan, when every task of it is terminal.
            PlanComplete = "plan_complete", PlanComplete {
                value: PlanReport, stop: Forbidden, retry: Forbidden, reject: Forbidden, escalate: Forbidden,
            };
            /// When the queue is empty. ENQUEUE adds tasks and the session runs them, up to the
            /// session's `max_follow_ups`.
            AllTasksComplete = "all_tasks_complete", AllTasksComplete {
                value: SessionState, stop: Forbidden, retry: Forbidden, reject: Forbidden, escalate: Forbidden,
                enqueue: FollowUp,
            } impl Enqueues;
            /// Once per session, when it ends: its queue drained, or a session hook halted it.
            SessionEnd = "session_end", SessionEnd {
                value: SessionState, stop: Forbidden, retry: Forbidden, reject: Forbidden, escalate: Forbidden,
            };
        }
    };
}

pub(crate) mod kind;

pub use kind::{EventKind, EventSet};

/// The events' types and their contracts, from the list of events.
macro_rules! event_types {
    ($(
        $(#[$doc:meta])*
        $ty:ident = $word:literal $(| $alias:literal)?, $kind:ident {
            value: $value:ty, stop: $stop:ty, retry: $retry:ty, reject: $reject:ty, escalate: $escalate:ty
            $(, enqueue: $enqueue:ty)? $(,)?
        } $(impl $contract:ident)*;
    )*) => {
        $(
            $(#[$doc])*
            #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
            pub struct $ty;

            impl sealed::Sealed for $ty {}

            impl Event for $ty {
                const KIND: EventKind = EventKind::$kind;
                type Value = $value;
                type Stop = $stop;
                type Retry = $retry;
                type Reject = $reject;
                type Escalate = $escalate;
                type Enqueue = first!($($enqueue,)? Forbidden);
            }

            $(#[diagnostic::do_not_recommend] impl $contract for $ty {})*
        )*
    };
}

with_events!(event_types);
