//! The agent with its type erased.

use std::future::Future;
use std::pin::Pin;

use crate::Outcome;
use crate::approval::Approver;
use crate::conversation::Conversation;
use crate::message::Message;
use crate::model::Model;
use crate::pipeline::Pipeline;
use crate::tool::ToolSet;
use crate::transform::StreamTransformer;

use super::Agent;

impl<M: Model, T: ToolSet, P: Pipeline, A: Approver, X: StreamTransformer> Agent<M, T, P, A, X> {
    /// Erases the agent's type, for storage beside agents of other types. Each turn then costs
    /// one allocation for its future.
    pub fn boxed(self) -> BoxedAgent
    where
        Self: 'static,
    {
        BoxedAgent { agent: Box::new(self) }
    }
}

/// An [`Agent`] with its type erased.
pub struct BoxedAgent {
    agent: Box<dyn DynAgent>,
}

impl BoxedAgent {
    /// Runs one turn; see [`Agent::run`].
    pub async fn run(
        &self,
        conversation: &mut Conversation,
        message: impl Into<Message>,
    ) -> Outcome {
        self.agent.run(conversation, message.into()).await
    }
}

impl std::fmt::Debug for BoxedAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BoxedAgent").finish_non_exhaustive()
    }
}

type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

trait DynAgent: Send + Sync {
    fn run<'a>(
        &'a self,
        conversation: &'a mut Conversation,
        message: Message,
    ) -> BoxFuture<'a, Outcome>;
}

impl<M: Model, T: ToolSet, P: Pipeline, A: Approver, X: StreamTransformer> DynAgent
    for Agent<M, T, P, A, X>
{
    fn run<'a>(
        &'a self,
        conversation: &'a mut Conversation,
        message: Message,
    ) -> BoxFuture<'a, Outcome> {
        Box::pin(Agent::run(self, conversation, message))
    }
}
