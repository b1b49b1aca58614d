//! Tools: typed functions the model may call, fixed per agent.

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::any::{Any, TypeId};
use std::fmt;
use std::future::Future;
use std::time::Duration;

use crate::approval::record::{Approval, Question};
use crate::message::{ToolCall, ToolFailure, ToolResult};
use crate::turn::Turn;

pub(crate) mod at_hand;
pub(crate) mod pattern;
pub(crate) mod spec;

/// What a `wrap_tool` hook calls to go on inward.
pub use crate::hook::NextTool;
pub use pattern::{ToolPattern, ToolPatternError};
pub use spec::{ToolId, ToolOrigin, ToolProgress, ToolSpec};

/// A tool with typed arguments and output. The model sees its name, description and the JSON
/// schema of [`Args`](Tool::Args); its arguments arrive as JSON and are deserialized before
/// [`call`](Tool::call) runs, so a malformed call never reaches the tool.
///
/// ```
/// use agentix::{Tool, Turn};
/// use schemars::JsonSchema;
/// use serde::Deserialize;
///
/// struct GetWeather;
///
/// #[derive(Deserialize, JsonSchema)]
/// struct City {
///     city: String,
/// }
///
/// impl Tool for GetWeather {
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
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a tool",
    label = "not a tool",
    note = "put `#[tool]` on an async fn, or implement `agentix::Tool` for the type"
)]
pub trait Tool: Send + Sync {
    /// The name the model calls it by.
    const NAME: &'static str;
    /// The arguments; their JSON schema is what the model sees.
    type Args: Arguments;
    /// The output, serialized to JSON for the model (a string output is passed as is: a
    /// `String` without being copied). Owned (`'static`): it outlives the call that made it.
    type Output: Serialize + Send + 'static;
    /// The failure, displayed to the model. Owned (`'static`), as the output is.
    type Error: fmt::Display + Send + 'static;

    /// Whether the tool reads its call's identity while it runs
    /// ([`Turn::tool_call_id`], [`Turn::tool_idempotency_key`]): a tool whose side effect must
    /// apply once, however often the call is attempted or replayed. The loop then keeps the
    /// call's id at hand for the call's length — a copy of the id per call, paid only by the
    /// tools that ask (`#[tool(call_id)]`).
    const WANTS_CALL_ID: bool = false;

    /// Whether a call of the tool runs alone: a step's other calls (which otherwise run
    /// together, up to [`Config::tool_concurrency`](crate::Config::tool_concurrency)) wait for
    /// it to finish, and it for them. For a tool that is not safe to run beside others — one
    /// that holds a lock the others take, or drives one device (`#[tool(sequential)]`).
    const SEQUENTIAL: bool = false;

    /// Whether calling the tool twice with the same arguments does what calling it once does
    /// — a read, a lookup, a write keyed by
    /// [`Turn::tool_idempotency_key`](crate::Turn::tool_idempotency_key) — so that a failed
    /// call may be made again (`#[tool(idempotent)]`). A `wrap_tool` hook reads it from its
    /// `next` ([`NextTool::idempotent`]); nothing else does.
    const IDEMPOTENT: bool = false;

    /// What the tool does, for the model.
    fn description(&self) -> &str;

    /// Runs the tool. The turn gives it the same scope hooks read.
    fn call(
        &self,
        args: Self::Args,
        turn: &Turn,
    ) -> impl Future<Output = Result<Self::Output, Self::Error>> + Send;
}

/// What a tool's arguments are: read from the model's JSON (`Deserialize`), shown to it as a
/// JSON schema (`JsonSchema`), and `Send`. Implemented for every such type: derive the two.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool's arguments: it is read from the model's JSON and shown to it as a JSON schema",
    label = "derive `Deserialize` and `JsonSchema` for it (from `agentix::prelude`)"
)]
pub trait Arguments: Sized + Send {
    /// The arguments in the model's JSON.
    fn from_json(arguments: &serde_json::Value) -> serde_json::Result<Self>;

    /// Their JSON schema.
    fn schema() -> schemars::Schema;
}

#[diagnostic::do_not_recommend]
impl<T: DeserializeOwned + JsonSchema + Send> Arguments for T {
    fn from_json(arguments: &serde_json::Value) -> serde_json::Result<Self> {
        T::deserialize(arguments)
    }

    fn schema() -> schemars::Schema {
        schemars::schema_for!(T)
    }
}

