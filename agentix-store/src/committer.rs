//! A stored conversation's committer: how a turn commits each step to the store as it runs.

use std::sync::Mutex;

use agentix::session::SessionState;
use agentix::{
    Conversation,
    durable::{Commit, CommitError, ModelCall},
};

use crate::model_calls::AuditedCall;
use crate::{Store, StoreError, Stored, Version};

/// Commits a turn's steps to a stored conversation, each in one transaction against the
/// version it last saw: made by [`Store::committer`], given to
/// [`TurnRun::commit`](agentix::TurnRun::commit).
///
/// ```
/// use agentix::{Agent, ScriptedModel};
/// use agentix_store::Store;
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let store = Store::open("sqlite::memory:").await?;
/// store.create("chat", &agentix::Conversation::new()).await?;
/// let agent = Agent::builder(ScriptedModel::new().text("Hello!")).build();
///
/// let mut stored = store.load("chat").await?;
/// let committer = store.committer("chat", &stored);
/// agent.turn(&mut stored.conversation, "Hi").commit(&committer).await.unwrap();
/// stored.version = committer.version();
///
/// assert_eq!(store.load("chat").await?.conversation.log(), stored.conversation.log());
/// # Ok::<_, agentix_store::StoreError>(())
/// # }).unwrap();
/// ```
///
/// It keeps the audit of the turn's model calls too ([`Commit::model_call`]): each call's
/// request as sent, its response or error, its usage (cached tokens included) and latency are
/// written to `model_calls` with the next commit, in its transaction — a step's calls are
/// stored with the step, or not at all.
///
/// A commit whose future is dropped (a run cancelled while it committed) may have landed or
/// not: after a dropped run, load the conversation again and take a new committer.
#[derive(Debug)]
pub struct Committer<'s> {
    store: &'s Store,
    id: String,
    /// The version last committed, and how many entries the store holds.
    state: Mutex<(Version, usize)>,
    /// The model calls made since the last commit.
    calls: Mutex<Vec<AuditedCall>>,
    /// The session a session's run commits its state as; the conversation's id by default.
    session: Option<String>,
}

impl Store {
    /// A committer for the conversation `stored` was loaded from (as `id`), picking up from its
    /// version and its log.
    pub fn committer(&self, id: &str, stored: &Stored) -> Committer<'_> {
        self.committer_at(id, stored.version, &stored.conversation)
    }

    /// A committer for the conversation stored as `id`, loaded at `version` as `conversation`
    /// (for a caller that keeps the two apart).
    pub fn committer_at(
        &self,
        id: &str,
        version: Version,
        conversation: &Conversation,
    ) -> Committer<'_> {
        let state = (version, conversation.log().len());
        Committer {
            store: self,
            id: id.to_owned(),
            state: Mutex::new(state),
            calls: Mutex::default(),
            session: None,
        }
    }
}

impl Committer<'_> {
    /// This committer, committing a session's state
    /// ([`SessionRun::commit`](agentix::session::SessionRun::commit)) as the session
    /// `id`; without it, a session is stored under its conversation's id, and a later session
    /// on that conversation replaces its record: name each one that must be kept. A session's
    /// state is written only while the conversation is at this committer's version: a session
    /// whose turns lost the race writes nothing over the winner's.
    pub fn in_session(mut self, id: impl Into<String>) -> Self {
        self.session = Some(id.into());
        self
    }

    /// The conversation's version after the last commit: what the next turn commits against.
    pub fn version(&self) -> Version {
        lock(&self.state).0
    }
}

impl Commit for Committer<'_> {
    async fn commit(&self, conversation: &Conversation) -> Result<(), CommitError> {
        let (version, from) = *lock(&self.state);
        let through = conversation.log().len();
        let calls = std::mem::take(&mut *lock(&self.calls));
        if through == from && calls.is_empty() {
            return Ok(());
        }
        match self.store.commit_with(&self.id, version, conversation, from, &calls, None).await {
            Ok(version) => {
                *lock(&self.state) = (version, through);
                Ok(())
            }
            Err(error) => {
                // Nothing was written: the calls wait for the next commit, if there is one.
                let mut kept = lock(&self.calls);
                let later = std::mem::replace(&mut *kept, calls);
                kept.extend(later);
                Err(commit_error(error))
            }
        }
    }

    async fn commit_session(&self, state: &SessionState) -> Result<(), CommitError> {
        let session = self.session.as_deref().unwrap_or(&self.id);
        let version = self.version();
        let saved = self.store.save_session_at(session, &self.id, state, Some(version)).await;
        saved.map_err(commit_error)
    }

    fn model_call(&self, call: &ModelCall<'_>) {
        let audited = AuditedCall::of(call);
        lock(&self.calls).push(audited);
    }
}

/// What the loop hears of a store's error: whether another writer moved the conversation.
fn commit_error(error: StoreError) -> CommitError {
    CommitError {
        conflict: matches!(error, StoreError::Conflict { .. }),
        message: error.to_string(),
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}
