//! Where a turn's steps go as they join the log: a store that commits each one, so a process
//! that dies mid-turn loses at most the step it was in.

use std::future::{Future, ready};
use std::pin::Pin;
use std::sync::atomic::AtomicU32;
use std::time::Duration;

use futures::FutureExt;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::approval::{Approval, PendingApproval};
use crate::conversation::{Conversation, TurnRef};
use crate::journal::{JournalError, JournalStep};
use crate::message::{ToolCall, ToolResult};
use crate::model::{ModelError, ModelRequest, ModelResponse};
use crate::session::SessionState;
use crate::turn::Turn;

/// Commits a turn's log as it grows, one step at a time: after `pre` (the user message and what
/// durable `pre` hooks produced), after each step (the assistant message with every tool
/// call's result, so a committed call is always answered), after the final answer, and at the
/// turn's end (what `post` produced, or the record of how the turn failed). A turn run with
/// [`Agent::run_committing`](crate::Agent::run_committing) calls it at each; a turn run
/// without one pays nothing for it.
///
/// A commit that fails ends the turn with [`Error::Commit`](crate::Error::Commit) — whatever
/// else ended it, the store being behind is what the caller must act on — or, if the committer
/// panicked, [`Error::ComponentPanicked`](crate::Error::ComponentPanicked) naming it: the
/// conversation in memory then holds more than the store, and the caller loads it again.
pub trait Commit: Sync {
    /// Whether there is anything to commit to: the loop skips the calls at compile time
    /// otherwise.
    #[doc(hidden)]
    const COMMITS: bool = true;

    /// Commits what `conversation`'s log holds past what this committer committed before.
    fn commit(
        &self,
        conversation: &Conversation,
    ) -> impl Future<Output = Result<(), CommitError>> + Send;

    /// Hears of one model call as it returns — the request as sent (past the `wrap_model`
    /// hooks), what came back, how long it took — to keep with the next commit: an audit of
    /// every call the turn paid for. Every call is followed by a commit (of its step, of the
    /// turn's end). The default keeps nothing.
    fn model_call(&self, call: &ModelCall<'_>) {
        let _ = call;
    }

    // How the loop runs each effect of a turn: straight (these defaults return the effect
    // itself, so a turn without a journal runs exactly the code it ran before), or through a
    // journal ([`Agent::run_with`](crate::Agent::run_with) overrides them).

    /// The model's answer to one call; `calls` counts the step's calls, for the journal's
    /// name of it. A journal bounds it by `limit` itself (the loop then does not), so that a
    /// timeout is an outcome it records.
    #[doc(hidden)]
    fn __answer<'a, F>(
        &'a self,
        calls: &'a AtomicU32,
        limit: Option<Duration>,
        turn: &'a Turn,
        answer: F,
    ) -> impl Future<Output = Result<ModelResponse, ModelError>> + Send + 'a
    where
        F: Future<Output = Result<ModelResponse, ModelError>> + Send + 'a,
    {
        let _ = (calls, limit, turn);
        answer
    }

    /// A tool's call through the tool set (`None`: no tool of that name); `attempts` counts
    /// the call's attempts, for the journal's name of it.
    #[doc(hidden)]
    fn __tool<'a, F>(
        &'a self,
        attempts: &'a AtomicU32,
        turn: &'a Turn,
        call: &'a ToolCall,
        result: F,
    ) -> impl Future<Output = Option<ToolResult>> + Send + 'a
    where
        F: Future<Output = Option<ToolResult>> + Send + 'a,
    {
        let _ = (attempts, turn, call);
        result
    }

    /// Whether effects go through a journal: the loop's rare paths (the approver, the
    /// summarizer) skip [`__rarely`](Commit::__rarely) at compile time otherwise.
    #[doc(hidden)]
    const JOURNALS: bool = false;

    /// An effect on a path that runs rarely: the approver's answer, a summary. Boxed: only a
    /// turn with a journal calls it.
    #[doc(hidden)]
    fn __rarely<'a, T>(
        &'a self,
        step: JournalStep<'a>,
        effect: Pin<Box<dyn Future<Output = T> + Send + 'a>>,
    ) -> Pin<Box<dyn Future<Output = Result<T, JournalError>> + Send + 'a>>
    where
        T: Serialize + DeserializeOwned + Send + 'a,
    {
        let _ = step;
        Box::pin(effect.map(Ok))
    }

    /// The approver's answer to an escalated call, on a turn with a journal: boxed, as
    /// [`__rarely`](Commit::__rarely) is.
    #[doc(hidden)]
    fn __approval<'a>(
        &'a self,
        step: JournalStep<'a>,
        waiting: &'a PendingApproval,
        review: Pin<Box<dyn Future<Output = Approval> + Send + 'a>>,
    ) -> Pin<Box<dyn Future<Output = Result<Approval, JournalError>> + Send + 'a>> {
        let _ = waiting;
        self.__rarely(step, review)
    }

    /// Commits a session's state — its queue, its plans, the tasks that ended — as a session
    /// run with [`Session::run_committing`](crate::session::Session::run_committing) reaches
    /// each point where it changed: after its start, as each task starts its turn and after it
    /// ends, after follow-up work is queued, as it ends. A failed commit stops the session as a session hook's failure does.
    /// The default commits nothing.
    fn commit_session(
        &self,
        state: &SessionState,
    ) -> impl Future<Output = Result<(), CommitError>> + Send {
        let _ = state;
        ready(Ok(()))
    }
}

/// One call of the model, as the loop made it (inside the `wrap_model` hooks: a hook that
/// calls the model again makes a call of its own).
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct ModelCall<'a> {
    /// The turn.
    pub turn: TurnRef,
    /// The step within the turn, from 0.
    pub step: u32,
    /// The request as the model got it.
    pub request: &'a ModelRequest,
    /// Its answer (through the stream transformers, as the loop got it, usage included), or
    /// how it failed.
    pub outcome: Result<&'a ModelResponse, &'a ModelError>,
    /// From sending the request to the answer's end.
    pub latency: Duration,
}

/// A turn run on its own commits nowhere.
impl Commit for () {
    const COMMITS: bool = false;

    #[inline(always)]
    fn commit(
        &self,
        _conversation: &Conversation,
    ) -> impl Future<Output = Result<(), CommitError>> + Send {
        ready(Ok(()))
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
