//! How the loop runs a turn's effects and where its steps go: straight and kept nowhere (`()`),
//! committed as they join the log ([`Committed`]), or passed through a journal
//! ([`Journaled`]). The loop's own machinery: a store author implements [`Commit`] and a durable
//! runtime [`Journal`], never this.

use std::future::{Future, ready};
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use futures::FutureExt;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::approval::{Approval, PendingApproval};
use crate::conversation::Conversation;
use crate::durable::{Commit, CommitError, ModelCall};
use crate::durable::{Journal, JournalDyn, JournalError, JournalStep};
use crate::message::{ToolCall, ToolFailure, ToolResult};
use crate::model::{ModelError, ModelResponse};
use crate::support::caught;
use crate::task::SessionState;
use crate::turn::Turn;
use crate::verdict::Escalation;

type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What a turn does with its effects and its steps. Public in name only (this module is
/// private): the run builders' types carry it, and nothing outside the crate can name it.
pub trait Effects: Sync + Send {
    /// Whether there is anything to commit to: the loop skips the calls at compile time
    /// otherwise.
    const COMMITS: bool;

    /// Whether effects go through a journal: the loop's rare paths (the opening, the approver,
    /// the summarizer) skip [`rarely`](Effects::rarely) at compile time otherwise.
    const JOURNALS: bool = false;

    /// Commits what `conversation`'s log holds past what was committed before.
    fn commit(
        &self,
        conversation: &Conversation,
    ) -> impl Future<Output = Result<(), CommitError>> + Send;

    /// Hears of one model call as it returns.
    fn model_call(&self, call: &ModelCall<'_>) {
        let _ = call;
    }

    /// Commits a session's state.
    fn commit_session(
        &self,
        state: &SessionState,
    ) -> impl Future<Output = Result<(), CommitError>> + Send {
        let _ = state;
        ready(Ok(()))
    }

    /// The model's answer to one call; `calls` counts the step's calls, for the journal's
    /// name of it. A journal bounds it by `limit` itself (the loop then does not), so that a
    /// timeout is an outcome it records. Straight, by default: the answer itself.
    fn answer<'a, F>(
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
    fn tool<'a, F>(
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

    /// An effect on a path that runs rarely: a turn's opening, the approver's answer, a
    /// summary. Boxed: only a turn with a journal calls it.
    fn rarely<'a, T>(
        &'a self,
        step: JournalStep<'a>,
        effect: BoxFuture<'a, T>,
    ) -> BoxFuture<'a, Result<T, JournalError>>
    where
        T: Serialize + DeserializeOwned + Send + 'a,
    {
        let _ = step;
        Box::pin(effect.map(Ok))
    }

    /// The approver's answer to an escalated call, on a turn with a journal: boxed, as
    /// [`rarely`](Effects::rarely) is.
    fn approval<'a>(
        &'a self,
        step: JournalStep<'a>,
        waiting: &'a PendingApproval,
        review: BoxFuture<'a, Approval>,
    ) -> BoxFuture<'a, Result<Approval, JournalError>> {
        let _ = waiting;
        self.rarely(step, review)
    }

    /// How many of a step's calls may run at once, `configured` allowing: one at a time
    /// through a journal that replays by position alone
    /// ([`Journal::concurrent_calls`](crate::durable::Journal::concurrent_calls)).
    fn tool_concurrency(&self, configured: usize) -> usize {
        configured
    }

    /// Whether escalated calls go to another approver than the agent's: a sub-agent's, to
    /// its parent's ([`review`](Effects::review)).
    const DELEGATES_REVIEW: bool = false;

    /// Hears what a sub-agent of the turn spent: a sub-agent's turn passes it on to its
    /// parent's.
    fn delegated(&self, usage: crate::model::Usage) {
        let _ = usage;
    }

    /// The answer of the approver escalations go to, when
    /// [`DELEGATES_REVIEW`](Effects::DELEGATES_REVIEW), to an escalated call.
    fn review<'a>(
        &'a self,
        call: &'a ToolCall,
        escalation: &'a Escalation,
    ) -> BoxFuture<'a, Approval> {
        let _ = escalation;
        Box::pin(ready(Approval::Reject(format!("nobody reviews the call of `{}`", call.name))))
    }

    /// The name the turn's agent runs under when it has none of its own: a sub-agent's, its
    /// tool's (for its turn's span).
    fn agent_name(&self) -> Option<&str> {
        None
    }

    /// The effects with their types erased.
    fn erased(&self) -> ErasedEffects<'_>;
}

