//! Typed lifecycle hooks for LLM agents, composed statically: no boxing, no allocation per
//! event.
//!
//! An agent runs a loop — call the model, run the tools it asks for, repeat, answer — and a hook
//! steps into it at one of its [event]s. Each event's type is its contract: the value that
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
//! | contracts | each event's contract, verdicts, the hook traits and the components the loop calls | [`event`], [`verdict`], [`Hook`], [`on`], [`Turn`], [`model`], [`tool`](mod@tool), [`approval`], [`durable`], [`observe`], [`transform`] |
//! | pipeline | the static composition of hooks: chains, onions, parallel groups | [`pipeline`] |
//! | context | the token budget, compaction, rendering a request | [`context`] |
//! | turn loop | one turn, its steps, its tool calls; the run builder; delegation | [`Agent`], [`TurnRun`], [`BoxedAgent`], [`AnyAgent`], [`delegate`] |
//! | sessions | the task queue, plans, follow-ups | [`session`] |
//!
#![doc = include_str!("../docs/overview.md")]

// First: its macro is everyone's.
#[macro_use]
mod support;
#[doc(hidden)]
#[path = "private/mod.rs"]
pub mod __private;
// Before the modules that stream: its macro is theirs.
#[macro_use]
mod stream;
mod agent;
pub mod approval;
pub mod context;
pub mod conversation;
pub mod durable;
pub mod error;
pub mod event;
mod hook;
pub mod message;
pub mod model;
pub mod observe;
pub mod on;
pub mod pipeline;
pub mod scope;
pub mod session;
mod task;
pub mod tool;
pub mod trace;
pub mod transform;
mod turn;
pub mod verdict;

pub use agent::delegate;
pub use agent::{Agent, AgentBuilder, AnyAgent, BoxedAgent, TurnRun};
pub use conversation::{Config, Conversation, Entry};
pub use error::Error;
pub use hook::Hook;
pub use message::{AssistantMessage, Message, Part, ToolCall, ToolResult};
pub use model::{Model, ScriptedModel};
pub use observe::Observer;
pub use stream::StreamEvent;
pub use tool::{Tool, ToolSet};
pub use turn::Turn;
pub use verdict::Verdict;

#[doc = include_str!("../docs/hook.md")]
pub use agentix_macros::hook;
#[doc = include_str!("../docs/tool.md")]
pub use agentix_macros::tool;

/// The JSON Schema library a [`Tool`]'s arguments describe themselves with, re-exported so its
/// version is always the one agentix reads: derive [`JsonSchema`](schemars::JsonSchema) through it with
/// `#[schemars(crate = "agentix::schemars")]`, and a second `schemars` in the build cannot turn
/// into a trait-not-implemented error.
pub use schemars;
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
    pub use crate::model::{ModelError, ModelRequest, ModelResponse, NextModel, Usage};
    pub use crate::tool::NextTool;
    pub use crate::verdict::Trip;
    pub use crate::{
        Agent, AssistantMessage, Config, Conversation, Entry, Error, Hook, Message, Model,
        ScriptedModel, StreamEvent, Tool, ToolCall, ToolResult, Turn, Verdict, hook, tool,
    };
    /// Derives the schema of a tool's arguments (the trait and its derive). On your own types,
    /// pair it with `#[schemars(crate = "agentix::schemars")]` unless you depend on `schemars`
    /// 1.x.
    pub use schemars::JsonSchema;
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
