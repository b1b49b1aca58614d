//! Ready-made hooks: the policies every agent ends up writing, done once, typed and
//! configurable. Each is a hook like any other — registered with
//! [`AgentBuilder::hook`](agentix::AgentBuilder::hook), reported to observers and traces under
//! its name, journaled with the turn — and costs nothing on a turn that does not need it
//! beyond passing the call through.
//!
//! | hook | event | what |
//! |---|---|---|
//! | [`Retry`] | `wrap_model` | a failed model call again, after an exponential, jittered backoff that honours the provider's `retry-after`; capped in attempts and in total wait |
//! | [`ModelFallback`] | `wrap_model` | on an error that falls through (a provider's, a timeout, a refusal), the next model of a list — another provider's too |
//! | [`ToolRetry`] | `wrap_tool` | a failed call again, after a backoff: by default only an idempotent tool's (`#[tool(idempotent)]`, an MCP tool's hint), each attempt with the same idempotency key |
//! | [`ModelCallLimit`] | `before_model` | at most so many model calls per turn and per conversation; past it, an error naming the limit or an answer of your choosing |
//! | [`ToolCallLimit`] | `after_model`, `before_tool` | at most so many calls of a tool (or of all) per turn and per conversation; past it, the call rejected, an error, or an answer |
//! | [`UsageLimit`] | `before_model`, `wrap_model`, `after_model`, `post` | at most so many tokens, or so much cost by a price table (cache reads apart), per turn and per conversation; checked before each call, the request's size included |
//! | [`ClearToolResults`] | `before_model` | all but the last N tool results sent as stubs, a batch at a time so the prompt cache holds; the log keeps them whole |
//! | [`ToolFilter`] | `before_model`, `before_tool` | the tools a predicate keeps, step by step; a call of a hidden tool rejected |
//! | [`ToolSelector`] | `before_model`, `before_tool` | the tools a small model picks for the user's message; a call of a tool not offered rejected |
//! | [`Pii`] | `before_model`, `after_model`, `after_tool`, `tool_error`, the stream | e-mail addresses, phone numbers, Luhn-checked card numbers, IBANs and patterns of your own, masked, hashed or refused in the requests sent, the streamed answer and tool results |
//! | [`ApproveByPattern`] | `before_tool` | the calls of the tools (or MCP servers) a pattern names, to the approver, their arguments in the reason |
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
