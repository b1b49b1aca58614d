//! Call limits: how many model calls, and how many calls of a tool, a turn and a conversation
//! may make.

use std::collections::{BTreeMap, BTreeSet};

use agentix::event::{AfterModel, BeforeModel, BeforeTool};
use agentix::{
    AssistantMessage, ToolCall, Turn, Verdict,
    conversation::TurnRef,
    hook,
    model::ModelRequest,
    scope::ScopeValue,
    tool::{ToolPattern, ToolPatternError},
};
use serde::{Deserialize, Serialize};

/// How a limit ends the turn once it is reached.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Reached {
    /// With [`Error::Halted`](agentix::Error::Halted), its hook the limit's
    /// (`model_call_limit`, `tool_call_limit`, `usage_limit`), its reason naming the limit.
    #[default]
    Error,
    /// With this text as its final answer, as if the model had said it (the `after_model` and
    /// `before_final` hooks read it; a typed agent's must parse as its output).
    Answer(String),
}

impl Reached {
    /// The verdict that ends the turn: `why` is the error's reason.
    fn verdict<E>(&self, why: impl FnOnce() -> String) -> Verdict<E>
    where
        E: agentix::event::Stoppable + agentix::event::StopsWith<AssistantMessage>,
    {
        match self {
            Reached::Answer(text) => Verdict::stop(AssistantMessage::text(text.clone())),
            Reached::Error => Verdict::halt(why()),
        }
    }
}

/// The counts the limits keep, in the conversation's scope: durable with it, so a conversation
/// revived from a store goes on counting where it was.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct CallCounts {
    /// The turn the `turn` counts are of.
    turn: TurnRef,
    /// The last model call counted, as (step, retries): two limits count it once.
    counted_model_call: Option<(u32, u32)>,
    model: Count,
    /// Per tool name.
    tools: BTreeMap<String, Count>,
    /// The ids of the turn's tool calls counted: two limits count a call once.
    counted_tool_calls: BTreeSet<String>,
}

/// A count in the turn and in the conversation.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
struct Count {
    turn: u32,
    conversation: u64,
}

impl ScopeValue for CallCounts {
    const KEY: &'static str = "agentix_hooks.call_counts";
}

/// The turn's counts, those of an earlier turn cleared.
fn counts(turn: &mut Turn) -> &mut CallCounts {
    let at = turn.turn_ref();
    let scope = turn.scope_mut();
    if scope.get::<CallCounts>().is_none() {
        scope.insert(CallCounts { turn: at, ..CallCounts::default() });
    }
    let counts = scope.get_mut::<CallCounts>().expect("inserted above");
    if counts.turn != at {
        counts.turn = at;
        counts.counted_model_call = None;
        counts.model.turn = 0;
        counts.counted_tool_calls.clear();
        counts.tools.values_mut().for_each(|count| count.turn = 0);
    }
    counts
}

/// The counts as they stand, without counting anything (zero when nothing was counted yet).
fn read(turn: &Turn) -> Option<&CallCounts> {
    turn.scope().get::<CallCounts>().filter(|counts| counts.turn == turn.turn_ref())
}

/// The limits a count is held to.
#[derive(Clone, Copy, Debug, Default)]
struct Limits {
    per_turn: Option<u32>,
    per_conversation: Option<u64>,
}

impl Limits {
    /// The limit `more` further calls would pass, counts as they are: where it holds (the turn
    /// or the conversation) and how many it allows.
    fn passed_by(&self, count: Count, more: u32) -> Option<(&'static str, u64)> {
        if let Some(most) = self.per_turn
            && u64::from(count.turn) + u64::from(more) > u64::from(most)
        {
            return Some(("turn", most.into()));
        }
        match self.per_conversation {
            Some(most) if count.conversation + u64::from(more) > most => {
                Some(("conversation", most))
            }
            _ => None,
        }
    }
}

/// Why a limit stopped a call: `what` is singular, then plural (`"model call"`, `"model calls"`).
fn reached_limit((of, most): (&str, u64), what: (&str, &str)) -> String {
    let what = if most == 1 { what.0 } else { what.1 };
    format!("the {of} reached its limit of {most} {what}")
}

