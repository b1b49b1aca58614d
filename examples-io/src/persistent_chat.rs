//! A conversation kept in a SQLite file across runs: each run loads it, runs one turn that
//! commits each step as it goes, and leaves it for the next. The second run remembers the first:
//! its request carries the earlier turns, read back from the file.
//!
//! The model is a stand-in that answers from what its request holds, so the example runs
//! offline; any model reads the same history.

use agentix::{
    Agent, AssistantMessage, Conversation, Model,
    message::Role,
    model::{ModelError, ModelRequest, ModelResponse},
};
use agentix_store::{Store, StoreError};

/// Answers with what it remembers: the user's earlier messages in its request.
pub struct Remembering;

impl Model for Remembering {
    async fn complete(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        let said: Vec<String> = request
            .messages
            .iter()
            .filter(|message| message.role == Role::User)
            .map(|message| message.text().into_owned())
            .collect();
        let (now, before) = said.split_last().expect("a request holds the user's message");
        let text = if before.is_empty() {
            format!("Nice to meet you. You said: {now:?}. I will remember it.")
        } else {
            format!("You said {now:?}. Before that, in earlier runs: {}", before.join(" / "))
        };
        Ok(AssistantMessage::text(text).into())
    }
}

/// One run: opens the store at `path` (a SQLite file, created on the first run), runs a turn
/// asking `message` on the conversation `chat`, and returns the answer and how many turns the
/// conversation has.
pub async fn run(
    path: &std::path::Path,
    message: &str,
    out: &dyn Fn(&str),
) -> Result<(String, u64), StoreError> {
    let store = Store::open(&format!("sqlite://{}", path.display())).await?;
    let stored = match store.load("chat").await {
        Ok(stored) => stored,
        Err(StoreError::NotFound { .. }) => {
            store.create("chat", &Conversation::new()).await?;
            store.load("chat").await?
        }
        Err(error) => return Err(error),
    };
    let mut stored = stored;
    out(&format!(
        "loaded `chat` from {}: {} turn(s), version {}",
        path.display(),
        stored.conversation.turns(),
        stored.version
    ));
    let agent = Agent::builder(Remembering).build();
    let committer = store.committer("chat", &stored);
    let answer = agent
        .turn(&mut stored.conversation, message)
        .commit(&committer)
        .await
        .map_err(|error| StoreError::Encode { what: "the turn", message: error.to_string() })?;
    out(&format!("you:   {message}"));
    out(&format!("agent: {}", answer.joined_text()));
    out(&format!("committed: version {}", committer.version()));
    store.close().await;
    Ok((answer.joined_text().into_owned(), stored.conversation.turns()))
}
