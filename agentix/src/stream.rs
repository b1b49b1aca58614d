//! The streaming run: the same loop, its observations delivered as a stream of typed events.

use std::collections::VecDeque;
use std::sync::Mutex;

use crate::Outcome;
use crate::conversation::TurnRef;
use crate::event::EventKind;
use crate::message::{ToolCall, ToolResult};
use crate::observe::{Decision, Observation, Observer};
use crate::support::lock;
use crate::tool::ToolProgress;

/// What a streaming run yields, in order. The turn's hooks run exactly as in a non-streaming
/// run; these events report them and the model's text as it arrives.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum StreamEvent {
    /// An event fires (a step starts at its `before_model`).
    Event {
        /// The turn.
        turn: TurnRef,
        /// The step, from 0.
        step: u32,
        /// The event.
        event: EventKind,
    },
    /// A hook decided: `decision` is its verdict as text (`continue`, `retry (…)`, `halt (…)`…).
    Hook {
        /// The event.
        event: EventKind,
        /// The hook.
        hook: String,
        /// What it decided.
        decision: String,
        /// Whether it ended its event's chain (anything but continue, parts, or a wrap's return).
        decisive: bool,
    },
    /// More of the model's text, after the stream transformers.
    Text(String),
    /// The model asked for a tool call.
    ToolCall(ToolCall),
    /// Discard what was streamed for the current model call, text and tool calls: a hook sent
    /// the message back (RETRY), a `wrap_model` hook called the model again, the model's
    /// stream broke off, or a `tripwire` hook tripped and cancelled the call.
    Withdrawn {
        /// Where: `after_model`, `before_final`, or `wrap_model`.
        event: EventKind,
        /// The hook that sent the message back; `None` when the model is called again or its
        /// stream broke off.
        hook: Option<String>,
    },
    /// A call of the model failed, as
    /// [`Observation::ModelCallFailed`](crate::observe::Observation::ModelCallFailed) says: a
    /// `wrap_model` hook may call it again next.
    ModelCallFailed {
        /// The step, from 0.
        step: u32,
        /// Why it failed.
        error: crate::model::ModelError,
    },
    /// A running tool call reported how far it has come.
    ToolProgress {
        /// The call's id.
        call: String,
        /// The tool.
        name: String,
        /// How far.
        progress: ToolProgress,
    },
    /// A tool call finished, with the result the model will read.
    ToolResult(ToolResult),
    /// What a sub-agent's turn, run by one of the turn's tool calls, streamed: the event as
    /// its own stream would show it, tagged with the agent's name (the tool's).
    Nested {
        /// The sub-agent's name.
        agent: String,
        /// The id of the call that runs it.
        call: String,
        /// The event.
        event: Box<StreamEvent>,
    },
    /// The turn's run ended, as [`Observation::TurnEnded`](crate::observe::Observation::TurnEnded)
    /// says (after its last commit; `post` has run unless the turn waits for an approval); a
    /// turn refused before it opened finishes with its error. The last event of a turn's
    /// stream; in a session's stream, the session's events follow each task's.
    Finished(Outcome),
    /// Something happened in a session, beside its turns: a session's streamed run yields
    /// these between its tasks' turns, and ends with [`SessionEvent::RunEnded`].
    ///
    /// [`SessionEvent::RunEnded`]: crate::session::SessionEvent::RunEnded
    Session(crate::task::SessionEvent),
}

/// A stream of what `$queue` (a fresh [`Queue`], bound to that name, showing each observation
/// to the run's own observer `$also` too) collects while the future `$run` (which observes into
/// it) runs, ending when the future does: how a turn and a session stream the same loop they
/// run. A turn refused before it opened (an invalid message,
/// a conversation waiting for an approval) reports no end: its stream still ends with
/// [`StreamEvent::Finished`], from the future's outcome.
macro_rules! stream_while {
    (|$queue:ident| $run:expr) => {
        stream_while!(&(), |$queue| $run)
    };
    ($also:expr, |$queue:ident| $run:expr) => {
        async_stream::stream! {
            let $queue = $crate::stream::Queue::new($also);
            let mut run = std::pin::pin!($run);
            let mut reported = false;
            loop {
                let done = std::future::poll_fn(|cx| match run.as_mut().poll(cx) {
                    std::task::Poll::Ready(output) => std::task::Poll::Ready(Some(output)),
                    std::task::Poll::Pending if !$queue.is_empty() => std::task::Poll::Ready(None),
                    std::task::Poll::Pending => std::task::Poll::Pending,
                })
                .await;
                while let Some(event) = $queue.pop() {
                    reported |= matches!(event, $crate::stream::StreamEvent::Finished(_));
                    yield event;
                }
                if let Some(output) = done {
                    if !reported && let Some(last) = $crate::stream::Ending::unreported(output) {
                        yield last;
                    }
                    break;
                }
            }
        }
    };
}

