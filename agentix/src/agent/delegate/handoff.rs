//! Handoffs: the model hands the rest of its turn to another agent, which answers the user in
//! its place ([`Handoff`]). The receiving agent sees the conversation as its [`History`]
//! says, and the user's message; its answer is the turn's, through the handing agent's own
//! `after_model` and `before_final` hooks, and the log records the handoff — the call of
//! `transfer_to_<agent>` and its result, right before the answer.

use crate::conversation::{Config, Conversation, Entry, TurnRef};
use crate::message::{Part, ToolCall, ToolFailure, ToolResult};
use crate::tool::{ToolRunner, ToolSpec};
use crate::turn::Turn;

use super::Delegation;
use super::sub_agent::{SubAgent, answered, child_conversation, run_child};

/// What the receiving agent sees of the conversation before the turn it takes over.
#[derive(Clone, Copy, Debug, Default)]
pub enum History {
    /// Each earlier turn's user message and final answer, not its tool calls: what the user
    /// saw.
    #[default]
    Answers,
    /// The last `n` earlier turns, as [`Answers`](History::Answers) shows them.
    LastTurns(usize),
    /// Nothing: the user's message alone.
    Nothing,
    /// The entries a function keeps of the earlier log: whole turns, each opened by its user
    /// message (they are numbered again from 1). A log that breaks a rule fails the handoff,
    /// naming the rule.
    Filter(fn(&[Entry]) -> Vec<Entry>),
}

/// Another agent the model may hand the rest of its turn to, through the tool
/// `transfer_to_<name>`. Added with [`AgentBuilder::handoff`](crate::AgentBuilder::handoff);
/// a parent under a [`Policy`](crate::pipeline::Policy) takes only an agent under the same one.
///
/// ```
/// use agentix::{Agent, Conversation, ScriptedModel, delegate::Handoff};
/// use serde_json::json;
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let billing = Agent::builder(ScriptedModel::new().text("Your invoice is paid.")).build();
/// let model = ScriptedModel::new().tool_call("transfer_to_billing", json!({}));
/// let triage = Agent::builder(model)
///     .handoff(Handoff::new("billing", "Answers questions about invoices.", billing))
///     .build();
/// let answer = triage.run(&mut Conversation::new(), "Is my invoice paid?").await?;
/// assert_eq!(answer.joined_text(), "Your invoice is paid.");
/// # Ok::<_, agentix::Error>(())
/// # }).unwrap();
/// ```
pub struct Handoff<R> {
    agent: R,
    name: String,
    tool: String,
    description: String,
    history: History,
    config: Config,
}

impl<R: SubAgent> Handoff<R> {
    /// `agent`, named `name`, which the model is told `description` of.
    pub fn new(name: impl Into<String>, description: impl Into<String>, agent: R) -> Self {
        let name = name.into();
        Handoff {
            agent,
            tool: format!("transfer_to_{name}"),
            name,
            description: description.into(),
            history: History::default(),
            config: Config::default(),
        }
    }

    /// What the receiving agent sees of the conversation: [`History::Answers`] by default.
    pub fn history(mut self, history: History) -> Self {
        self.history = history;
        self
    }

    /// The configuration of the receiving agent's conversation; its `turn_timeout` is cut to
    /// what is left of the handing turn's.
    pub fn config(mut self, config: Config) -> Self {
        self.config = config;
        self
    }

    /// The tool's name: `transfer_to_<name>`.
    pub fn tool_name(&self) -> &str {
        &self.tool
    }

    /// The receiving agent's conversation: the earlier turns its history keeps.
    fn conversation(&self, turn: &Turn, call: &ToolCall) -> Result<Conversation, String> {
        let earlier = turn.history();
        let kept = match self.history {
            History::Answers => answers(earlier, usize::MAX),
            History::LastTurns(n) => answers(earlier, n),
            History::Nothing => Vec::new(),
            History::Filter(filter) => filter(earlier),
        };
        let (log, turns) = numbered(kept);
        child_conversation(&self.config, turn, call, &self.name, log, turns)
            .map_err(|error| format!("the history for `{}` is no log: {error}", self.name))
    }
}