/// What [`AgentBuilder::tool`](crate::AgentBuilder::tool) takes: a [`Tool`], or the function
/// `#[tool]` generates beside one (of the same name), so `.tool(get_weather)` reads as the
/// function it was written as. `Via` tells which, so neither needs an annotation.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a tool",
    label = "not a tool",
    note = "put `#[tool]` on an async fn, or implement `agentix::Tool` for the type"
)]
pub trait IntoTool<Via> {
    /// The tool.
    type Tool: Tool;

    /// Makes the tool.
    fn into_tool(self) -> Self::Tool;
}

/// Marks a [`Tool`] given as it is to [`IntoTool`].
#[derive(Debug)]
pub enum AsTool {}

/// Marks a function that makes a [`Tool`] (the one `#[tool]` generates) given to [`IntoTool`].
#[derive(Debug)]
pub enum MakesTool {}

impl<U: Tool> IntoTool<AsTool> for U {
    type Tool = U;

    fn into_tool(self) -> U {
        self
    }
}

impl<F: FnOnce() -> U, U: Tool> IntoTool<MakesTool> for F {
    type Tool = U;

    fn into_tool(self) -> U {
        self()
    }
}

impl ToolId {
    /// The id of tool `T`.
    #[must_use]
    pub const fn of<T: Tool + 'static>() -> Self {
        ToolId { type_id: TypeId::of::<T>(), name: T::NAME }
    }
}

impl ToolSpec {
    /// The spec of tool `T`.
    pub fn of<T: Tool>(tool: &T) -> Self {
        let schema = T::Args::schema();
        ToolSpec {
            name: T::NAME.to_owned(),
            description: tool.description().to_owned(),
            parameters: schema.to_value(),
        }
    }
}

/// A fixed set of tools, dispatched by name without boxing. Built by
/// [`AgentBuilder::tool`](crate::AgentBuilder::tool); implement it by hand for a set whose
/// members are only known at run time.
pub trait ToolSet: Send + Sync {
    /// The names of the set's tools, when known at compile time: those of a [`Toolbox`], so
    /// that [`AgentBuilder::tool`](crate::AgentBuilder::tool) refuses a second tool of one name.
    const NAMES: Option<&'static NameList> = None;

    /// Appends the spec of every tool in the set.
    fn specs(&self, specs: &mut Vec<ToolSpec>);

    /// The tool called `name`, for per-tool hooks (`#[hook(before_tool, tool = get_weather)]`),
    /// found once per call so that each such hook compares a type; `None` if the set has no
    /// such tool. A hand-written set may leave it out: its per-tool `before_tool` hooks then
    /// compare the call's name with their tool's.
    fn tool_id(&self, name: &str) -> Option<ToolId> {
        let _ = name;
        None
    }

    /// Whether the set knows where some of its tools come from ([`origin`](Self::origin)): the
    /// loop then asks, for each call, and the turn holds the answer for the call's hooks. A set
    /// that does not pays nothing.
    const HAS_ORIGINS: bool = false;

    /// Where the tool called `name` comes from, if the set knows (an MCP server).
    fn origin(&self, name: &str) -> Option<std::sync::Arc<ToolOrigin>> {
        let _ = name;
        None
    }

    /// Whether the set's list of tools can change while the agent lives (an MCP server's, on
    /// its `tools/list_changed`): the loop then reads [`specs`](Self::specs) again at a step
    /// whose [`generation`](Self::generation) moved, never within a step, and a journal
    /// records the list each step used. A fixed set pays nothing.
    const CHANGES: bool = false;

    /// A number that moves whenever the list of tools does (with [`CHANGES`](Self::CHANGES)).
    fn generation(&self) -> u64 {
        0
    }

    /// Whether some of the set's tools journal their own steps ([`nests`](Self::nests)): a
    /// sub-agent's. A set that has none pays nothing.
    const NESTS: bool = false;

    /// Whether a call of one of the set's tools may hand the rest of the turn to another
    /// agent (a [`Handoff`](crate::delegate::Handoff)): the loop then looks, before each model call, for
    /// an answer handed back. A set that has none pays nothing.
    const HANDS_OFF: bool = false;

    /// Whether the tool called `name` journals its own steps — a sub-agent's, each model and
    /// tool call of its turn — so that a journaled turn does not record its call as one step
    /// around them: a crash mid-call then replays the steps the call completed.
    fn nests(&self, name: &str) -> bool {
        let _ = name;
        false
    }

    /// Whether some of the set's tools run alone ([`sequential`](Self::sequential)). A set
    /// that has none pays nothing.
    const HAS_SEQUENTIAL: bool = false;

