//! The journal: every effect of a turn — each model call, each tool call, each approval, each
//! summary, the tools a changing set offered — passes through a [`Journal`] as a named step, so
//! that a turn run again after a crash replays what completed instead of doing it twice.

use std::fmt;
use std::future::Future;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::approval::{Approval, PendingApproval};
use crate::conversation::TurnRef;
pub use crate::error::JournalError;

/// One effect of a turn, named for good: what a journal records it as and replays it by. The
/// same turn run again asks for the same steps in the same order, as long as its hooks decide
/// the same way; a replay that asks for another is a [`JournalError::Diverged`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum JournalStep<'a> {
    /// A call of the model: the turn, its step, the RETRY verdicts acted on so far, and which
    /// call of the step's `wrap_model` chain (from 1: a hook that calls again makes a second).
    Model {
        /// The turn.
        turn: TurnRef,
        /// The step, from 0.
        step: u32,
        /// RETRY verdicts the turn acted on before this call.
        retry: u32,
        /// Which call within the `wrap_model` chain, from 1.
        call: u32,
    },
    /// A tool's call: the turn and step, the tool, its call's id, and which attempt within the
    /// `wrap_tool` chain (from 1).
    Tool {
        /// The turn.
        turn: TurnRef,
        /// The step, from 0.
        step: u32,
        /// The tool.
        name: &'a str,
        /// The call's id.
        call: &'a str,
        /// Which attempt, from 1.
        attempt: u32,
    },
    /// The tools a step offered the model, from a tool set whose list can change (an MCP
    /// server's): a replay offers the list recorded, however the server changed since.
    Tools {
        /// The turn.
        turn: TurnRef,
        /// The step, from 0.
        step: u32,
    },
    /// The approver's answer to an escalated call.
    Approval {
        /// The turn.
        turn: TurnRef,
        /// The step, from 0.
        step: u32,
        /// The tool.
        name: &'a str,
        /// The call's id.
        call: &'a str,
    },
    /// The user message that opened the turn: a replay for another message diverges here.
    Opened {
        /// The turn.
        turn: TurnRef,
    },
    /// The answer a suspended turn resumed with: a replay with another answer diverges here.
    Resumed {
        /// The turn.
        turn: TurnRef,
        /// The call that waited.
        call: &'a str,
    },
    /// A summary the summarizer made of the entries before `through`.
    Summary {
        /// The turn whose request needed the room.
        turn: TurnRef,
        /// Where the summarized entries end.
        through: usize,
    },
    /// A step of a sub-agent's turn, which one of the turn's tool calls runs
    /// ([`AgentTool`](crate::delegate::AgentTool)): journaled inside its parent's turn, so a crash
    /// mid-child replays what the child completed.
    Nested {
        /// The parent's turn.
        turn: TurnRef,
        /// The sub-agent: the tool's name.
        agent: &'a str,
        /// The parent's call that runs it.
        call: &'a str,
        /// The child's own step.
        step: &'a JournalStep<'a>,
    },
}

impl JournalStep<'_> {
    /// The turn the step belongs to (a sub-agent's step: its parent's).
    pub fn turn(&self) -> TurnRef {
        match *self {
            JournalStep::Nested { turn, .. } => turn,
            JournalStep::Model { turn, .. }
            | JournalStep::Tool { turn, .. }
            | JournalStep::Tools { turn, .. }
            | JournalStep::Approval { turn, .. }
            | JournalStep::Opened { turn }
            | JournalStep::Resumed { turn, .. }
            | JournalStep::Summary { turn, .. } => turn,
        }
    }
}

impl JournalStep<'_> {
    /// Which run of steps within its turn the step belongs to, as the tool calls it is made
    /// in: none for the turn's own steps (its model calls, approvals, summaries), `[call]` for
    /// the steps a tool call makes (its attempts; a sub-agent's steps inside it), `[call,
    /// inner]` for those of a call the sub-agent's own step makes. The calls of one step may run
    /// together, so their steps interleave as they finish: within a lane they come in one
    /// order on every run.
    pub fn lane(&self) -> Vec<&str> {
        match *self {
            JournalStep::Tool { call, .. } => vec![call],
            JournalStep::Nested { call, step, .. } => {
                let mut lane = vec![call];
                lane.extend(step.lane());
                lane
            }
            JournalStep::Model { .. }
            | JournalStep::Tools { .. }
            | JournalStep::Approval { .. }
            | JournalStep::Opened { .. }
            | JournalStep::Resumed { .. }
            | JournalStep::Summary { .. } => Vec::new(),
        }
    }
}

