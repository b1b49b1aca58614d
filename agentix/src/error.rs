//! The one error type of a turn.

use std::time::Duration;

use crate::approval::record::PendingApproval;
use crate::conversation::TurnRef;
use crate::event::kind::EventKind;
use crate::model::request::ModelError;
use crate::verdict::payload::Halt;

/// Why a turn did not complete. Every error a hook causes names the hook and its event; the
/// conversation's log stays valid and usable for the next turn.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A hook halted the turn (at a session's event, the session).
    #[error(
        "{event} hook `{hook}` halted the {}: {reason}",
        if event.is_session() { "session" } else { "turn" }
    )]
    Halted {
        /// Where.
        event: EventKind,
        /// Which hook.
        hook: &'static str,
        /// Why.
        reason: String,
    },
    /// A `tripwire` hook tripped on the turn's input: the model call it ran beside was
    /// cancelled, and nothing of it was kept.
    #[error("tripwire hook `{hook}` tripped: {reason}")]
    Tripped {
        /// Which hook.
        hook: &'static str,
        /// Why.
        reason: String,
    },
    /// A session hook rejected the task at `task_start` or `step_start`, or the approver turned
    /// down a `step_start` escalation: the task ends `rejected`.
    #[error("{event} hook `{hook}` rejected the task: {reason}")]
    Rejected {
        /// Where.
        event: EventKind,
        /// Which hook.
        hook: &'static str,
        /// Why.
        reason: String,
    },
    /// An `all_tasks_complete` hook enqueued follow-up work once more than the session's
    /// `max_follow_ups` allows: the session ends.
    #[error(
        "all_tasks_complete hook `{hook}` enqueued follow-up work beyond the limit of {limit} per session"
    )]
    FollowUpLimit {
        /// The hook.
        hook: &'static str,
        /// The session's `max_follow_ups`.
        limit: u32,
    },
    /// The turn waits for a person's answer to an escalated tool call: the approver suspended
    /// it ([`Approval::Suspend`](crate::approval::Approval::Suspend)), and the log ends with the step as
    /// it stood. Not a failure: [`Agent::resume`](crate::Agent::resume) goes on from the call.
    /// A new turn on the conversation meanwhile is refused with this error too.
    #[error(
        "{turn} waits for approval of the call `{}` ({}), escalated by `{}`: {}",
        pending.call.name, pending.call.id, pending.hook, pending.reason
    )]
    AwaitingApproval {
        /// The turn.
        turn: TurnRef,
        /// The call, who escalated it and why.
        pending: Box<PendingApproval>,
    },
    /// The journal could not run or replay one of the turn's effects — a replay that diverged
    /// from what it recorded names the step: the turn stops there, and nothing of that step ran.
    #[error("{0}")]
    Journal(JournalError),
    /// [`Agent::resume`](crate::Agent::resume) was asked to go on where nothing waits: the
    /// conversation's log does not end with a suspended turn, or the answer was to suspend
    /// again.
    #[error("nothing to resume: {reason}")]
    CannotResume {
        /// Why.
        reason: String,
    },
    /// The session has ended (`session_end` fired); it runs no more tasks. A new session over
    /// its conversation does.
    #[error("the session has ended; it runs no more tasks")]
    SessionEnded,
    /// A hook returned an error.
    #[error("{event} hook `{hook}` failed: {message}")]
    HookFailed {
        /// Where.
        event: EventKind,
        /// Which hook.
        hook: &'static str,
        /// Its error, displayed.
        message: String,
    },
    /// A hook panicked.
    #[error("{event} hook `{hook}` panicked: {message}")]
    HookPanicked {
        /// Where.
        event: EventKind,
        /// Which hook.
        hook: &'static str,
        /// The panic's message.
        message: String,
    },
    /// A hook did not return within its `timeout`.
    #[error("{event} hook `{hook}` timed out after {after:?}")]
    HookTimedOut {
        /// Where.
        event: EventKind,
        /// Which hook.
        hook: &'static str,
        /// Its timeout.
        after: Duration,
    },
    /// The turn did not end within the conversation's `turn_timeout`; what had run is in the
    /// log.
    #[error("the turn did not end within its timeout of {after:?}")]
    TurnTimedOut {
        /// The conversation's `turn_timeout`.
        after: Duration,
    },
    /// A hook asked for one RETRY more than the conversation's `max_retries` allows.
    #[error("{event} hook `{hook}` asked for a retry beyond the limit of {limit} per turn")]
    RetryLimit {
        /// Where.
        event: EventKind,
        /// The hook whose retry went over the limit.
        hook: &'static str,
        /// The conversation's `max_retries`.
        limit: u32,
    },
    /// The model's final answer did not read as the agent's output type (or its validators
    /// refused it) after the conversation's `max_retries` sends back: the last answer as the
    /// model wrote it, and why it was refused.
    #[error("the answer did not read as the agent's output type: {error} (it said: {raw})")]
    InvalidAnswer {
        /// The model's last answer, as it wrote it.
        raw: String,
        /// Why it was refused: a JSON or schema error, or a validator's.
        error: String,
    },
    /// The model kept calling tools past the conversation's `max_steps` (a session's task: its
    /// `max_steps`).
    #[error("the turn reached its limit of {limit} steps without a final answer")]
    StepLimit {
        /// The conversation's `max_steps`, or the task's `max_steps`.
        limit: u32,
    },
    /// A hook ended the turn with a message that calls tools; a final answer cannot.
    #[error("{event} hook `{hook}` ended the turn with a message that calls tools")]
    FinalCallsTools {
        /// Where.
        event: EventKind,
        /// Which hook.
        hook: &'static str,
    },
    /// What hooks injected into the turn is over the conversation's `injection_reserve`.
    /// Nothing is truncated, and the model is not called.
    #[error(
        "hook `{hook}` injected content past the injection reserve: {size} tokens injected, {reserve} reserved"
    )]
    InjectionOverflow {
        /// The hook whose content went over the reserve.
        hook: &'static str,
        /// The conversation's `injection_reserve`, in tokens.
        reserve: usize,
        /// What the turn had injected by then, in tokens.
        size: usize,
    },
    /// The request does not fit the context budget even with every earlier turn and every step
    /// but the latest compacted away.
    #[error("the request needs {size} tokens, over the {budget} the context budget leaves it")]
    ContextOverflow {
        /// `context_budget - injection_reserve`, in tokens.
        budget: usize,
        /// What the smallest request would need.
        size: usize,
    },
    /// The model call failed.
    #[error("model call failed: {0}")]
    Model(#[from] ModelError),
    /// A step could not be committed to the turn's store
    /// ([`TurnRun::commit`](crate::TurnRun::commit)); the turn ended there.
    #[error("the step could not be committed: {0}")]
    Commit(CommitError),
    /// A component of the agent other than a hook panicked: the turn ended there.
    #[error("the {component} panicked: {message}")]
    ComponentPanicked {
        /// Which component.
        component: Component,
        /// The panic's message.
        message: String,
    },
    /// The message given to open a turn is not a plain user message: its role is not the
    /// user's, or it carries tool calls or results. No turn was opened; the log is untouched.
    #[error("the message cannot open a turn: {reason}")]
    InvalidMessage {
        /// What is wrong with it.
        reason: String,
    },
    /// The turn's final answer says nothing (no text, no tool calls); a later request holding
    /// it would be refused by most providers. [`Config::allow_empty_answers`] lets it through.
    ///
    /// [`Config::allow_empty_answers`]: crate::Config::allow_empty_answers
    #[error("the final answer is empty: no text and no tool calls")]
    EmptyAnswer,
}

