//! Tool selection per step: which of the agent's tools a step offers the model — chosen by a
//! predicate, or by a small model — and a call of a tool the step did not offer rejected.

use std::fmt;
use std::sync::Arc;

use agentix::event::{BeforeModel, BeforeTool};
use agentix::{
    Message, Model, ToolCall, Turn, Verdict,
    conversation::TurnRef,
    hook,
    model::ModelRequest,
    scope::ScopeValue,
    tool::{ToolPattern, ToolPatternError, ToolSpec},
};
use serde::{Deserialize, Serialize};

use crate::globs::patterns_of;

/// The tools the step at hand offers, when a selection hid some: in the conversation's scope,
/// where the step's `before_tool` reads it. Every selecting hook narrows the request's tools
/// further, and this is what is left: a hook that hides nothing widens nothing.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Offered {
    turn: TurnRef,
    step: u32,
    names: Vec<String>,
}

impl ScopeValue for Offered {
    const KEY: &'static str = "agentix_hooks.offered_tools";
}

/// A step's place in the turn.
fn step_of(turn: &Turn) -> (TurnRef, u32) {
    (turn.turn_ref(), turn.step())
}

/// What the step at hand offers, if a selection hid tools of it.
fn offered(turn: &Turn) -> Option<&Offered> {
    let offered = turn.scope().get::<Offered>()?;
    ((offered.turn, offered.step) == step_of(turn)).then_some(offered)
}

/// Keeps in `request` only the tools `names` names (in the agent's order, and only among those
/// it still offers), and remembers what is left for the step's calls.
fn offer(request: &mut ModelRequest, turn: &mut Turn, names: &[String]) {
    if request.tools.iter().all(|spec| names.contains(&spec.name)) {
        return;
    }
    let kept = request.tools.iter().filter(|spec| names.contains(&spec.name));
    request.tools = kept.cloned().collect::<Vec<_>>().into();
    let left = request.tools.iter().map(|spec| spec.name.clone()).collect();
    let (at, step) = step_of(turn);
    turn.scope_mut().insert(Offered { turn: at, step, names: left });
}

/// A call of a tool the step did not offer: rejected, as if the tool did not exist.
fn check(call: &ToolCall, turn: &Turn) -> Verdict<BeforeTool> {
    match offered(turn) {
        Some(offered) if !offered.names.contains(&call.name) => {
            Verdict::reject(format!("`{}` is not offered in this step", call.name))
        }
        _ => Verdict::Continue,
    }
}

/// What a [`ToolSelector`] chose for a step, so that the step sent back (RETRY) keeps it.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Chosen {
    turn: TurnRef,
    step: u32,
    /// `None`: every tool (a selection that failed, told to offer all).
    names: Option<Vec<String>>,
}

impl ScopeValue for Chosen {
    const KEY: &'static str = "agentix_hooks.chosen_tools";
}

/// Offers in each step only the tools a predicate keeps: `keep(tool, turn)` — on the turn's
/// scope (the user's role, a mode), its step, what was said. A call of a hidden tool (a model
/// that remembers it from an earlier step) is rejected, and the model reads that it is not
/// offered. The predicate is asked for every tool before each model call; the request of a
/// step that hides nothing is left as it is.
///
/// ```
/// use agentix_hooks::ToolFilter;
///
/// // Nothing that writes before the second step.
/// let filter = ToolFilter::new(|tool, turn| turn.step() > 0 || !tool.name.starts_with("write_"));
/// # drop(filter);
/// ```
#[derive(Clone)]
pub struct ToolFilter {
    keep: Arc<Keeps>,
}

/// Whether a step offers a tool.
type Keeps = dyn Fn(&ToolSpec, &Turn) -> bool + Send + Sync;

impl ToolFilter {
    /// The hook's name, in errors and traces.
    pub const NAME: &'static str = "tool_filter";

    /// Offers the tools `keep` keeps.
    pub fn new(keep: impl Fn(&ToolSpec, &Turn) -> bool + Send + Sync + 'static) -> Self {
        ToolFilter { keep: Arc::new(keep) }
    }
}

impl fmt::Debug for ToolFilter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolFilter").finish_non_exhaustive()
    }
}

