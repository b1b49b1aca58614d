//! Durable agentix turns on [Restate](https://restate.dev): a turn that survives the process
//! it runs on.
//!
//! [`Conversations`] serves an agent as a Restate virtual object, one per conversation. A
//! turn is one invocation; every model call, tool call and approval of it passes through
//! the agent's journal seam ([`TurnRun::journal`](agentix::TurnRun::journal)) into Restate's
//! journal as a `ctx.run`. When the process dies mid-turn, Restate runs the invocation again
//! on the next process: the completed steps are replayed, not redone — no model call paid
//! twice — and the turn goes on from the step in flight. A tool sees its call's idempotency
//! key ([`Turn::tool_idempotency_key`](agentix::Turn::tool_idempotency_key)), stable across
//! replays, for the one case a journal cannot close: the process dying after the tool's
//! effect and before its step was recorded.
//!
//! ```no_run
//! use agentix::Agent;
//! use agentix_restate::Conversations;
//! use restate_sdk::prelude::Endpoint;
//!
//! # async fn example(model: impl agentix::Model + 'static) -> std::io::Result<()> {
//! let agent = Agent::builder(model).build();
//! let endpoint = Endpoint::builder().bind(Conversations::new(agent)).build();
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:9080").await?;
//! agentix_restate::serve(endpoint, listener, std::future::pending()).await;
//! # Ok(())
//! # }
//! ```
//!
//! Then register the service with restate-server (`restate deployments register
//! http://127.0.0.1:9080`) and call it through its ingress: `POST /Conversation/{id}/send`
//! with the message as a JSON string, `POST /Conversation/{id}/history` for its log.

mod journal;
mod object;
mod serve;

pub use journal::WaitingApproval;
pub use object::{Conversations, Edit, Reject};
pub use serve::serve;

/// The Restate SDK this crate serves with: its `Endpoint` binds [`Conversations`].
pub use restate_sdk;
