//! Observers: a read-only view of the loop as it runs, for traces and telemetry.

use std::fmt;
use std::sync::OnceLock;

use crate::Outcome;
use crate::approval::record::{Approval, Question};
use crate::conversation::TurnRef;
use crate::error::{Component, Error};
use crate::event::EventKind;
use crate::message::{ToolCall, ToolResult};
use crate::tool::ToolProgress;
use crate::trace;

/// Watches a turn: every event as it fires and every hook's decision. It cannot change anything.
///
/// `()` observes nothing and costs nothing; a closure `Fn(&Observation)` observes everything.
pub trait Observer: Sync {
    /// Whether the observer wants the model's answer as it streams: then the loop calls
    /// [`Model::stream`](crate::Model::stream) and reports each piece. Either way every hook
    /// runs the same.
    const STREAMS: bool = false;

    /// Whether the observer ignores every observation (`()`): the loop then skips the guard it
    /// keeps around the others.
    const SILENT: bool = false;

    /// Whether the turn is traced, so that what is worth an event on its span is observed even
    /// by an observer that is otherwise [`SILENT`](Observer::SILENT): the loop's own observer
    /// answers; any other is not asked.
    #[doc(hidden)]
    #[inline(always)]
    fn traced(&self) -> bool {
        false
    }

    /// Called for each thing that happens, in order. A panic here is contained: the observer is
    /// not called again in the turn, and the turn ends with
    /// [`Error::ComponentPanicked`] at its next step.
    fn observe(&self, observation: &Observation<'_>);
}

impl Observer for () {
    const SILENT: bool = true;

    #[inline(always)]
    fn observe(&self, _observation: &Observation<'_>) {}
}

/// The turn's observer: the caller's, with its panics contained. The first panic is kept and
/// the observer is not called again. What is worth an event on the turn's (or the session's)
/// span goes there too ([`trace::observed`]).
pub(crate) struct Watched<'o, O> {
    observer: &'o O,
    panicked: OnceLock<String>,
    span: Option<&'o tracing::Span>,
}

impl<'o, O: Observer> Watched<'o, O> {
    pub(crate) fn new(observer: &'o O, span: Option<&'o tracing::Span>) -> Self {
        Watched { observer, panicked: OnceLock::new(), span }
    }

    /// The observer's panic, as the turn's error, if it panicked.
    #[inline]
    pub(crate) fn failed(&self) -> Result<(), Error> {
        if O::SILENT {
            return Ok(());
        }
        match self.panicked.get() {
            Some(message) => Err(Error::ComponentPanicked {
                component: Component::Observer,
                message: message.clone(),
            }),
            None => Ok(()),
        }
    }
}

impl<O: Observer> Observer for Watched<'_, O> {
    const STREAMS: bool = O::STREAMS;
    const SILENT: bool = O::SILENT;

    #[inline(always)]
    fn traced(&self) -> bool {
        self.span.is_some()
    }

    #[inline]
    fn observe(&self, observation: &Observation<'_>) {
        if trace::worth_an_event(observation)
            && let Some(span) = self.span
        {
            trace::observed(span, observation);
        }
        self.forward(observation);
    }
}

impl<O: Observer> Watched<'_, O> {
    /// Passes `observation` on to the caller's observer, its panic contained.
    #[inline]
    fn forward(&self, observation: &Observation<'_>) {
        if O::SILENT || self.panicked.get().is_some() {
            return;
        }
        let observe = || self.observer.observe(observation);
        if let Err(payload) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(observe)) {
            let _ = self.panicked.set(crate::support::panic_message(payload.as_ref()));
        }
    }
}

/// A session run's observer as a task's turn sees it: the turn's own [`Watched`] puts what is
/// worth an event on the turn's span, so this one only passes its observations on (and the
/// run's span does not hear of them twice).
pub(crate) struct Forwarded<'w, 'o, O>(pub(crate) &'w Watched<'o, O>);

impl<O: Observer> Observer for Forwarded<'_, '_, O> {
    const STREAMS: bool = O::STREAMS;
    const SILENT: bool = O::SILENT;

    #[inline]
    fn observe(&self, observation: &Observation<'_>) {
        self.0.forward(observation);
    }
}

impl<F: Fn(&Observation<'_>) + Sync> Observer for F {
    fn observe(&self, observation: &Observation<'_>) {
        self(observation)
    }
}

