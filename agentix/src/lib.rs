//! Typed lifecycle hooks for LLM agents, composed statically: no boxing, no allocation per
//! event.
//!
//! An agent runs a loop — call the model, run the tools it asks for, repeat, answer — and a hook
//! steps into it at one of ten [event]s. Each event's type is its contract: the value that
//! flows through it and the [`Verdict`]s a hook may return there.
//!
//! # The layers
//!
//! The crate reads from the bottom up; a module never names one of a layer above it
//! (`tests/layers.rs` checks it).
//!
//! | layer | what | modules |
//! |---|---|---|
//! | data | messages, the scope, the conversation's log and its entries, tasks and plans, events by name, verdict payloads, model requests and answers, tool specs, approval records, errors | `message`, `scope`, `conversation`, `task`, [`event::EventKind`], `verdict::payload`, `model::request`, `tool::spec`, `approval::record`, `error` |
//! | contracts | each event's contract, verdicts, the hook traits and the components the loop calls | [`event`], [`Verdict`], [`Hook`], [`on`], [`Turn`], [`Model`], [`Tool`], [`Approver`], [`Commit`], [`Journal`], [`Observer`], [`StreamTransformer`] |
//! | pipeline | the static composition of hooks: chains, onions, parallel groups | [`pipeline`] |
//! | context | the token budget, compaction, rendering a request | [`TokenCounter`], [`Summarizer`] |
//! | turn loop | one turn, its steps, its tool calls; the run builder | [`Agent`], [`TurnRun`], [`BoxedAgent`], [`AnyAgent`] |
//! | sessions | the task queue, plans, follow-ups | [`session`] |
//!
#![doc = include_str!("../docs/overview.md")]

/// `$future.await`, within `$limit` if there is one: `Ok(output)`, or `Err(limit)` when it runs
/// out. Without a limit the future is awaited as it is: no timer, and no move into a wrapper (a
/// turn's future is large, and moving it costs).
macro_rules! bounded {
    ($limit:expr, $future:expr) => {
        match $limit {
            ::core::option::Option::None => ::core::result::Result::Ok($future.await),
            ::core::option::Option::Some(limit) => {
                ::tokio::time::timeout(limit, $future).await.map_err(|_| limit)
            }
        }
    };
}

#[doc(hidden)]
#[path = "private/mod.rs"]
pub mod __private;
mod support;
// Before the modules that stream: its macro is theirs.
#[macro_use]
mod stream;
mod agent;
mod approval;
mod commit;
mod context;
mod conversation;
mod error;
pub mod event;
mod hook;
mod journal;
mod message;
mod model;
mod observe;
pub mod on;
pub mod pipeline;
mod scope;
pub mod session;
mod task;
mod tool;
pub mod trace;
mod transform;
mod turn;
mod verdict;

pub use agent::{
    Agent, AgentBuilder, AgentTool, AnyAgent, BoxedAgent, Delegates, Handoff, Handoffs, History,
    Prompt, SubAgent, SubAgents, TurnRun,
};

#[doc = include_str!("../docs/hook.md")]
pub use agentix_macros::hook;
#[doc = include_str!("../docs/tool.md")]
pub use agentix_macros::tool;
pub use approval::{Answer, Approval, Approver, NoApprover, PendingApproval, Question, Suspension};
pub use commit::{Commit, CommitError, ModelCall};
pub use context::{AuditLog, AuditSink, CharsPerToken, Summarizer, TokenCounter, fence};
pub use conversation::{Config, Conversation, Entry, InvalidLog, LogProblem, TurnRef};
pub use error::{Component, Error};
pub use hook::{Hook, NextModel, NextTool};
pub use journal::{Journal, JournalError, JournalStep, replay_recorded};
pub use message::{AssistantMessage, Message, Part, Role, ToolCall, ToolFailure, ToolResult};
pub use model::{
    Chunk, Model, ModelError, ModelParams, ModelRequest, ModelResponse, OutputSchema, OutputType,
    ScriptedModel, Usage, unstrict,
};
pub use observe::{Decision, Observation, Observer};
pub use pipeline::Policy;
pub use scope::{Scope, ScopeError, ScopeValue};
pub use stream::StreamEvent;
pub use tool::{
    Arguments, AsTool, IntoTool, MakesTool, NameList, NoTools, OutputHooks, Tool, ToolId,
    ToolOrigin, ToolPattern, ToolPatternError, ToolProgress, ToolSet, ToolSpec, Toolbox,
};
pub use transform::{PatternError, Redactor, StreamTransformer};
pub use turn::{Injection, Turn};
pub use verdict::{Escalation, Feedback, Halt, Rejection, Trip, Verdict};