/// What a streamed run's output says at its end if the run did not report it.
pub(crate) trait Ending {
    fn unreported(self) -> Option<StreamEvent>;
}

/// A turn's outcome: its `Finished`.
impl Ending for Outcome {
    fn unreported(self) -> Option<StreamEvent> {
        Some(StreamEvent::Finished(self))
    }
}

/// A session's run always reports its end (`RunEnded`).
impl Ending for Result<Vec<crate::task::TaskReport>, crate::Error> {
    fn unreported(self) -> Option<StreamEvent> {
        None
    }
}

/// Collects a turn's observations for the stream to hand out, and shows each to `also`, the
/// run's own observer, once it is queued.
pub(crate) struct Queue<'o, O> {
    events: Mutex<VecDeque<StreamEvent>>,
    also: &'o O,
}

impl<O: Observer> Observer for Queue<'_, O> {
    const STREAMS: bool = true;

    fn observe(&self, observation: &Observation<'_>) {
        self.queue(observation);
        self.also.observe(observation);
    }
}

impl<'o, O> Queue<'o, O> {
    pub(crate) fn new(also: &'o O) -> Self {
        Queue { events: Mutex::default(), also }
    }

    pub(crate) fn pop(&self) -> Option<StreamEvent> {
        lock(&self.events).pop_front()
    }

    pub(crate) fn is_empty(&self) -> bool {
        lock(&self.events).is_empty()
    }

    fn queue(&self, observation: &Observation<'_>) {
        if let Some(event) = stream_event(observation) {
            lock(&self.events).push_back(event);
        }
    }
}

/// What the stream shows of an observation, if anything.
fn stream_event(observation: &Observation<'_>) -> Option<StreamEvent> {
    Some(match observation {
        Observation::Event { turn, step, event } => {
            StreamEvent::Event { turn: *turn, step: *step, event: *event }
        }
        Observation::Hook { event, hook, decision } => StreamEvent::Hook {
            event: *event,
            hook: (*hook).to_owned(),
            decision: decision.to_string(),
            decisive: !matches!(
                decision,
                Decision::Continue
                    | Decision::Skipped
                    | Decision::Parts { .. }
                    | Decision::Returned { .. }
            ),
        },
        Observation::TextDelta { text } => StreamEvent::Text((*text).to_owned()),
        Observation::ToolCallStreamed { call } => StreamEvent::ToolCall((*call).clone()),
        Observation::Withdrawn { event, hook } => {
            StreamEvent::Withdrawn { event: *event, hook: hook.map(str::to_owned) }
        }
        Observation::ModelCallFailed { step, error } => {
            StreamEvent::ModelCallFailed { step: *step, error: (*error).clone() }
        }
        Observation::ToolFinished { result } => StreamEvent::ToolResult((*result).clone()),
        Observation::TurnEnded { outcome, .. } => StreamEvent::Finished((*outcome).clone()),
        Observation::Session(event) => StreamEvent::Session((*event).clone()),
        Observation::ToolProgress { call, progress } => StreamEvent::ToolProgress {
            call: call.id.clone(),
            name: call.name.clone(),
            progress: (*progress).clone(),
        },
        Observation::Nested { agent, call, observation } => StreamEvent::Nested {
            agent: (*agent).to_owned(),
            call: call.id.clone(),
            event: Box::new(stream_event(observation)?),
        },
        Observation::Approval { .. } | Observation::Question { .. } => return None,
    })
}