    /// Whether a call of the tool called `name` runs alone, never beside the step's other
    /// calls ([`Tool::SEQUENTIAL`]).
    fn sequential(&self, name: &str) -> bool {
        let _ = name;
        false
    }

    /// Whether the tool called `name` may be called again with the same arguments to the same
    /// effect ([`Tool::IDEMPOTENT`]; an MCP tool's `idempotentHint`). Asked only by a
    /// `wrap_tool` hook that wants to know ([`NextTool::idempotent`]).
    fn idempotent(&self, name: &str) -> bool {
        let _ = name;
        false
    }

    /// Runs the tool the call names, or returns `None` if the set has no such tool. Argument
    /// and tool failures are returned as failed results; the agent turns a panic into one too.
    fn call(&self, call: &ToolCall, turn: &Turn)
    -> impl Future<Output = Option<ToolResult>> + Send;

    /// [`call`](Self::call), running the tool through [`ToolRunner::run_tool`] (the agent's
    /// tool timeout) and the per-tool `after_tool` and `tool_error` hooks on the tool's own
    /// output or error before rendering it. A hand-written set may leave it out: then the
    /// timeout covers its whole call, and per-tool hooks see none of its calls.
    fn call_hooked<H: ToolRunner>(
        &self,
        call: &ToolCall,
        turn: &Turn,
        hooks: &H,
    ) -> impl Future<Output = Option<ToolResult>> + Send {
        async move {
            match hooks.run_tool(self.call(call, turn)).await {
                Ok(result) => result,
                Err(after) => Some(ToolResult::failure(call, ToolFailure::TimedOut { after })),
            }
        }
    }
}

/// What the loop lends a tool set during a call ([`ToolSet::call_hooked`]): the per-tool
/// `after_tool` and `tool_error` hooks, run on a call's typed output or error inside the call,
/// before it is rendered for the model; the bound on the tool's own call; and the turn's ears
/// for what the tool says while it runs — its progress, its questions. A hook that halts,
/// panics or times out ends the call and the turn (`call_hooked` returns the result all the
/// same: the tool ran).
pub trait ToolRunner: Sync {
    /// Whether the turn's observer wants the model's answers as they stream: a sub-agent's
    /// too, which [`nested`](ToolRunner::nested) passes on.
    const STREAMS: bool = false;

    /// Whether the turn's observer ignores everything: a sub-agent's observations too.
    const SILENT: bool = true;

    /// Adds what a sub-agent the running call runs has spent (each of its model calls, and
    /// its own sub-agents') to the turn's usage, and to its parent's if the turn is a
    /// sub-agent's.
    fn spent(&self, turn: &Turn, usage: crate::model::Usage) {
        let _ = (turn, usage);
    }

    /// Runs the per-tool `after_tool` hooks of tool `T` on its output.
    fn after_tool<T: Tool + 'static>(
        &self,
        output: &mut T::Output,
        turn: &Turn,
    ) -> impl Future<Output = ()> + Send;

    /// Runs the per-tool `tool_error` hooks of tool `T` on its error.
    fn tool_error<T: Tool + 'static>(
        &self,
        error: &mut T::Error,
        turn: &Turn,
    ) -> impl Future<Output = ()> + Send;

    /// Runs a tool's own call, under the agent's
    /// [`tool_timeout`](crate::Config::tool_timeout): the bound covers the tool, not the hooks
    /// that run on its output, so a slow hook is never blamed on the tool. `Err(after)` when
    /// the call ran out of time. A tool set runs each tool through it.
    fn run_tool<F: Future + Send>(
        &self,
        call: F,
    ) -> impl Future<Output = Result<F::Output, Duration>> + Send {
        async move { Ok(call.await) }
    }

    /// Reports how far the running `call` has come, to the turn's observer and stream.
    fn progress(&self, call: &ToolCall, progress: &ToolProgress) {
        let _ = (call, progress);
    }

    /// The journal of the turn the running call belongs to, if it has one: a sub-agent's turn
    /// journals its steps inside it ([`ToolSet::nests`]).
    #[doc(hidden)]
    fn journal(&self) -> Option<&dyn crate::durable::JournalDyn> {
        None
    }

    /// Hears what happens in a sub-agent's turn that the running `call` runs, for the turn's
    /// observer and stream, tagged with the agent's name.
    fn nested(&self, call: &ToolCall, agent: &str, observation: &crate::observe::Observation<'_>) {
        let _ = (call, agent, observation);
    }

    /// Asks the agent's approver about a call `nested` that a hook of a sub-agent the running
    /// call runs escalated: a sub-agent answers to its parent's approver, with the parent's
    /// `turn`. Without an agent's turn to ask through, the call is refused.
    fn review_nested(
        &self,
        nested: &ToolCall,
        escalation: &crate::verdict::Escalation,
        turn: &Turn,
    ) -> impl Future<Output = Approval> + Send {
        let _ = (escalation, turn);
        std::future::ready(Approval::Reject(format!(
            "the call of `{}` was escalated, and nobody is there to approve it",
            nested.name
        )))
    }

    /// Asks the agent's approver what the running `call`'s tool asks of a person
    /// ([`Approver::review_question`](crate::approval::Approver::review_question)); without an agent's
    /// turn to ask through, the question is declined.
    fn question(
        &self,
        call: &ToolCall,
        question: &Question,
        turn: &Turn,
    ) -> impl Future<Output = Approval> + Send {
        let _ = (call, turn);
        std::future::ready(Approval::Reject(format!(
            "{} asked \"{}\", and nobody is there to answer",
            question.asked_by, question.message
        )))
    }
}