/// A part of an agent, besides its hooks, that runs user code inside a turn. A panic in one ends
/// the turn with [`Error::ComponentPanicked`] naming it; a panicking tool, model or approver
/// fails its call instead (a failed tool result, a model error, a rejection).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Component {
    /// The [`Summarizer`](crate::context::Summarizer).
    Summarizer,
    /// The [`TokenCounter`](crate::context::TokenCounter).
    TokenCounter,
    /// The [`Observer`](crate::Observer); it is not called again in the turn (in a session,
    /// the session: it stops).
    Observer,
    /// The [`AuditSink`](crate::context::AuditSink); the request it was given is not sent.
    AuditSink,
    /// A [`StreamTransformer`](crate::transform::StreamTransformer).
    Transformer,
    /// The [`Commit`](crate::durable::Commit) a turn commits its steps through.
    Committer,
    /// agentix's own loop: a bug in agentix, not in any code of yours.
    Loop,
}

impl std::fmt::Display for Component {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Component::Summarizer => "summarizer",
            Component::TokenCounter => "token counter",
            Component::Observer => "observer",
            Component::AuditSink => "audit sink",
            Component::Transformer => "stream transformer",
            Component::Committer => "committer",
            Component::Loop => "agent loop (a bug in agentix)",
        })
    }
}

/// Why a step could not be committed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct CommitError {
    /// Whether another writer committed to the conversation first (its version moved): the
    /// turn lost a race, and nothing of its step was written.
    pub conflict: bool,
    /// What the store said.
    pub message: String,
}

/// Why a journaled step could not be run or replayed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum JournalError {
    /// The turn run again asked for another step than the one the journal recorded at that
    /// place: a hook decided otherwise this time (its code changed, or it is not deterministic).
    /// Nothing was run.
    #[error("the replay diverged: it asked for {asked}, where the journal recorded {recorded}")]
    Diverged {
        /// The step recorded at that place.
        recorded: String,
        /// The step asked for.
        asked: String,
    },
    /// The journal could not record or read the step.
    #[error("the journal failed at {step}: {message}")]
    Failed {
        /// The step.
        step: String,
        /// Why.
        message: String,
    },
}

/// How a hook failed, besides an error it returned: what the event's failure policy answers
/// for, as it does for an error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HookFailure {
    /// It panicked, with this message.
    Panicked {
        /// The panic's message.
        message: String,
    },
    /// It did not return within its `timeout`.
    TimedOut {
        /// The timeout.
        after: Duration,
    },
}

impl HookFailure {
    /// The turn's error for this failure of `hook`, at `event`.
    pub(crate) fn error(self, event: EventKind, hook: &'static str) -> Error {
        match self {
            HookFailure::Panicked { message } => Error::HookPanicked { event, hook, message },
            HookFailure::TimedOut { after } => Error::HookTimedOut { event, hook, after },
        }
    }

    /// What the failure says, for a call it refused or did not run.
    pub(crate) fn describe(&self, event: EventKind, hook: &'static str) -> String {
        match self {
            HookFailure::Panicked { message } => {
                format!("the {event} hook `{hook}` panicked: {message}")
            }
            HookFailure::TimedOut { after } => {
                format!("the {event} hook `{hook}` timed out after {after:?}")
            }
        }
    }
}

#[cold]
pub(crate) fn halted(event: EventKind, hook: &'static str, halt: Halt) -> Error {
    if halt.failed {
        Error::HookFailed { event, hook, message: halt.reason }
    } else {
        Error::Halted { event, hook, reason: halt.reason }
    }
}
