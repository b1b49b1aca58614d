//! Ready-made hooks: the policies every agent ends up writing, done once, typed and
//! configurable. Each is a hook like any other — registered with
//! [`AgentBuilder::hook`](agentix::AgentBuilder::hook), reported to observers and traces under
//! its name, journaled with the turn — and costs nothing on a turn that does not need it
//! beyond passing the call through.
//!
//! The hooks — each with the events it takes and what it does, beside what LangChain, Google
//! ADK and Pydantic AI call theirs — are listed once, in the guide's chapter
//! (`docs/ready-made-hooks.md` in the repository); each type's page here says how to set it up.
//!
//! `Retry` and `ModelFallback` wrap the model call: added first, a hook is outermost. A fallback
//! outside a retry retries each model before it falls to the next:
//!
//! ```
//! use agentix::{Agent, ScriptedModel};
//! use agentix_hooks::{ModelFallback, Retry};
//!
//! let agent = Agent::builder(ScriptedModel::new().text("Hello."))
//!     .hook(ModelFallback::to(["anthropic:claude-sonnet-4-5"]))
//!     .hook(Retry::new().attempts(3))
//!     .build();
//! # drop(agent);
//! ```

mod approval;
mod backoff;
mod clear;
mod errors;
mod fallback;
mod globs;
mod limits;
mod pii;
mod retry;
mod select;
mod tool_retry;
mod usage;

pub use approval::ApproveByPattern;
pub use backoff::Jitter;
pub use clear::ClearToolResults;
pub use errors::{falls_through, transient};
pub use fallback::ModelFallback;
pub use limits::{ModelCallLimit, Reached, ToolCallLimit};
pub use pii::{Pii, PiiAction};
pub use retry::Retry;
pub use select::{ToolFilter, ToolSelector};
pub use tool_retry::{ToolRetry, ran_and_failed};
pub use usage::{Budget, Price, Prices, Spending, UsageLimit};

/// The guide's chapter on these hooks, its examples compiled and run.
#[cfg(doctest)]
#[doc = include_str!("../../docs/ready-made-hooks.md")]
struct Guide;