/// Limits the model calls a turn, and a conversation, make: past a limit, the turn ends with an
/// error naming it, or with an answer of your choosing ([`Reached`]). Counted: each call the
/// loop makes (each step's, and each an `after_model` or `before_final` hook sends back) — a
/// `wrap_model` hook's own retries are [`Retry`](crate::Retry)'s `attempts` to bound. A
/// session's tasks share its conversation: per conversation is per session. A call is counted
/// once however many limits watch it, and each limit holds it to its own numbers.
///
/// ```
/// use agentix_hooks::{ModelCallLimit, Reached};
///
/// let limit = ModelCallLimit::new()
///     .per_turn(8)
///     .per_conversation(200)
///     .when_reached(Reached::Answer("I stopped here: this took too many steps.".into()));
/// # drop(limit);
/// ```
#[derive(Clone, Debug)]
pub struct ModelCallLimit {
    limits: Limits,
    reached: Reached,
}

impl ModelCallLimit {
    /// The hook's name, in errors and traces.
    pub const NAME: &'static str = "model_call_limit";

    /// No limit yet: set [`per_turn`](Self::per_turn), [`per_conversation`](Self::per_conversation).
    pub fn new() -> Self {
        ModelCallLimit { limits: Limits::default(), reached: Reached::Error }
    }

    /// At most `calls` model calls per turn.
    pub fn per_turn(mut self, calls: u32) -> Self {
        self.limits.per_turn = Some(calls);
        self
    }

    /// At most `calls` model calls in the conversation, all its turns together.
    pub fn per_conversation(mut self, calls: u64) -> Self {
        self.limits.per_conversation = Some(calls);
        self
    }

    /// How a reached limit ends the turn: with an error by default.
    pub fn when_reached(mut self, reached: Reached) -> Self {
        self.reached = reached;
        self
    }
}

impl Default for ModelCallLimit {
    fn default() -> Self {
        ModelCallLimit::new()
    }
}

#[hook]
impl agentix::Hook for ModelCallLimit {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    async fn before_model(
        &self,
        _request: &mut ModelRequest,
        turn: &mut Turn,
    ) -> Verdict<BeforeModel> {
        let call = (turn.step(), turn.retries());
        let counts = counts(turn);
        // Counted already, by another limit: held to this one's numbers all the same.
        let counted = counts.counted_model_call == Some(call);
        if let Some(limit) = self.limits.passed_by(counts.model, u32::from(!counted)) {
            return self.reached.verdict(|| reached_limit(limit, ("model call", "model calls")));
        }
        if counted {
            return Verdict::Continue;
        }
        counts.counted_model_call = Some(call);
        counts.model.turn += 1;
        counts.model.conversation += 1;
        Verdict::Continue
    }
}

/// Limits the calls of some tools (or of all) a turn, and a conversation, make. Past a limit,
/// by default the call is rejected — not run, and the model reads why — and the turn goes on
/// (LangChain's `continue`); or, [`when_reached`](Self::when_reached), the turn ends, with an
/// error naming the limit or an answer of your choosing: then the limit is checked when the
/// model asks, and a message asking for calls past it is not acted on at all. Each call is
/// counted once, when the first limit that watches it lets it through `before_tool` (a call
/// rejected for its limit is not counted; one a later hook or the approver refuses is), and
/// each limit holds it to its own numbers; the counts are per tool name. A session's tasks
/// share its conversation: per conversation is per session.
///
/// ```
/// use agentix_hooks::{Reached, ToolCallLimit};
///
/// let emails = ToolCallLimit::of("send_email")?.per_turn(1).per_conversation(20);
/// let searches = ToolCallLimit::of("search_*")?.per_turn(5);
/// let any = ToolCallLimit::all().per_turn(30).when_reached(Reached::Error);
/// # drop((emails, searches, any));
/// # Ok::<_, agentix::tool::ToolPatternError>(())
/// ```
#[derive(Clone, Debug)]
pub struct ToolCallLimit {
    /// The tools limited; `None`: all, together.
    tools: Option<ToolPattern>,
    limits: Limits,
    /// How the turn ends at the limit; `None`: it does not, the call is rejected.
    reached: Option<Reached>,
}