/// One thing that happened in a turn.
#[derive(Debug)]
#[non_exhaustive]
pub enum Observation<'a> {
    /// An event fires; its hooks run next.
    Event {
        /// The turn.
        turn: TurnRef,
        /// The step within the turn, from 0.
        step: u32,
        /// The event.
        event: EventKind,
    },
    /// A hook returned.
    Hook {
        /// The event.
        event: EventKind,
        /// The hook's name.
        hook: &'a str,
        /// What it decided.
        decision: Decision<'a>,
    },
    /// The approver answered an escalated tool call.
    Approval {
        /// The hook that escalated it.
        hook: &'a str,
        /// The call, as escalated.
        call: &'a ToolCall,
        /// The answer.
        approval: &'a Approval,
    },
    /// The approver answered what a running call's tool asked (an MCP server's elicitation).
    Question {
        /// The call that is running.
        call: &'a ToolCall,
        /// What its tool asked.
        question: &'a Question,
        /// The answer.
        approval: &'a Approval,
    },
    /// A running tool call reported how far it has come.
    ToolProgress {
        /// The call.
        call: &'a ToolCall,
        /// How far.
        progress: &'a ToolProgress,
    },
    /// Text the model streamed (after the stream transformers).
    TextDelta {
        /// The text.
        text: &'a str,
    },
    /// A tool call the model streamed.
    ToolCallStreamed {
        /// The call.
        call: &'a ToolCall,
    },
    /// What was streamed for the current model call, text and tool calls, is withdrawn: a hook
    /// sent the message back (RETRY), a `wrap_model` hook called the model again, the model's
    /// stream broke off, or a `tripwire` hook tripped and cancelled the call.
    Withdrawn {
        /// Where: `after_model`, `before_final`, or `wrap_model`.
        event: EventKind,
        /// The hook that sent the message back; `None` when the model is called again or its
        /// stream broke off.
        hook: Option<&'a str>,
    },
    /// A call of the model failed: the model's error, or a timeout. A `wrap_model` hook that
    /// retries or falls back calls it again next, so each failed attempt is seen, streamed or
    /// not.
    ModelCallFailed {
        /// The step within the turn, from 0.
        step: u32,
        /// Why it failed.
        error: &'a crate::model::ModelError,
    },
    /// Something happened in a sub-agent's turn that one of the turn's tool calls runs
    /// ([`AgentTool`](crate::delegate::AgentTool)), tagged with the agent's name.
    Nested {
        /// The sub-agent's name: the tool's.
        agent: &'a str,
        /// The call that runs it.
        call: &'a ToolCall,
        /// What happened, as the sub-agent's observer would have seen it.
        observation: &'a Observation<'a>,
    },
    /// A tool call finished (after its `after_tool` or `tool_error` hooks).
    ToolFinished {
        /// Its result.
        result: &'a ToolResult,
    },
    /// Something happened in a session, beside its turns.
    Session(&'a crate::task::SessionEvent),
    /// The turn's run ended, its last step committed (with a committer): it ended, `post`
    /// hooks have run — or it stopped to wait for an approval (`Error::AwaitingApproval`,
    /// `post` not yet run), and its resumption ends it again.
    TurnEnded {
        /// The turn.
        turn: TurnRef,
        /// How it ended.
        outcome: &'a Outcome,
    },
}

/// What a hook decided, as observed.
#[derive(Debug)]
#[non_exhaustive]
pub enum Decision<'a> {
    /// Continue.
    Continue,
    /// STOP, with the message it carries.
    Stop,
    /// RETRY, with its feedback.
    Retry {
        /// The feedback, if any.
        feedback: Option<&'a str>,
    },
    /// REJECT, with the reason.
    Reject {
        /// The reason.
        reason: &'a str,
    },
    /// ESCALATE, with the reason.
    Escalate {
        /// The reason.
        reason: &'a str,
    },
    /// ENQUEUE, with how many tasks.
    Enqueue {
        /// The tasks enqueued.
        count: usize,
    },
    /// HALT, with the reason.
    Halt {
        /// The reason.
        reason: &'a str,
    },
    /// A `tripwire` hook tripped, with the reason.
    Tripped {
        /// The reason.
        reason: &'a str,
    },
    /// A parallel `pre` hook returned this many parts.
    Parts {
        /// How many.
        count: usize,
    },
    /// A wrap hook returned, successfully or not.
    Returned {
        /// Whether the call it wrapped succeeded.
        ok: bool,
    },
    /// The hook did not run: its `when` condition did not hold (or, for a typed agent's
    /// `before_final` hook, the answer did not read as its type).
    Skipped,
    /// The hook did not return within its timeout.
    TimedOut {
        /// Its timeout.
        after: std::time::Duration,
    },
    /// The hook panicked.
    Panicked {
        /// The panic's message.
        message: &'a str,
    },
}

