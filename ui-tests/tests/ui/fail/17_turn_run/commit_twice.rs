//! A turn commits through one committer: a second `.commit(...)` does not compile.

use agentix::{Agent, Conversation, ScriptedModel, durable::{Commit, CommitError}};

struct Store;

impl Commit for Store {
    async fn commit(&self, _: &Conversation) -> Result<(), CommitError> {
        Ok(())
    }
}

async fn run(agent: &Agent<ScriptedModel>, conversation: &mut Conversation) {
    let _ = agent.turn(conversation, "hi").commit(&Store).commit(&Store).await;
}

fn main() {}