/// A turn run on its own: effects run straight, nothing is kept. It costs nothing.
impl Effects for () {
    const COMMITS: bool = false;

    #[inline(always)]
    fn commit(&self, _: &Conversation) -> impl Future<Output = Result<(), CommitError>> + Send {
        ready(Ok(()))
    }

    fn erased(&self) -> ErasedEffects<'_> {
        ErasedEffects::Plain
    }
}

/// A turn's steps committed through a [`Commit`].
pub struct Committed<'k, K>(pub(crate) &'k K);

impl<K: Commit> Effects for Committed<'_, K> {
    const COMMITS: bool = true;

    fn commit(
        &self,
        conversation: &Conversation,
    ) -> impl Future<Output = Result<(), CommitError>> + Send {
        self.0.commit(conversation)
    }

    fn model_call(&self, call: &ModelCall<'_>) {
        self.0.model_call(call);
    }

    fn commit_session(
        &self,
        state: &SessionState,
    ) -> impl Future<Output = Result<(), CommitError>> + Send {
        self.0.commit_session(state)
    }

    fn erased(&self) -> ErasedEffects<'_> {
        ErasedEffects::Committed(self.0)
    }
}

/// A turn's effects passed through a journal, its steps going where `inner` sends them.
pub struct Journaled<'j, J, E> {
    pub(crate) journal: &'j J,
    pub(crate) inner: E,
}

impl<J: Journal, E: Effects> Effects for Journaled<'_, J, E> {
    const COMMITS: bool = E::COMMITS;
    const JOURNALS: bool = true;
    const DELEGATES_REVIEW: bool = E::DELEGATES_REVIEW;

    fn agent_name(&self) -> Option<&str> {
        self.inner.agent_name()
    }

    fn review<'a>(
        &'a self,
        call: &'a ToolCall,
        escalation: &'a Escalation,
    ) -> BoxFuture<'a, Approval> {
        self.inner.review(call, escalation)
    }

    fn delegated(&self, usage: crate::model::Usage) {
        self.inner.delegated(usage);
    }

    fn commit(
        &self,
        conversation: &Conversation,
    ) -> impl Future<Output = Result<(), CommitError>> + Send {
        self.inner.commit(conversation)
    }

    fn model_call(&self, call: &ModelCall<'_>) {
        self.inner.model_call(call);
    }

    fn commit_session(
        &self,
        state: &SessionState,
    ) -> impl Future<Output = Result<(), CommitError>> + Send {
        self.inner.commit_session(state)
    }

    fn answer<'a, F>(
        &'a self,
        calls: &'a AtomicU32,
        limit: Option<Duration>,
        turn: &'a Turn,
        answer: F,
    ) -> impl Future<Output = Result<ModelResponse, ModelError>> + Send + 'a
    where
        F: Future<Output = Result<ModelResponse, ModelError>> + Send + 'a,
    {
        let step = JournalStep::Model {
            turn: turn.turn_ref(),
            step: turn.step(),
            retry: turn.retries(),
            call: calls.fetch_add(1, Ordering::Relaxed) + 1,
        };
        // The whole outcome is recorded — a timeout and a panic included — so a replay takes
        // the path the first run took.
        let outcome = async move { ModelError::settle(bounded!(limit, caught(|| answer))) };
        async move {
            // The model's own answer or error is recorded: a replay returns it, not a hook's.
            self.journal.journal(&step, outcome).await.unwrap_or_else(|error| {
                turn.abort_journal(error);
                Err(ModelError::Aborted)
            })
        }
    }

    fn tool<'a, F>(
        &'a self,
        attempts: &'a AtomicU32,
        turn: &'a Turn,
        call: &'a ToolCall,
        result: F,
    ) -> impl Future<Output = Option<ToolResult>> + Send + 'a
    where
        F: Future<Output = Option<ToolResult>> + Send + 'a,
    {
        let attempt = attempts.fetch_add(1, Ordering::Relaxed) + 1;
        let (turn_ref, step) = (turn.turn_ref(), turn.step());
        let step =
            JournalStep::Tool { turn: turn_ref, step, name: &call.name, call: &call.id, attempt };
        // A panic is the call's outcome, recorded as the loop would answer it.
        let outcome = async move {
            caught(|| result)
                .await
                .unwrap_or_else(|payload| Some(ToolResult::panicked(call, payload.as_ref())))
        };
        async move {
            self.journal.journal(&step, outcome).await.unwrap_or_else(|error| {
                // The tool may have run: its outcome is not known.
                let reason = error.to_string();
                turn.abort_journal(error);
                Some(ToolResult::failure(call, ToolFailure::Interrupted { reason }))
            })
        }
    }

    fn approval<'a>(
        &'a self,
        step: JournalStep<'a>,
        waiting: &'a PendingApproval,
        review: BoxFuture<'a, Approval>,
    ) -> BoxFuture<'a, Result<Approval, JournalError>> {
        Box::pin(async move { self.journal.approval(&step, waiting, review).await })
    }

    fn rarely<'a, T>(
        &'a self,
        step: JournalStep<'a>,
        effect: BoxFuture<'a, T>,
    ) -> BoxFuture<'a, Result<T, JournalError>>
    where
        T: Serialize + DeserializeOwned + Send + 'a,
    {
        Box::pin(async move { self.journal.journal(&step, effect).await })
    }

    fn erased(&self) -> ErasedEffects<'_> {
        let committer = match self.inner.erased() {
            ErasedEffects::Committed(committer) => Some(committer),
            // A journal's inner effects are never journaled (`Unjournaled`).
            ErasedEffects::Plain | ErasedEffects::Journaled(..) => None,
        };
        ErasedEffects::Journaled(self.journal, committer)
    }

    fn tool_concurrency(&self, configured: usize) -> usize {
        if self.journal.concurrent_calls() { configured } else { 1 }
    }
}