#[hook]
impl agentix::Hook for ToolFilter {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    async fn before_model(
        &self,
        request: &mut ModelRequest,
        turn: &mut Turn,
    ) -> Verdict<BeforeModel> {
        let (shared, tools) = (&*turn, &request.tools);
        // The predicate asked once a tool: those before the first it hides were kept.
        let Some(hidden) = tools.iter().position(|spec| !(self.keep)(spec, shared)) else {
            return Verdict::Continue;
        };
        let after = tools[hidden + 1..].iter().filter(|spec| (self.keep)(spec, shared));
        let kept = tools[..hidden].iter().chain(after);
        let names: Vec<String> = kept.map(|spec| spec.name.clone()).collect();
        offer(request, turn, &names);
        Verdict::Continue
    }

    async fn before_tool(&self, call: &mut ToolCall, turn: &mut Turn) -> Verdict<BeforeTool> {
        check(call, turn)
    }
}

/// Offers in each step only the tools a small, cheap model picks as relevant to the user's
/// message — for an agent with more tools than a model chooses among well, or than are worth
/// their tokens. The selector reads the tools' names and descriptions and the user's message,
/// and answers with a JSON array of names; at most [`max_tools`](ToolSelector::max_tools) are
/// offered, with those [`always`](ToolSelector::always) names besides. It is asked once per
/// step (a step sent back keeps its selection), and not at all when the agent has no more
/// tools than the most it may offer. A call of a tool the step did not offer is rejected. If
/// the selector fails, or answers with no name of a tool, the turn halts with an error that
/// says so — unless [`offer_all_on_failure`](ToolSelector::offer_all_on_failure), when the
/// step offers every tool.
///
/// The selector's call is its own, beside the turn's: it is not journaled, audited or traced
/// as the turn's model calls are, nor counted in the turn's usage. A journaled turn that
/// replays a step after a crash asks again, and may be answered otherwise: a replay that then
/// meets the recorded call of a tool no longer offered reports the journal diverged. Under a
/// journal, choose with a [`ToolFilter`] (or a selector that answers the same each time).
///
/// Selections narrow one another: each hook keeps only some of the tools the hooks before it
/// left, and a call is checked against what is left.
///
/// ```
/// use agentix::ScriptedModel;
/// use agentix_hooks::ToolSelector;
///
/// let selector = ScriptedModel::new().text(r#"["search_docs"]"#);
/// let select = ToolSelector::new(selector).max_tools(3).always(["ask_user"])?;
/// # drop(select);
/// # Ok::<_, agentix::tool::ToolPatternError>(())
/// ```
pub struct ToolSelector<M> {
    model: M,
    model_name: Option<String>,
    max_tools: usize,
    always: Vec<ToolPattern>,
    offer_all_on_failure: bool,
}

impl<M: Model> ToolSelector<M> {
    /// The hook's name, in errors and traces.
    pub const NAME: &'static str = "tool_selector";

    /// Asks `model` to choose; at most 5 tools.
    pub fn new(model: M) -> Self {
        ToolSelector {
            model,
            model_name: None,
            max_tools: 5,
            always: Vec::new(),
            offer_all_on_failure: false,
        }
    }

    /// The model to ask for, where `model` serves several (`openai:gpt-4.1-nano`).
    pub fn model_name(mut self, name: impl Into<String>) -> Self {
        self.model_name = Some(name.into());
        self
    }

    /// The most tools the selector may choose (at least 1).
    pub fn max_tools(mut self, tools: usize) -> Self {
        self.max_tools = tools.max(1);
        self
    }

    /// Always offers the tools `patterns` name, besides those chosen.
    pub fn always<I>(mut self, patterns: I) -> Result<Self, ToolPatternError>
    where
        I: IntoIterator,
        I::Item: Into<String>,
    {
        self.always.extend(patterns_of(patterns)?);
        Ok(self)
    }

    /// Offers every tool in a step whose selection failed, instead of halting the turn.
    pub fn offer_all_on_failure(mut self) -> Self {
        self.offer_all_on_failure = true;
        self
    }

    fn is_always(&self, name: &str) -> bool {
        self.always.iter().any(|pattern| pattern.matches(name))
    }