impl<R: SubAgent> Delegation for Handoff<R> {
    const HANDS_OFF: bool = true;

    // The turn goes to the other agent: nothing else of the step runs beside it.
    fn runs_alone(&self) -> bool {
        true
    }

    fn tool_name(&self) -> &str {
        Handoff::tool_name(self)
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.tool.clone(),
            description: format!("Hand the conversation to {}: {}", self.name, self.description),
            parameters: serde_json::json!({
                "type": "object",
                "properties": {
                    "note": {
                        "type": "string",
                        "description": "What the receiving agent needs to know that the \
                            conversation does not show it: what this turn has found so far."
                    }
                }
            }),
        }
    }

    /// Runs the receiving agent on the turn's user message, with the history it is to see;
    /// its answer is left on the turn for the loop.
    async fn run<H: ToolRunner>(&self, call: &ToolCall, turn: &Turn, hooks: &H) -> ToolResult {
        if turn.handed_off() {
            let message = "the turn was already handed to another agent".to_owned();
            return ToolResult::failure(call, ToolFailure::Failed { message });
        }
        let mut conversation = match self.conversation(turn, call) {
            Ok(conversation) => conversation,
            Err(message) => return ToolResult::failure(call, ToolFailure::Failed { message }),
        };
        // The user's message, and the handing model's note beside it, if it left one.
        let mut message = turn.user_message().clone();
        if let Some(note) = call.arguments.get("note").and_then(|note| note.as_str())
            && !note.trim().is_empty()
        {
            message.content.push(Part::Text(format!("(Handed over with this note: {note})")));
        }
        let outcome =
            run_child(&self.agent, &self.name, &mut conversation, message, call, turn, hooks).await;
        match answered(call, &self.name, outcome) {
            Ok(answer) => {
                turn.hand_off(answer);
                ToolResult::success(call, format!("`{}` answered the user", self.name))
            }
            Err(failed) => failed,
        }
    }
}

impl<R> std::fmt::Debug for Handoff<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Handoff").field("name", &self.name).finish_non_exhaustive()
    }
}

/// The last `n` turns of `earlier` that ended in an answer: each one's user message and that
/// answer.
fn answers(earlier: &[Entry], n: usize) -> Vec<Entry> {
    let mut pairs: Vec<(Entry, Entry)> = Vec::new();
    let mut opened: Option<&Entry> = None;
    let mut answer: Option<&Entry> = None;
    let mut close = |opened: Option<&Entry>, answer: Option<&Entry>| {
        if let (Some(user), Some(answer)) = (opened, answer) {
            pairs.push((user.clone(), answer.clone()));
        }
    };
    for entry in earlier {
        match entry {
            Entry::User { .. } => {
                close(opened.take(), answer.take());
                opened = Some(entry);
            }
            Entry::Assistant { message, .. } => {
                answer = (!message.calls_tools()).then_some(entry);
            }
            _ => {}
        }
    }
    close(opened, answer);
    let skip = pairs.len().saturating_sub(n);
    pairs.into_iter().skip(skip).flat_map(|(user, answer)| [user, answer]).collect()
}

/// `entries`, their turns numbered from 1 in the order their user messages open them (a
/// session's task tag dropped: the receiving agent runs no session), and how many turns.
fn numbered(entries: Vec<Entry>) -> (Vec<Entry>, u64) {
    let mut turns: Vec<TurnRef> = Vec::new();
    let log = entries
        .into_iter()
        .map(|mut entry| {
            if let Entry::User { turn, task, .. } = &mut entry {
                turns.push(*turn);
                *task = None;
            }
            let old = entry.turn();
            let new = turns.iter().rposition(|opened| *opened == old).map_or(0, |at| at as u64 + 1);
            entry.set_turn(TurnRef(new));
            entry
        })
        .collect();
    let count = turns.len() as u64;
    (log, count)
}