/// A journal whose type was erased. An outcome the effect produced is returned as it is; one
/// replayed is read back from what was recorded, as a typed journal reads it.
pub(crate) struct ErasedJournal<'j>(pub(crate) &'j dyn JournalDyn);

impl Journal for ErasedJournal<'_> {
    async fn journal<T, F>(&self, step: &JournalStep<'_>, effect: F) -> Result<T, JournalError>
    where
        T: Serialize + DeserializeOwned + Send,
        F: Future<Output = T> + Send,
    {
        let ran = std::sync::Mutex::new(None);
        let unrecordable = std::sync::Mutex::new(None);
        let recorded = {
            let effect = Box::pin(async {
                let outcome = effect.await;
                let value = serde_json::to_value(&outcome).unwrap_or_else(|error| {
                    *unrecordable.lock().unwrap_or_else(|e| e.into_inner()) = Some(error);
                    serde_json::Value::Null
                });
                *ran.lock().unwrap_or_else(|e| e.into_inner()) = Some(outcome);
                value
            });
            self.0.journal(step, effect).await?
        };
        if let Some(error) = unrecordable.into_inner().unwrap_or_else(|e| e.into_inner()) {
            return Err(JournalError::Failed {
                step: step.to_string(),
                message: error.to_string(),
            });
        }
        match ran.into_inner().unwrap_or_else(|e| e.into_inner()) {
            Some(outcome) => Ok(outcome),
            None => serde_json::from_value(recorded).map_err(|error| JournalError::Failed {
                step: step.to_string(),
                message: error.to_string(),
            }),
        }
    }

    async fn approval<F>(
        &self,
        step: &JournalStep<'_>,
        waiting: &PendingApproval,
        review: F,
    ) -> Result<Approval, JournalError>
    where
        F: Future<Output = Approval> + Send,
    {
        self.0.approval(step, waiting, Box::pin(review)).await
    }
    fn concurrent_calls(&self) -> bool {
        self.0.concurrent_calls()
    }
}

/// A turn's effects, borrowed: a session's, for each task's turn.
impl<E: Effects> Effects for &E {
    const COMMITS: bool = E::COMMITS;
    const JOURNALS: bool = E::JOURNALS;
    const DELEGATES_REVIEW: bool = E::DELEGATES_REVIEW;

    fn agent_name(&self) -> Option<&str> {
        (**self).agent_name()
    }