/// The JSON Schema library a [`Tool`]'s arguments describe themselves with, re-exported so its
/// version is always the one agentix reads: derive [`JsonSchema`] through it with
/// `#[schemars(crate = "agentix::schemars")]`, and a second `schemars` in the build cannot turn
/// into a trait-not-implemented error.
pub use schemars;
/// Derives the schema of a tool's arguments (the trait and its derive). Outside the prelude, pair
/// it with `#[schemars(crate = "agentix::schemars")]` unless you depend on `schemars` 1.x.
pub use schemars::JsonSchema;
/// serde, re-exported for the same reason as [`schemars`]: a tool's arguments derive
/// `Deserialize` through it with `#[serde(crate = "agentix::serde")]`.
pub use serde;

/// What most agents use, in one import.
///
/// ```
/// use agentix::prelude::*;
///
/// /// `get_weather`'s arguments.
/// #[derive(Deserialize, JsonSchema)]
/// #[serde(crate = "agentix::serde")]
/// #[schemars(crate = "agentix::schemars")]
/// struct City {
///     /// The city.
///     city: String,
/// }
///
/// struct Weather;
///
/// impl Tool for Weather {
///     const NAME: &'static str = "get_weather";
///     type Args = City;
///     type Output = String;
///     type Error = std::convert::Infallible;
///
///     fn description(&self) -> &str {
///         "Current weather for a city."
///     }
///
///     async fn call(&self, args: City, _turn: &Turn) -> Result<String, Self::Error> {
///         Ok(format!("sunny in {}", args.city))
///     }
/// }
///
/// #[hook(after_model)]
/// async fn no_shouting(message: &AssistantMessage) -> Verdict<AfterModel> {
///     if message.joined_text().contains("!!") { Verdict::retry("Calmly, please.") } else { Verdict::Continue }
/// }
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let model = ScriptedModel::new().tool_call("get_weather", serde_json::json!({ "city": "Oslo" })).text("Sunny.");
/// let agent = Agent::builder(model).tool(Weather).hook(no_shouting).build();
/// let reply = agent.run(&mut Conversation::new(), "Weather in Oslo?").await.unwrap();
/// assert_eq!(reply.joined_text(), "Sunny.");
/// # });
/// ```
pub mod prelude {
    pub use crate::event::{
        AfterModel, AfterTool, BeforeFinal, BeforeModel, BeforeTool, Post, Pre, ToolError,
        Tripwire, WrapModel, WrapTool,
    };
    pub use crate::{
        Agent, AssistantMessage, Config, Conversation, Entry, Error, Hook, JsonSchema, Message,
        Model, ModelError, ModelRequest, ModelResponse, NextModel, NextTool, ScriptedModel,
        StreamEvent, Tool, ToolCall, ToolResult, Trip, Turn, Usage, Verdict, hook, tool,
    };
    pub use serde::{Deserialize, Serialize};
}

/// The README's examples, compiled and run as doctests, and the guide's.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
struct ReadmeDoctests;

/// The guide's chapters' examples (`docs/`), as doctests.
#[cfg(doctest)]
mod guide {
    #[doc = include_str!("../../docs/hooks.md")]
    struct Hooks;
    #[doc = include_str!("../../docs/tools.md")]
    struct Tools;
    #[doc = include_str!("../../docs/providers.md")]
    struct Providers;
    #[doc = include_str!("../../docs/sessions.md")]
    struct Sessions;
    #[doc = include_str!("../../docs/keeping-conversations.md")]
    struct KeepingConversations;
    #[doc = include_str!("../../docs/surviving-crashes.md")]
    struct SurvivingCrashes;
    #[doc = include_str!("../../docs/typed-answers.md")]
    struct TypedAnswers;
    #[doc = include_str!("../../docs/sub-agents.md")]
    struct SubAgents;
}

/// How a turn ended: its final answer, or why there is none.
pub type Outcome = Result<AssistantMessage, Error>;

use support::{Bounded, Caught, caught, lock, millis, panic_message, poll_guarded};