impl fmt::Display for JournalStep<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            JournalStep::Model { turn, step, retry, call } => {
                write!(f, "model ({turn}, step {step}")?;
                if retry > 0 {
                    write!(f, ", retry {retry}")?;
                }
                if call > 1 {
                    write!(f, ", call {call}")?;
                }
                f.write_str(")")
            }
            JournalStep::Tool { turn, step, name, call, attempt } => {
                write!(f, "tool {name} ({turn}, step {step}, {call}")?;
                if attempt > 1 {
                    write!(f, ", attempt {attempt}")?;
                }
                f.write_str(")")
            }
            JournalStep::Tools { turn, step } => write!(f, "tools ({turn}, step {step})"),
            JournalStep::Approval { turn, step, name, call } => {
                write!(f, "approval {name} ({turn}, step {step}, {call})")
            }
            JournalStep::Opened { turn } => write!(f, "opened ({turn})"),
            JournalStep::Resumed { turn, call } => write!(f, "resumed ({turn}, {call})"),
            JournalStep::Summary { turn, through } => {
                write!(f, "summary ({turn}, through entry {through})")
            }
            JournalStep::Nested { turn, agent, call, step } => {
                write!(f, "{agent} ({turn}, {call}): {step}")
            }
        }
    }
}

/// What a journal replays at the place of the step `asked`, where it recorded the step
/// `recorded`: the rule every journal replays by. The recorded outcome, read back by
/// `decode`, if `recorded` is the step asked for; [`JournalError::Diverged`] naming both if it
/// is another (nothing is read); [`JournalError::Failed`] if the outcome does not read back.
pub fn replay_recorded<T, E: fmt::Display>(
    asked: String,
    recorded: &str,
    decode: impl FnOnce() -> Result<T, E>,
) -> Result<T, JournalError> {
    if recorded != asked {
        return Err(JournalError::Diverged { recorded: recorded.to_owned(), asked });
    }
    decode().map_err(|error| JournalError::Failed { step: asked, message: error.to_string() })
}

/// Where a turn's effects are recorded as they complete, and replayed from when the turn runs
/// again: [`TurnRun::journal`](crate::TurnRun::journal) passes each model call, tool call,
/// approval and summary through it as a named [`JournalStep`]. A journal may borrow what it
/// records into (a durable-execution context, a database transaction).
pub trait Journal: Sync {
    /// Runs `effect` as the step `step` — the first time: runs it and records what it
    /// returned; replaying: returns what was recorded without running it. Asked for another
    /// step than it recorded at that place, it answers [`JournalError::Diverged`] and runs
    /// nothing.
    fn journal<T, F>(
        &self,
        step: &JournalStep<'_>,
        effect: F,
    ) -> impl Future<Output = Result<T, JournalError>> + Send
    where
        T: Serialize + DeserializeOwned + Send,
        F: Future<Output = T> + Send;

    /// Runs `review` — the approver's answer to the escalated call `waiting` — as the step
    /// `step`. The default journals it as any step: [`Approval::Suspend`] then stops the turn,
    /// as it does without a journal. A journal that can wait durably (a Restate awakeable)
    /// answers a `Suspend` by waiting inside the turn for a person's answer, and returns that.
    fn approval<F>(
        &self,
        step: &JournalStep<'_>,
        waiting: &PendingApproval,
        review: F,
    ) -> impl Future<Output = Result<Approval, JournalError>> + Send
    where
        F: Future<Output = Approval> + Send,
    {
        let _ = waiting;
        self.journal(step, review)
    }
    /// Whether the journal keeps the steps of a step's tool calls running together: each
    /// call's steps in their order, apart from the other calls' ([`JournalStep::lane`]), so
    /// that a replay finds them whatever order the calls finished in. A journal that replays
    /// by position alone answers `false` (the default), and a turn through it runs its calls
    /// one at a time.
    fn concurrent_calls(&self) -> bool {
        false
    }
}

type BoxFuture<'a, T> = std::pin::Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// [`Journal`], callable through `dyn`: an erased agent's journal, and the one a sub-agent's
/// steps go through, inside its parent's. Each step's outcome crosses as JSON, which is what a
/// journal records it as. Implemented for every [`Journal`].
pub trait JournalDyn: Sync {
    /// [`Journal::journal`], the outcome as JSON.
    fn journal<'a>(
        &'a self,
        step: &'a JournalStep<'a>,
        effect: BoxFuture<'a, serde_json::Value>,
    ) -> BoxFuture<'a, Result<serde_json::Value, JournalError>>;

    /// [`Journal::approval`].
    fn approval<'a>(
        &'a self,
        step: &'a JournalStep<'a>,
        waiting: &'a PendingApproval,
        review: BoxFuture<'a, Approval>,
    ) -> BoxFuture<'a, Result<Approval, JournalError>>;

    /// [`Journal::concurrent_calls`].
    fn concurrent_calls(&self) -> bool;
}

impl<J: Journal> JournalDyn for J {
    fn journal<'a>(
        &'a self,
        step: &'a JournalStep<'a>,
        effect: BoxFuture<'a, serde_json::Value>,
    ) -> BoxFuture<'a, Result<serde_json::Value, JournalError>> {
        Box::pin(Journal::journal(self, step, effect))
    }

    fn approval<'a>(
        &'a self,
        step: &'a JournalStep<'a>,
        waiting: &'a PendingApproval,
        review: BoxFuture<'a, Approval>,
    ) -> BoxFuture<'a, Result<Approval, JournalError>> {
        Box::pin(Journal::approval(self, step, waiting, review))
    }
    fn concurrent_calls(&self) -> bool {
        Journal::concurrent_calls(self)
    }
}