    fn review<'a>(
        &'a self,
        call: &'a ToolCall,
        escalation: &'a Escalation,
    ) -> BoxFuture<'a, Approval> {
        (**self).review(call, escalation)
    }

    fn delegated(&self, usage: crate::model::Usage) {
        (**self).delegated(usage);
    }

    fn tool_concurrency(&self, configured: usize) -> usize {
        (**self).tool_concurrency(configured)
    }

    #[inline(always)]
    fn commit(
        &self,
        conversation: &Conversation,
    ) -> impl Future<Output = Result<(), CommitError>> + Send {
        (**self).commit(conversation)
    }

    #[inline(always)]
    fn model_call(&self, call: &ModelCall<'_>) {
        (**self).model_call(call);
    }

    fn commit_session(
        &self,
        state: &SessionState,
    ) -> impl Future<Output = Result<(), CommitError>> + Send {
        (**self).commit_session(state)
    }

    #[inline(always)]
    fn answer<'a, F>(
        &'a self,
        calls: &'a AtomicU32,
        limit: Option<Duration>,
        turn: &'a Turn,
        answer: F,
    ) -> impl Future<Output = Result<ModelResponse, ModelError>> + Send + 'a
    where
        F: Future<Output = Result<ModelResponse, ModelError>> + Send + 'a,
    {
        (**self).answer(calls, limit, turn, answer)
    }

    #[inline(always)]
    fn tool<'a, F>(
        &'a self,
        attempts: &'a AtomicU32,
        turn: &'a Turn,
        call: &'a ToolCall,
        result: F,
    ) -> impl Future<Output = Option<ToolResult>> + Send + 'a
    where
        F: Future<Output = Option<ToolResult>> + Send + 'a,
    {
        (**self).tool(attempts, turn, call, result)
    }

    fn rarely<'a, T>(
        &'a self,
        step: JournalStep<'a>,
        effect: BoxFuture<'a, T>,
    ) -> BoxFuture<'a, Result<T, JournalError>>
    where
        T: Serialize + DeserializeOwned + Send + 'a,
    {
        (**self).rarely(step, effect)
    }

    fn approval<'a>(
        &'a self,
        step: JournalStep<'a>,
        waiting: &'a PendingApproval,
        review: BoxFuture<'a, Approval>,
    ) -> BoxFuture<'a, Result<Approval, JournalError>> {
        (**self).approval(step, waiting, review)
    }

    fn erased(&self) -> ErasedEffects<'_> {
        (**self).erased()
    }
}

/// A turn's effects with their types erased, as the erased agent passes them on.
pub enum ErasedEffects<'a> {
    /// Straight, kept nowhere.
    Plain,
    /// Committed.
    Committed(&'a dyn CommitDyn),
    /// Through a journal, committed or not.
    Journaled(&'a dyn JournalDyn, Option<&'a dyn CommitDyn>),
}

/// [`Commit`], callable through `dyn`.
pub trait CommitDyn: Sync {
    /// [`Commit::commit`].
    fn commit<'a>(
        &'a self,
        conversation: &'a Conversation,
    ) -> BoxFuture<'a, Result<(), CommitError>>;
    /// [`Commit::model_call`].
    fn model_call(&self, call: &ModelCall<'_>);
    /// [`Commit::commit_session`].
    fn commit_session<'a>(
        &'a self,
        state: &'a SessionState,
    ) -> BoxFuture<'a, Result<(), CommitError>>;
}

impl<K: Commit> CommitDyn for K {
    fn commit<'a>(
        &'a self,
        conversation: &'a Conversation,
    ) -> BoxFuture<'a, Result<(), CommitError>> {
        Box::pin(Commit::commit(self, conversation))
    }

    fn model_call(&self, call: &ModelCall<'_>) {
        Commit::model_call(self, call);
    }

    fn commit_session<'a>(
        &'a self,
        state: &'a SessionState,
    ) -> BoxFuture<'a, Result<(), CommitError>> {
        Box::pin(Commit::commit_session(self, state))
    }
}

/// A committer whose type was erased.
pub(crate) struct ErasedCommit<'k>(pub(crate) &'k dyn CommitDyn);

impl Commit for ErasedCommit<'_> {
    async fn commit(&self, conversation: &Conversation) -> Result<(), CommitError> {
        self.0.commit(conversation).await
    }

    fn model_call(&self, call: &ModelCall<'_>) {
        self.0.model_call(call);
    }

    async fn commit_session(&self, state: &SessionState) -> Result<(), CommitError> {
        self.0.commit_session(state).await
    }
}

/// An erased journaled turn's committer, if it has one.
impl<E: Effects> Effects for Option<E> {
    const COMMITS: bool = E::COMMITS;

    fn agent_name(&self) -> Option<&str> {
        self.as_ref().and_then(Effects::agent_name)
    }

    async fn commit(&self, conversation: &Conversation) -> Result<(), CommitError> {
        match self {
            Some(effects) => effects.commit(conversation).await,
            None => Ok(()),
        }
    }

    fn model_call(&self, call: &ModelCall<'_>) {
        if let Some(effects) = self {
            effects.model_call(call);
        }
    }

    async fn commit_session(&self, state: &SessionState) -> Result<(), CommitError> {
        match self {
            Some(effects) => effects.commit_session(state).await,
            None => Ok(()),
        }
    }

    fn erased(&self) -> ErasedEffects<'_> {
        self.as_ref().map_or(ErasedEffects::Plain, Effects::erased)
    }
}
