//! MCP for [agentix](https://docs.rs/agentix): the tools of a Model Context Protocol server as
//! an agent's tool set, over the official Rust SDK, [`rmcp`].
//!
//! [`McpServer`] says how to reach a server and which of its tools to take; connected, it is
//! [`McpTools`], an agentix [`ToolSet`](agentix::ToolSet): its calls go through the agent's
//! loop like any other tool's, so every `before_tool`, `wrap_tool`, `after_tool` and
//! `tool_error` hook sees them — there is no second path for a hook to miss.
//!
//! ```no_run
//! use agentix::{Agent, Conversation, ScriptedModel};
//! use agentix_mcp::McpServer;
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let files = McpServer::stdio("files", "npx")
//!     .args(["-y", "@modelcontextprotocol/server-filesystem", "/tmp/work"])
//!     .deny("*write*")
//!     .connect()
//!     .await?;
//! let model = ScriptedModel::new().text("done");
//! let agent = Agent::builder(model).tools(files).build();
//! agent.run(&mut Conversation::new(), "What is in /tmp/work?").await?;
//! # Ok(())
//! # }
//! ```

mod client;
mod error;
mod result;
mod serve;
mod server;
mod tools;

pub use error::McpError;
pub use serve::{McpService, NoModel, ServesTools};
pub use server::McpServer;
pub use tools::{IDEMPOTENCY_KEY, McpTools};

/// The guide's chapter on MCP servers (`docs/mcp.md`), its examples compiled as doctests.
#[doc = include_str!("../../docs/mcp.md")]
#[cfg(doctest)]
pub struct Guide;

/// The MCP SDK this crate is built on, for a transport of one's own
/// ([`McpServer::connect_with`]).
pub use rmcp;
