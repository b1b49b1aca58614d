//! A turn's effects go through one journal: a second `.journal(...)` does not compile.

use std::future::Future;

use agentix::{Agent, Conversation, ScriptedModel, durable::{Journal, JournalError, JournalStep}};

struct Log;

impl Journal for Log {
    async fn journal<T, F>(&self, _: &JournalStep<'_>, effect: F) -> Result<T, JournalError>
    where
        T: serde::Serialize + serde::de::DeserializeOwned + Send,
        F: Future<Output = T> + Send,
    {
        Ok(effect.await)
    }
}

async fn run(agent: &Agent<ScriptedModel>, conversation: &mut Conversation) {
    let _ = agent.turn(conversation, "hi").journal(&Log).journal(&Log).await;
}

fn main() {}