impl ToolCallLimit {
    /// The hook's name, in errors and traces.
    pub const NAME: &'static str = "tool_call_limit";

    /// The calls of the tools `pattern` names (`send_email`, `search_*`), together.
    pub fn of(pattern: impl Into<String>) -> Result<Self, ToolPatternError> {
        let tools = Some(ToolPattern::new(pattern)?);
        Ok(ToolCallLimit { tools, limits: Limits::default(), reached: None })
    }

    /// The calls of every tool, together.
    pub fn all() -> Self {
        ToolCallLimit { tools: None, limits: Limits::default(), reached: None }
    }

    /// At most `calls` per turn.
    pub fn per_turn(mut self, calls: u32) -> Self {
        self.limits.per_turn = Some(calls);
        self
    }

    /// At most `calls` in the conversation, all its turns together.
    pub fn per_conversation(mut self, calls: u64) -> Self {
        self.limits.per_conversation = Some(calls);
        self
    }

    /// Ends the turn at the limit, as `reached` says, instead of rejecting the call.
    pub fn when_reached(mut self, reached: Reached) -> Self {
        self.reached = Some(reached);
        self
    }

    fn limits(&self, name: &str) -> bool {
        self.tools.as_ref().is_none_or(|pattern| pattern.matches(name))
    }

    /// The calls counted so far of the tools limited.
    fn counted(&self, counts: Option<&CallCounts>, conversation: Option<&CallCounts>) -> Count {
        let mut count = Count::default();
        if let Some(counts) = counts {
            for (_, tool) in counts.tools.iter().filter(|(name, _)| self.limits(name)) {
                count.turn = count.turn.saturating_add(tool.turn);
            }
        }
        if let Some(counts) = conversation {
            for (_, tool) in counts.tools.iter().filter(|(name, _)| self.limits(name)) {
                count.conversation = count.conversation.saturating_add(tool.conversation);
            }
        }
        count
    }

    /// Why the limit stopped a call.
    fn reached_limit(&self, limit: (&str, u64)) -> String {
        match &self.tools {
            Some(pattern) => {
                let what = (format!("call of `{pattern}`"), format!("calls of `{pattern}`"));
                reached_limit(limit, (&what.0, &what.1))
            }
            None => reached_limit(limit, ("tool call", "tool calls")),
        }
    }
}

#[hook]
impl agentix::Hook for ToolCallLimit {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    /// Ending the turn: the model's message is checked whole, before any of its calls runs.
    async fn after_model(
        &self,
        message: &mut AssistantMessage,
        turn: &mut Turn,
    ) -> Verdict<AfterModel> {
        let Some(reached) = &self.reached else {
            return Verdict::Continue;
        };
        let asked = message.tool_calls().filter(|call| self.limits(&call.name)).count();
        if asked == 0 {
            return Verdict::Continue;
        }
        let conversation = turn.scope().get::<CallCounts>();
        let count = self.counted(read(turn), conversation);
        let asked = u32::try_from(asked).unwrap_or(u32::MAX);
        match self.limits.passed_by(count, asked) {
            None => Verdict::Continue,
            Some(limit) => reached.verdict(|| self.reached_limit(limit)),
        }
    }

    async fn before_tool(&self, call: &mut ToolCall, turn: &mut Turn) -> Verdict<BeforeTool> {
        if !self.limits(&call.name) {
            return Verdict::Continue;
        }
        let counts = counts(turn);
        // Counted already, by another limit: held to this one's numbers all the same.
        let counted = counts.counted_tool_calls.contains(&call.id);
        let count = self.counted(Some(counts), Some(counts));
        if let Some(limit) = self.limits.passed_by(count, u32::from(!counted)) {
            // Reached at the call: a rejecting limit; one that ends the turn stopped the
            // message already, unless a hook before it added calls.
            let why = self.reached_limit(limit);
            return match self.reached {
                None => Verdict::reject(format!("{why}; not run")),
                Some(_) => Verdict::halt(why),
            };
        }
        if counted {
            return Verdict::Continue;
        }
        counts.counted_tool_calls.insert(call.id.clone());
        let tool = counts.tools.entry(call.name.clone()).or_default();
        tool.turn += 1;
        tool.conversation += 1;
        Verdict::Continue
    }
}
