//! Typed lifecycle hooks for LLM agents, composed statically: no boxing, no allocation per
//! event.
//!
//! An agent runs a loop — call the model, run the tools it asks for, repeat, answer — and a hook
//! steps into it at one of ten [event]s. Each event's type is its contract: the value that
//! flows through it and the [`Verdict`]s a hook may return there.
//!
//! # A hook
//!
//! Put [`#[hook(EVENT)]`](hook) on a plain `async fn`; its parameters and return type follow the
//! event's contract, and the agent's builder takes it by name:
//!
//! ```
//! use agentix::event::AfterModel;
//! use agentix::{hook, Agent, AssistantMessage, Conversation, ScriptedModel, Verdict};
//!
//! /// Sends the model back until its answer starts with a plan.
//! #[hook(after_model)]
//! async fn require_plan(message: &AssistantMessage) -> Verdict<AfterModel> {
//!     if message.calls_tools() || message.joined_text().starts_with("<plan>") {
//!         Verdict::Continue
//!     } else {
//!         Verdict::retry("Start your answer with a <plan> block.")
//!     }
//! }
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let model = ScriptedModel::new().text("Sure.").text("<plan>1. answer</plan> Sure.");
//! let agent = Agent::builder(model).hook(require_plan).build();
//! let mut conversation = Conversation::new();
//! let reply = agent.run(&mut conversation, "Help me").await?;
//! assert!(reply.joined_text().starts_with("<plan>"));
//! # Ok::<_, agentix::Error>(())
//! # }).unwrap();
//! ```
//!
//! # A broken contract is a compile error
//!
//! A verdict the contract forbids cannot be built, and a hook whose signature breaks a rule does
//! not compile; the error names the rule and points at your code. A parallel `pre` hook runs
//! beside others and may only add content, so one that tries to halt:
//!
//! ```compile_fail
//! use agentix::event::Pre;
//! use agentix::{Turn, Verdict, hook};
//!
//! #[hook(pre, parallel)]
//! async fn retrieve(turn: &Turn) -> Verdict<Pre> {
//!     if turn.user_message().text().is_empty() {
//!         return Verdict::halt("nothing to retrieve for");
//!     }
//!     Verdict::Continue
//! }
//! ```
//!
//! fails with (the exact output, from `ui-tests/`):
//!
//! <!-- stderr: ui-tests/tests/ui/fail/01_parallel_halts/parallel_halts_returns_verdict.stderr -->
//! ```text
//! error[E0277]: a parallel hook cannot return `Verdict<agentix::event::Pre>`
//!  --> tests/ui/fail/01_parallel_halts/parallel_halts_returns_verdict.rs:5:35
//!   |
//! 5 | async fn retrieve(turn: &Turn) -> Verdict<Pre> {
//!   |                                   ^^^^^^^^^^^^ a parallel hook returns content; it cannot halt
//!   |
//!   = help: the trait `agentix::__private::IntoParts` is not implemented for `Verdict<agentix::event::Pre>`
//!   = note: parallel `pre` hooks are append-only: return `Vec<Part>`, `Part`, `Option<Part>` or `String`; a hook that may halt is a sequential `pre` hook (drop `parallel`)
//! ```
//!
//! # The pipeline
//!
//! Hooks compose into a static pipeline whose type grows with each hook, as
//! `tower::ServiceBuilder` grows a stack: no `Box<dyn>`, no allocation per event, and an event
//! without single-event hooks is skipped at compile time ([`pipeline`]). A hook spanning
//! several events is one struct implementing [`Hook`] (called at every event, traced at its
//! own):
//!
//! ```
//! use agentix::event::{AfterModel, EventKind, EventSet};
//! use agentix::{Agent, AssistantMessage, Conversation, Hook, ScriptedModel, Turn, Verdict};
//!
//! /// Sends the model back until its answer starts with a plan.
//! struct RequirePlan;
//!
//! impl Hook for RequirePlan {
//!     const EVENTS: EventSet = EventSet::of(EventKind::AfterModel);
//!
//!     async fn after_model(&self, message: &mut AssistantMessage, _: &mut Turn) -> Verdict<AfterModel> {
//!         if message.joined_text().starts_with("<plan>") {
//!             Verdict::Continue
//!         } else {
//!             Verdict::retry("Start your answer with a <plan> block.")
//!         }
//!     }
//! }
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let model = ScriptedModel::new().text("Sure.").text("<plan>1. answer</plan> Sure.");
//! let agent = Agent::builder(model).hook(RequirePlan).build();
//! let mut conversation = Conversation::new();
//! let reply = agent.run(&mut conversation, "Help me").await?;
//! assert!(reply.joined_text().starts_with("<plan>"));
//! # Ok::<_, agentix::Error>(())
//! # }).unwrap();
//! ```
//!
//! The loop runs `pre` → per step (`before_model` → `wrap_model` → `after_model` → per tool call
//! (`before_tool` → `wrap_tool` → `after_tool` or `tool_error`)) → `before_final` → `post`.
//! Hooks of one event run in the order they were added to the agent; the first verdict other
//! than continue ends that event's chain; `post` runs at the end of every turn.
//!
//! A hook is one of:
//! - a single-event hook: a type implementing that event's trait in [`on`];
//! - a [`Hook`]: one struct with a method per event, for hooks that span several;
//! - a parallel `pre` hook ([`on::ParallelPre`]), which returns content instead of halting.
//!
//! [`AgentBuilder::hook`] takes any of them and knows where each goes.
//!
//! # Sessions
//!
//! Above the turn, a [`Session`](session::Session) runs a queue of tasks, grouped into plans,
//! in one conversation: each task one turn, with eight more events (`session_start`,
//! `task_start`, `step_start`, `plan_submit`, `task_complete`, `plan_complete`,
//! `all_tasks_complete`, `session_end`) whose contracts are checked the same way. See
//! [`session`].

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
mod transform;
mod turn;
mod verdict;

