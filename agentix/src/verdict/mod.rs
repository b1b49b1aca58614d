//! Verdicts: what a hook decides about the flow.

use std::fmt;

use crate::event::{Enqueues, Escalatable, Event, Rejectable, Retryable, Stoppable, StopsWith};
use crate::message::AssistantMessage;
use crate::task::{FollowUp, Task};

pub(crate) mod payload;

pub use payload::{Escalation, Feedback, Halt, Rejection};

/// A hook's decision at event `E`. The payload types come from `E`'s contract, so a verdict the
/// contract forbids cannot be built: `Verdict::<AfterTool>::retry(..)` does not compile.
///
/// The first verdict other than [`Continue`](Verdict::Continue) ends the event's chain of hooks.
#[must_use = "a verdict decides the flow of the turn; return it"]
pub enum Verdict<E: Event> {
    /// Go on: to the next hook, then to the next stage of the turn.
    Continue,
    /// End the event's work early with the contract's value.
    Stop(E::Stop),
    /// Discard the model's message and call the model again, bounded per turn.
    Retry(E::Retry),
    /// Answer the tool call with a reason instead of running it.
    Reject(E::Reject),
    /// Ask the agent's approver whether the tool call (or the task's next step) may go on.
    Escalate(E::Escalate),
    /// Add tasks to the session's queue: follow-up work once the queue is empty.
    Enqueue(E::Enqueue),
    /// End the turn (at a session's events, the session); the reason reaches the caller and
    /// the log.
    Halt(Halt),
}

impl<E: Event> Verdict<E> {
    /// STOP with the contract's value (an [`AssistantMessage`]).
    // One line: a compile error quotes the bound it names, and a short quote reads best.
    #[rustfmt::skip]
    pub fn stop<V>(value: V) -> Self where E: Stoppable + StopsWith<V> {
        Verdict::Stop(E::stop_with(value))
    }

    /// STOP with a replacement answer of a typed agent's output type
    /// ([`AgentBuilder::output`](crate::AgentBuilder::output)), carried as the message's JSON;
    /// the agent reads it back, and checks it with its validators, as any answer (one they
    /// refuse goes back to the model). For a typed agent only: a text agent's STOP carries the
    /// message itself, `Verdict::stop(AssistantMessage::text(..))` — this would answer with
    /// JSON (a `String`, quoted). A value that does not serialize (a map whose keys are
    /// neither strings nor numbers) halts the turn instead, saying so.
    pub fn stop_with<T: crate::model::OutputType>(answer: T) -> Self
    where
        E: Stoppable,
    {
        match serde_json::to_string(&answer) {
            Ok(json) => Verdict::Stop(AssistantMessage::text(json)),
            Err(error) => Verdict::Halt(Halt::failure(format!(
                "the STOP's answer did not serialize: {error}"
            ))),
        }
    }

    /// RETRY, telling the model why its message was rejected.
    pub fn retry(feedback: impl Into<String>) -> Self
    where
        E: Retryable,
    {
        Verdict::Retry(Feedback::new(feedback))
    }

    /// RETRY without feedback: the model is asked the same thing again.
    pub fn retry_silently() -> Self
    where
        E: Retryable,
    {
        Verdict::Retry(Feedback::default())
    }

    /// REJECT the tool call; the model reads the reason as the call's result.
    pub fn reject(reason: impl Into<String>) -> Self
    where
        E: Rejectable,
    {
        Verdict::Reject(Rejection { reason: reason.into() })
    }

    /// ESCALATE the tool call to the approver, saying why.
    pub fn escalate(reason: impl Into<String>) -> Self
    where
        E: Escalatable,
    {
        Verdict::Escalate(Escalation { reason: reason.into() })
    }

    /// ENQUEUE follow-up tasks; the session runs them in order.
    pub fn enqueue<I>(tasks: I) -> Self
    where
        E: Enqueues,
        I: IntoIterator,
        I::Item: Into<Task>,
    {
        Verdict::Enqueue(FollowUp { tasks: tasks.into_iter().map(Into::into).collect() })
    }

    /// HALT the turn.
    pub fn halt(reason: impl Into<String>) -> Self {
        Verdict::Halt(Halt::new(reason))
    }

    /// Whether this is [`Verdict::Continue`].
    pub fn is_continue(&self) -> bool {
        matches!(self, Verdict::Continue)
    }
}

impl<E: Event> fmt::Debug for Verdict<E>
where
    E::Stop: fmt::Debug,
    E::Retry: fmt::Debug,
    E::Reject: fmt::Debug,
    E::Escalate: fmt::Debug,
    E::Enqueue: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Verdict::Continue => f.write_str("Continue"),
            Verdict::Stop(value) => f.debug_tuple("Stop").field(value).finish(),
            Verdict::Retry(feedback) => f.debug_tuple("Retry").field(feedback).finish(),
            Verdict::Reject(rejection) => f.debug_tuple("Reject").field(rejection).finish(),
            Verdict::Escalate(escalation) => f.debug_tuple("Escalate").field(escalation).finish(),
            Verdict::Enqueue(follow_up) => f.debug_tuple("Enqueue").field(follow_up).finish(),
            Verdict::Halt(halt) => f.debug_tuple("Halt").field(halt).finish(),
        }
    }
}

/// What a `tripwire` hook decides of the turn's input: it passes, or it trips — the model call
/// it ran beside is cancelled and the turn ends with [`Error::Tripped`](crate::Error::Tripped).
/// A tripwire has no other say: it cannot edit the request or inject content.
#[derive(Clone, Debug, PartialEq, Eq)]
#[must_use = "a tripwire's decision: return it"]
pub enum Trip {
    /// The input may go on to the model.
    Pass,
    /// The input must not: why.
    Tripped(String),
}

impl Trip {
    /// Trips, saying why.
    // `Trip::trip(reason)` reads as the decision it is, beside `Trip::Pass`.
    #[allow(clippy::self_named_constructors)]
    pub fn trip(reason: impl Into<String>) -> Self {
        Trip::Tripped(reason.into())
    }
}
