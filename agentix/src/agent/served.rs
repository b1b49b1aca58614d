//! An agent's tools called from outside a turn — by an MCP client the agent serves them to —
//! through the agent's tool hooks, as the model's calls are.

use std::future::Future;
use std::sync::Arc;

use crate::approval::Approver;
use crate::conversation::{Conversation, Entry};
use crate::error::Error;
use crate::message::{AssistantMessage, Message, ToolCall, ToolResult};
use crate::model::Model;
use crate::observe::Watched;
use crate::pipeline::Pipeline;
use crate::tool::{ToolSet, ToolSpec};
use crate::transform::StreamTransformer;

use super::Agent;
use super::open_turn::OpenTurn;

impl<M: Model, T: ToolSet, P: Pipeline, A: Approver, X: StreamTransformer> Agent<M, T, P, A, X> {
    /// The specs of the agent's tools, as a request would carry them now.
    pub fn tool_specs(&self) -> Arc<[ToolSpec]> {
        if T::CHANGES {
            let mut specs = Vec::new();
            self.tools.specs(&mut specs);
            return specs.into();
        }
        self.tool_specs.clone()
    }

    /// Whether the agent's tool called `name` may be called again to the same effect
    /// ([`Tool::IDEMPOTENT`](crate::Tool::IDEMPOTENT)): what serving it over MCP announces.
    pub fn tool_is_idempotent(&self, name: &str) -> bool {
        self.tools.idempotent(name)
    }

    /// Runs one call of the agent's tools as a step of a turn of its own would: its
    /// `before_tool` hooks (and the approver, on an escalation), its `wrap_tool` hooks, the
    /// tool under the tool timeout, its `after_tool` or `tool_error` hooks — every tool hook
    /// the model's calls go through, and nothing else (no model, no `pre` or `post`). How an
    /// agent serves its tools to other clients (`agentix-mcp`'s server).
    ///
    /// The result is the one the model would read: a failed call — refused by a hook, an
    /// unknown tool, bad arguments, the tool's error — is a result with an error. A hook
    /// that halts, and an approver that suspends the call (nobody waits here), end it with
    /// the error.
    ///
    /// ```
    /// use agentix::{Agent, ScriptedModel, ToolCall};
    /// use serde_json::json;
    ///
    /// #[agentix::tool(description = "Adds two numbers.")]
    /// async fn add(a: i64, b: i64) -> Result<i64, std::convert::Infallible> {
    ///     Ok(a + b)
    /// }
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let agent = Agent::builder(ScriptedModel::new()).tool(add).build();
    /// let call = ToolCall::new("1", "add", json!({ "a": 2, "b": 3 }));
    /// assert_eq!(agent.call_tool(call).await?.output, "5");
    /// # Ok::<_, agentix::Error>(())
    /// # }).unwrap();
    /// ```
    // Written out so that the signature promises `Send`, which a caller spawning it relies on.
    #[allow(clippy::manual_async_fn)]
    pub fn call_tool(
        &self,
        call: ToolCall,
    ) -> impl Future<Output = Result<ToolResult, Error>> + Send {
        async move {
            let mut conversation = Conversation::new();
            let opening = Message::user(format!("(a call of `{}` from outside a turn)", call.name));
            let mut turn = OpenTurn::open(&mut conversation, opening, None);
            let message = AssistantMessage::default().with_tool_call(call);
            let observer = Watched::new(&(), None);
            let (open, step) = (&mut turn.turn, &turn.step);
            let ran = self.run_tools(message, None, open, step, &observer, &()).await;
            turn.finish();
            let result = turn.log().iter().rev().find_map(|entry| match entry {
                Entry::ToolResults { results, .. } => results.first().cloned(),
                _ => None,
            });
            match (ran, result) {
                (Ok(()), Some(result)) => Ok(result),
                (Err(error), _) => Err(error),
                (Ok(()), None) => unreachable!("a step that ran is in the log with its result"),
            }
        }
    }
}