/// No per-tool hooks.
impl ToolRunner for () {
    fn after_tool<T: Tool + 'static>(
        &self,
        _output: &mut T::Output,
        _turn: &Turn,
    ) -> impl Future<Output = ()> + Send {
        std::future::ready(())
    }

    fn tool_error<T: Tool + 'static>(
        &self,
        _error: &mut T::Error,
        _turn: &Turn,
    ) -> impl Future<Output = ()> + Send {
        std::future::ready(())
    }
}

/// Tool names as a list built at compile time.
#[derive(Debug)]
pub struct NameList {
    name: &'static str,
    rest: Option<&'static NameList>,
}

impl NameList {
    /// Whether `list` holds `name`.
    pub const fn contains(mut list: Option<&NameList>, name: &str) -> bool {
        while let Some(node) = list {
            if same(node.name, name) {
                return true;
            }
            list = node.rest;
        }
        false
    }
}

/// `a == b`, at compile time.
const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut index = 0;
    while index < a.len() {
        if a[index] != b[index] {
            return false;
        }
        index += 1;
    }
    true
}

/// The empty tool set.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoTools;

impl ToolSet for NoTools {
    fn specs(&self, _specs: &mut Vec<ToolSpec>) {}

    async fn call(&self, _call: &ToolCall, _turn: &Turn) -> Option<ToolResult> {
        None
    }
}

/// A tool set grown by one tool: `Rest` and then `T`.
#[derive(Clone, Debug, Default)]
pub struct Toolbox<Rest, T> {
    rest: Rest,
    tool: T,
}

impl<Rest, T> Toolbox<Rest, T> {
    pub(crate) fn new(rest: Rest, tool: T) -> Self {
        Toolbox { rest, tool }
    }
}

impl<Rest: ToolSet, T: Tool> Toolbox<Rest, T> {
    /// Fails to compile where a second tool of one name is added: the model could not tell
    /// the two apart.
    #[expect(clippy::unnecessary_literal_unwrap, reason = "a message with no panic! quoted")]
    pub(crate) const ONE_TOOL_A_NAME: () = if NameList::contains(Rest::NAMES, T::NAME) {
        // `expect` rather than `panic!`: the error then quotes no macro invocation.
        None.expect("an agent has two tools of one name; rename one (`#[tool(name = \"...\")]`)")
    };
}