pub use agent::{Agent, AgentBuilder, AnyAgent, BoxedAgent, TurnRun};

/// Turns a plain `async fn` into a typed hook on one lifecycle event.
///
/// ```
/// use agentix::event::AfterModel;
/// use agentix::{hook, Agent, AssistantMessage, Conversation, ScriptedModel, Verdict};
///
/// /// Sends the model back until its answer starts with a plan.
/// #[hook(after_model)]
/// async fn require_plan(message: &AssistantMessage) -> Verdict<AfterModel> {
///     if message.calls_tools() || message.joined_text().starts_with("<plan>") {
///         Verdict::Continue
///     } else {
///         Verdict::retry("Start your answer with a <plan> block.")
///     }
/// }
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let model = ScriptedModel::new().text("Sure.").text("<plan>1. answer</plan> Sure.");
/// let agent = Agent::builder(model).hook(require_plan).build();
/// let reply = agent.run(&mut Conversation::new(), "Help me").await?;
/// assert!(reply.joined_text().starts_with("<plan>"));
/// # Ok::<_, agentix::Error>(())
/// # }).unwrap();
/// ```
///
/// `#[hook(EVENT [, parallel] [, durable] [, name = "..."] [, when = path] [, timeout = "2s"]
/// [, on_error = skip] [, crate = "..."])]`:
///
/// - `EVENT` is one of the turn's `pre`, `before_model`, `wrap_model`, `after_model`,
///   `before_tool`, `wrap_tool`, `after_tool`, `tool_error`, `before_final`, `post` (the hook
///   goes on an agent), or a session's `session_start`, `task_start`, `step_start`,
///   `plan_submit`, `task_complete`, `plan_complete`, `all_tasks_complete`, `session_end` (the
///   hook goes on a [`Session`](session::Session); see [`session`]).
/// - `parallel` (only on `pre`): the hook reads `&Turn` and returns content (`Vec<Part>`,
///   `Part`, `Option<Part>` or `String`); consecutive parallel hooks run at once.
/// - `durable` (only on `pre` and `post`): the hook's output joins the conversation's log.
/// - `name = "..."`: the hook's name in errors, the log and traces (default: the function's).
/// - `when = path`: run the hook only when `path(&value, &turn)` (for `pre`: `path(&turn)`)
///   returns `true`.
/// - `timeout = "2s"` (`"250ms"`, `"1.5s"`, `"1m30s"`…) or `timeout_ms = 2000`: how long one
///   call of the hook may take; past it the hook has failed, and its event's failure policy
///   answers ([`event`]). Without it, no timer is made.
/// - `on_error = skip` (only on `pre, parallel`): the hook's panic or timeout does not end the
///   turn; the group goes on without its content, and the log records it. `on_error = fail` is
///   the default; every other event is a guard and fails closed.
/// - `crate = "..."`: the name the agentix crate goes by, if it was renamed in `Cargo.toml`.
///
/// The parameters are, in order, the event's value (`&` or `&mut`; for the wrap events `&`, for
/// `post` `&Outcome`), the turn (`&mut Turn` or `&Turn`; `&Turn` for parallel and wrap hooks),
/// and for wrap hooks `next`; trailing ones may be left out. The return is a
/// `Verdict<Event>`, `()` (continue), a new value for the event, or a `Result` of one of these
/// (an `Err` halts the turn as a failure naming the hook); wrap hooks return what `next` does.
/// A session hook takes the event's value (`&mut QueuedTask` at `task_start`, `&mut Turn` or
/// `&Turn` at `step_start`, `&mut Plan` at `plan_submit`, `&TaskReport`, `&PlanReport`; none
/// at `session_start`, `all_tasks_complete` and `session_end`), then the session
/// (`&SessionState`); `parallel`, `durable`, `when`, `tool` and `on_error` are not for it.
///
/// `tool = get_weather` on `before_tool`, `after_tool` or `tool_error` makes a per-tool hook: it
/// runs on that tool's calls only and takes the tool's typed arguments, output or error
/// (`&mut GetWeatherArgs` for a `#[tool] async fn get_weather`) instead of JSON. The `after_tool`
/// and `tool_error` ones run inside the call, before the result is rendered, and take `&Turn`;
/// [`AgentBuilder::hook`] checks that the agent has the tool.
///
/// The function becomes a unit struct of the same name that the agent builder takes
/// (`.hook(require_plan)`); the function itself stays callable as `require_plan::call`. A hook
/// that breaks its event's contract does not compile, and the error names the rule.
///
/// A sequential hook whose body never awaits runs in place: the loop calls it as a plain
/// function, with no future between the loop and the hook (on an event where every hook runs
/// in place). A body awaits when it holds an `.await`, or calls a macro that may expand to one:
/// any macro but the standard formatting, assertion and panic macros and the `log`/`tracing`
/// levels. Any attribute on the function other than a doc comment or a lint level also keeps it
/// a future. Either way the hook behaves the same — order, verdicts, panics — only the cost
/// differs.
pub use agentix_macros::hook;
/// Turns an `async fn` into a [`Tool`] whose arguments are its parameters.
///
/// ```
/// use agentix::prelude::*;
///
/// /// Current weather for a city.
/// #[tool]
/// async fn get_weather(
///     /// The city, as the user wrote it.
///     city: String,
///     /// Celsius unless asked otherwise.
///     fahrenheit: Option<bool>,
/// ) -> Result<String, std::io::Error> {
///     let unit = if fahrenheit == Some(true) { "°F" } else { "°C" };
///     Ok(format!("sunny in {city}, 21{unit}"))
/// }
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let model = ScriptedModel::new()
///     .tool_call("get_weather", serde_json::json!({ "city": "Oslo" }))
///     .text("Sunny.");
/// let agent = Agent::builder(model).tool(get_weather).build();
/// agent.run(&mut Conversation::new(), "Weather in Oslo?").await.unwrap();
/// # });
/// ```
///
/// The tool's name is the function's (`#[tool(name = "...")]` sets another), its description
/// for the model the function's doc comment (or `description = "..."`), and its arguments the
/// parameters: a struct named after the function, `GetWeatherArgs` here, with a field per
/// parameter, its doc comment the field's description in the schema. It derives `Deserialize`,
/// `Serialize` and `JsonSchema` and refuses fields the schema does not have; an `Option`
/// parameter may be left out by the model. A parameter can carry `#[serde(...)]` and
/// `#[schemars(...)]` attributes, which go on its field. Typed hooks (`#[hook(before_tool,
/// tool = get_weather)]`) edit the struct.
///
/// A parameter named `args` is instead the whole arguments struct, your own
/// (`async fn f(args: MyArgs)`): then it is the only argument. A parameter `&Turn` receives the
/// turn: a tool reads the scope, it does not change it. The function returns `Result<T, E>` (`T`
/// serialized for the model, `E` displayed to it as a failure) or a plain `T`. It must be an
/// `async fn`, not generic, its future `Send`; each rule is a compile error at the offending
/// token. The function stays callable as `get_weather::call(...)`.
///
/// `#[tool(call_id)]` hands the tool its call's identity while it runs: `turn.tool_call_id()`,
/// and `turn.tool_idempotency_key()` (conversation, turn, call id) — the same however often the
/// call is attempted, for a side effect that must apply once.
pub use agentix_macros::tool;
pub use approval::{Approval, Approver, NoApprover, PendingApproval, Suspension};
pub use commit::{Commit, CommitError, ModelCall};
pub use context::{AuditLog, AuditSink, CharsPerToken, Summarizer, TokenCounter, fence};
pub use conversation::{Config, Conversation, Entry, InvalidLog, LogProblem, TurnRef};
pub use error::{Component, Error};
pub use hook::{Hook, NextModel, NextTool};
pub use journal::{Journal, JournalError, JournalStep, replay_recorded};
pub use message::{AssistantMessage, Message, Part, Role, ToolCall, ToolFailure, ToolResult};
pub use model::{
    Chunk, Model, ModelError, ModelParams, ModelRequest, ModelResponse, ScriptedModel, Usage,
};
pub use observe::{Decision, Observation, Observer};
pub use scope::{Scope, ScopeError, ScopeValue};
pub use stream::StreamEvent;
pub use tool::{
    Arguments, AsTool, IntoTool, MakesTool, NameList, NoTools, OutputHooks, Tool, ToolId, ToolSet,
    ToolSpec, Toolbox,
};
pub use transform::{PatternError, Redactor, StreamTransformer};
pub use turn::{Injection, Turn};
pub use verdict::{Escalation, Feedback, Halt, Rejection, Verdict};

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
        WrapModel, WrapTool,
    };
    pub use crate::{
        Agent, AssistantMessage, Config, Conversation, Entry, Error, Hook, JsonSchema, Message,
        Model, ModelError, ModelRequest, ModelResponse, NextModel, NextTool, ScriptedModel,
        StreamEvent, Tool, ToolCall, ToolResult, Turn, Usage, Verdict, hook, tool,
    };
    pub use serde::{Deserialize, Serialize};
}

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
struct ReadmeDoctests;

/// How a turn ended: its final answer, or why there is none.
pub type Outcome = Result<AssistantMessage, Error>;

use support::{Bounded, Caught, caught, lock, millis, panic_message, poll_guarded};