    /// The request that asks the selector to choose among `tools` for `turn`'s user message.
    fn ask(&self, tools: &[&ToolSpec], turn: &Turn) -> ModelRequest {
        let mut listed = String::new();
        for tool in tools {
            listed.push_str(&format!("- {}: {}\n", tool.name, tool.description));
        }
        let system = format!(
            "You choose the tools an assistant needs for a user's request. Answer with a JSON \
             array of at most {} tool names from the list, the most relevant first, and \
             nothing else.",
            self.max_tools
        );
        let asked =
            format!("Tools:\n{listed}\nThe user's request:\n{}", turn.user_message().text());
        ModelRequest {
            system: Some(system.into()),
            messages: vec![Message::user(asked)],
            model: self.model_name.clone(),
            ..ModelRequest::default()
        }
    }

    /// The tools chosen: the names in the first JSON array of `answer` that name one of
    /// `tools`, at most `max_tools` of them.
    fn chosen(&self, answer: &str, tools: &[&ToolSpec]) -> Result<Vec<String>, String> {
        let start = answer
            .find('[')
            .ok_or_else(|| format!("the selector's answer holds no JSON array: {answer:?}"))?;
        // The array that starts there, whatever follows it.
        let mut values = serde_json::Deserializer::from_str(&answer[start..]).into_iter();
        let names: Vec<String> = match values.next() {
            Some(Ok(names)) => names,
            Some(Err(error)) => {
                return Err(format!("the selector's answer is not an array of names: {error}"));
            }
            None => return Err(format!("the selector's answer holds no JSON array: {answer:?}")),
        };
        let mut chosen: Vec<String> = Vec::new();
        for name in names {
            if tools.iter().any(|tool| tool.name == name) && !chosen.contains(&name) {
                chosen.push(name);
            }
        }
        chosen.truncate(self.max_tools);
        if chosen.is_empty() {
            return Err(format!("the selector named none of the tools: {answer:?}"));
        }
        Ok(chosen)
    }

    /// The tools the step offers: the selector's choice and those always offered.
    async fn select(&self, request: &ModelRequest, turn: &Turn) -> Result<Vec<String>, String> {
        let choosable: Vec<&ToolSpec> =
            request.tools.iter().filter(|tool| !self.is_always(&tool.name)).collect();
        let answer = self
            .model
            .complete(&self.ask(&choosable, turn))
            .await
            .map_err(|error| format!("the selector failed: {error}"))?;
        let mut names = self.chosen(&answer.message.joined_text(), &choosable)?;
        let always = request.tools.iter().filter(|tool| self.is_always(&tool.name));
        names.extend(always.map(|tool| tool.name.clone()));
        Ok(names)
    }
}

impl<M> fmt::Debug for ToolSelector<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolSelector")
            .field("model_name", &self.model_name)
            .field("max_tools", &self.max_tools)
            .field("always", &self.always)
            .field("offer_all_on_failure", &self.offer_all_on_failure)
            .finish_non_exhaustive()
    }
}

#[hook]
impl<M: Model> agentix::Hook for ToolSelector<M> {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    async fn before_model(
        &self,
        request: &mut ModelRequest,
        turn: &mut Turn,
    ) -> Verdict<BeforeModel> {
        // A step sent back keeps its selection.
        let chosen = turn.scope().get::<Chosen>().filter(|c| (c.turn, c.step) == step_of(turn));
        let names = match chosen {
            Some(chosen) => chosen.names.clone(),
            None => {
                let always = request.tools.iter().filter(|tool| self.is_always(&tool.name));
                if request.tools.len() - always.count() <= self.max_tools {
                    return Verdict::Continue;
                }
                let names = match self.select(request, turn).await {
                    Ok(names) => Some(names),
                    Err(_) if self.offer_all_on_failure => None,
                    Err(why) => return Verdict::halt(why),
                };
                let (at, step) = step_of(turn);
                turn.scope_mut().insert(Chosen { turn: at, step, names: names.clone() });
                names
            }
        };
        if let Some(names) = names {
            offer(request, turn, &names);
        }
        Verdict::Continue
    }

    async fn before_tool(&self, call: &mut ToolCall, turn: &mut Turn) -> Verdict<BeforeTool> {
        check(call, turn)
    }
}