impl<Rest: ToolSet, T: Tool + 'static> ToolSet for Toolbox<Rest, T> {
    const NAMES: Option<&'static NameList> = Some(&NameList { name: T::NAME, rest: Rest::NAMES });

    fn specs(&self, specs: &mut Vec<ToolSpec>) {
        let from = specs.len();
        self.rest.specs(specs);
        // A set whose names are known only at run time (an MCP server's) may offer one of this
        // tool's: this tool takes its place (it is the one a call of the name runs), so the
        // model is offered one tool of each name. A sub-agent's is never taken: `build`
        // refuses the two.
        if Rest::NAMES.is_none()
            && !(Rest::NESTS && self.rest.nests(T::NAME))
            && let Some(at) = specs[from..].iter().position(|spec| spec.name == T::NAME)
        {
            specs.remove(from + at);
        }
        specs.push(ToolSpec::of(&self.tool));
    }

    fn tool_id(&self, name: &str) -> Option<ToolId> {
        if name == T::NAME { Some(ToolId::of::<T>()) } else { self.rest.tool_id(name) }
    }

    const HAS_ORIGINS: bool = Rest::HAS_ORIGINS;

    fn origin(&self, name: &str) -> Option<std::sync::Arc<ToolOrigin>> {
        if name == T::NAME { None } else { self.rest.origin(name) }
    }

    // Typed tools added to a set whose list changes (an MCP server's): the list still changes.
    const CHANGES: bool = Rest::CHANGES;

    const NESTS: bool = Rest::NESTS;
    const HANDS_OFF: bool = Rest::HANDS_OFF;

    fn nests(&self, name: &str) -> bool {
        Rest::NESTS && name != T::NAME && self.rest.nests(name)
    }

    const HAS_SEQUENTIAL: bool = T::SEQUENTIAL || Rest::HAS_SEQUENTIAL;

    fn sequential(&self, name: &str) -> bool {
        if name == T::NAME {
            T::SEQUENTIAL
        } else {
            Rest::HAS_SEQUENTIAL && self.rest.sequential(name)
        }
    }

    fn generation(&self) -> u64 {
        self.rest.generation()
    }

    fn idempotent(&self, name: &str) -> bool {
        if name == T::NAME { T::IDEMPOTENT } else { self.rest.idempotent(name) }
    }

    fn call(
        &self,
        call: &ToolCall,
        turn: &Turn,
    ) -> impl Future<Output = Option<ToolResult>> + Send {
        self.call_hooked(call, turn, &())
    }

    // The tool runs in this future, not in one of its own nested in it: a level less to poll
    // and to move the result out of.
    async fn call_hooked<H: ToolRunner>(
        &self,
        call: &ToolCall,
        turn: &Turn,
        hooks: &H,
    ) -> Option<ToolResult> {
        if call.name != T::NAME {
            return self.rest.call_hooked(call, turn, hooks).await;
        }
        let args = match T::Args::from_json(&call.arguments) {
            Ok(args) => args,
            Err(error) => return Some(invalid_arguments(call, &error)),
        };
        let returned = if T::WANTS_CALL_ID {
            // Its id, to the tool alone: calls running together each read their own.
            let at_hand = at_hand::AtHand::new(turn, Some(&call.id), None);
            hooks.run_tool(at_hand.scope(self.tool.call(args, turn))).await
        } else {
            hooks.run_tool(self.tool.call(args, turn)).await
        };
        let mut returned = match returned {
            Ok(returned) => returned,
            Err(after) => return Some(ToolResult::failure(call, ToolFailure::TimedOut { after })),
        };
        match &mut returned {
            Ok(output) => hooks.after_tool::<T>(output, turn).await,
            Err(error) => hooks.tool_error::<T>(error, turn).await,
        }
        Some(match returned {
            Ok(output) => match output_text(output) {
                Ok(text) => ToolResult::success(call, text),
                Err(error) => {
                    let message = format!("its output did not serialize: {error}");
                    ToolResult::failure(call, ToolFailure::Failed { message })
                }
            },
            Err(error) => {
                ToolResult::failure(call, ToolFailure::Failed { message: error.to_string() })
            }
        })
    }
}

/// The failed result of a call whose arguments did not deserialize.
#[cold]
fn invalid_arguments(call: &ToolCall, error: &dyn fmt::Display) -> ToolResult {
    let message = format!("{error} (in {})", call.arguments);
    ToolResult::failure(call, ToolFailure::InvalidArguments { message })
}

/// What the model reads of a tool's output: its JSON, or, for an output that serializes to a
/// string, the text itself rather than a JSON literal. A `String` output moves through as it is,
/// where serializing it would copy, escape and unescape it.
fn output_text<O: Serialize + 'static>(output: O) -> serde_json::Result<String> {
    // In an `Option`, to be taken out by value once known to be a `String`; `Some(output)`
    // serializes as `output` does.
    let mut slot = Some(output);
    if let Some(text) = (&mut slot as &mut dyn Any).downcast_mut::<Option<String>>() {
        return Ok(text.take().unwrap_or_default());
    }
    let mut json = serde_json::to_string(&slot)?;
    if !json.starts_with('"') {
        return Ok(json);
    }
    if json.contains('\\') {
        return Ok(serde_json::from_str(&json).unwrap_or(json));
    }
    // A literal without escapes is the text between its quotes.
    json.pop();
    json.remove(0);
    Ok(json)
}
