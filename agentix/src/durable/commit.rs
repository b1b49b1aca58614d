//! Where a turn's steps go as they join the log: a store that commits each one, so a process
//! that dies mid-turn loses at most the step it was in.

use std::future::{Future, ready};
use std::time::Duration;

use crate::conversation::{Conversation, TurnRef};
pub use crate::error::CommitError;
use crate::model::{ModelError, ModelRequest, ModelResponse};
use crate::task::SessionState;

/// Commits a turn's log as it grows, one step at a time: after `pre` (the user message and what
/// durable `pre` hooks produced), after each step (the assistant message with every tool
/// call's result, so a committed call is always answered), after the final answer, and at the
/// turn's end (what `post` produced, or the record of how the turn failed). A turn run with
/// [`TurnRun::commit`](crate::TurnRun::commit) calls it at each; a turn run without one pays
/// nothing for it.
///
/// A commit that fails ends the turn with [`Error::Commit`](crate::Error::Commit) — whatever
/// else ended it, the store being behind is what the caller must act on — or, if the committer
/// panicked, [`Error::ComponentPanicked`](crate::Error::ComponentPanicked) naming it: the
/// conversation in memory then holds more than the store, and the caller loads it again.
pub trait Commit: Sync {
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

    /// Commits a session's state — its queue, its plans, the tasks that ended — as a session
    /// run with [`SessionRun::commit`](crate::session::SessionRun::commit) reaches each point
    /// where it changed: after its start, as each task starts its turn and after it ends, after
    /// follow-up work is queued, as it ends. A failed commit stops the session as a session
    /// hook's failure does. The default commits nothing.
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