impl fmt::Display for Observation<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Observation::Event { turn, step, event } => write!(f, "[{turn}, step {step}] {event}"),
            Observation::Hook { event, hook, decision } => {
                write!(f, "    {event} hook `{hook}`: {decision}")
            }
            Observation::Approval { hook, call, approval } => {
                write!(f, "    approver on `{}` (escalated by `{hook}`): ", call.name)?;
                match approval {
                    Approval::Approve => write!(f, "approve"),
                    Approval::Edit(edited) => {
                        write!(f, "edit to {}({})", edited.name, edited.arguments)
                    }
                    Approval::Suspend => write!(f, "suspend (to wait for a person)"),
                    Approval::Reject(reason) => write!(f, "reject ({reason})"),
                }
            }
            Observation::Question { call, question, approval } => {
                write!(
                    f,
                    "    approver on {} asking during `{}`: {:?} -> ",
                    question.asked_by, call.name, question.message
                )?;
                match approval {
                    Approval::Approve => write!(f, "accept"),
                    Approval::Edit(edited) => write!(f, "answer {}", edited.arguments),
                    Approval::Suspend => write!(f, "cancel"),
                    Approval::Reject(reason) => write!(f, "decline ({reason})"),
                }
            }
            Observation::ToolProgress { call, progress } => {
                write!(f, "      progress of `{}`: {}", call.name, progress.progress)?;
                if let Some(total) = progress.total {
                    write!(f, "/{total}")?;
                }
                if let Some(message) = &progress.message {
                    write!(f, " ({message})")?;
                }
                Ok(())
            }
            Observation::TextDelta { text } => write!(f, "      text: {text:?}"),
            Observation::ToolCallStreamed { call } => {
                write!(f, "      tool call: {}({})", call.name, call.arguments)
            }
            Observation::Withdrawn { event: EventKind::Tripwire, hook: Some(hook) } => {
                write!(f, "      withdrawn: the text so far (tripwire hook `{hook}` tripped)")
            }
            Observation::Withdrawn { event, hook: Some(hook) } => {
                write!(
                    f,
                    "      withdrawn: the text so far ({event} hook `{hook}` asked for a retry)"
                )
            }
            Observation::Withdrawn { event, hook: None } => {
                write!(
                    f,
                    "      withdrawn: the text so far ({event}: called again, or the stream broke off)"
                )
            }
            Observation::ModelCallFailed { error, .. } => {
                write!(f, "      model call failed: {error}")
            }
            Observation::ToolFinished { result } => {
                write!(f, "      tool result: {}", result.output)
            }
            Observation::TurnEnded { turn, outcome: Ok(message) } => {
                write!(f, "[{turn}] completed: {:?}", message.joined_text())
            }
            Observation::TurnEnded { turn, outcome: Err(error) } => {
                write!(f, "[{turn}] ended: {error}")
            }
            Observation::Session(event) => write!(f, "{event}"),
            Observation::Nested { agent, observation, .. } => {
                write!(f, "  {agent} | {}", observation.to_string().trim_start())
            }
        }
    }
}

impl fmt::Display for Decision<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Decision::Continue => f.write_str("continue"),
            Decision::Stop => f.write_str("stop"),
            Decision::Retry { feedback: Some(feedback) } => write!(f, "retry ({feedback})"),
            Decision::Retry { feedback: None } => f.write_str("retry"),
            Decision::Reject { reason } => write!(f, "reject ({reason})"),
            Decision::Escalate { reason } => write!(f, "escalate ({reason})"),
            Decision::Enqueue { count } => write!(f, "enqueue ({count} task(s))"),
            Decision::Halt { reason } => write!(f, "halt ({reason})"),
            Decision::Tripped { reason } => write!(f, "tripped ({reason})"),
            Decision::Parts { count } => write!(f, "{count} part(s)"),
            Decision::Returned { ok: true } => f.write_str("returned"),
            Decision::Returned { ok: false } => f.write_str("returned an error"),
            Decision::Skipped => f.write_str("skipped (its `when` condition does not hold)"),
            Decision::Panicked { message } => write!(f, "panicked ({message})"),
            Decision::TimedOut { after } => write!(f, "timed out (after {after:?})"),
        }
    }
}
