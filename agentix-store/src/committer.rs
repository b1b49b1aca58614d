//! A stored conversation's committer: how a turn commits each step to the store as it runs.

use std::sync::Mutex;

use agentix::{Commit, CommitError, Conversation};

use crate::{Store, StoreError, Stored, Version};

/// Commits a turn's steps to a stored conversation, each in one transaction against the
/// version it last saw: made by [`Store::committer`], given to
/// [`Agent::run_committing`](agentix::Agent::run_committing).
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
/// agent.run_committing(&mut stored.conversation, "Hi", &committer).await.unwrap();
/// stored.version = committer.version();
///
/// assert_eq!(store.load("chat").await?.conversation.log(), stored.conversation.log());
/// # Ok::<_, agentix_store::StoreError>(())
/// # }).unwrap();
/// ```
#[derive(Debug)]
pub struct Committer<'s> {
    store: &'s Store,
    id: String,
    /// The version last committed, and how many entries the store holds.
    state: Mutex<(Version, usize)>,
}

impl Store {
    /// A committer for the conversation `stored` was loaded from (as `id`), picking up from its
    /// version and its log.
    pub fn committer(&self, id: &str, stored: &Stored) -> Committer<'_> {
        let state = (stored.version, stored.conversation.log().len());
        Committer { store: self, id: id.to_owned(), state: Mutex::new(state) }
    }
}

impl Committer<'_> {
    /// The conversation's version after the last commit: what the next turn commits against.
    pub fn version(&self) -> Version {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).0
    }
}

impl Commit for Committer<'_> {
    async fn commit(&self, conversation: &Conversation) -> Result<(), CommitError> {
        let (version, from) = *self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let through = conversation.log().len();
        if through == from {
            return Ok(());
        }
        match self.store.commit(&self.id, version, conversation, from).await {
            Ok(version) => {
                *self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) =
                    (version, through);
                Ok(())
            }
            Err(error) => Err(CommitError {
                conflict: matches!(error, StoreError::Conflict { .. }),
                message: error.to_string(),
            }),
        }
    }
}
