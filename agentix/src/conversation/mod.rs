//! The conversation: the canonical, append-only log and its config.

mod ledger;
mod validate;

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::approval::record::{Approval, PendingApproval, Suspension};
use crate::event::kind::EventKind;
use crate::message::{AssistantMessage, Message, Part, Role, ToolResult};
use crate::scope::Scope;
use crate::task::TaskTag;

pub(crate) use ledger::Ledger;
pub use validate::{InvalidLog, LogProblem};

/// Limits that bound a turn.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Config {
    /// Model calls a turn may make, not counting retries.
    pub max_steps: u32,
    /// RETRY verdicts a turn may act on, across `after_model` and `before_final`.
    pub max_retries: u32,
    /// Tokens a model request may hold in all: the model's context window, less room for its
    /// answer. [`Config::UNBOUNDED`] sets none: requests are then never compacted, and a step's
    /// request is rendered without counting a token (one with injections or retry feedback
    /// still counts the log, to hold the injections to `injection_reserve`) — the model's own
    /// window is the only limit.
    pub context_budget: usize,
    /// Tokens set aside for what hooks inject into a turn. The rest of the request (system
    /// prompt, history, the turn itself) is compacted to `context_budget - injection_reserve`;
    /// injections over the reserve fail the turn, naming the hook.
    pub injection_reserve: usize,
    /// Whether a turn may end with an empty answer (no text, no tool calls). Off by default:
    /// such an answer fails the turn with [`Error::EmptyAnswer`](crate::Error::EmptyAnswer)
    /// rather than joining the log, where most providers would refuse the requests after it.
    pub allow_empty_answers: bool,
    /// How long one tool call may run (through the tool set, inside the `wrap_tool` hooks);
    /// past it the call fails with [`ToolFailure::TimedOut`](crate::message::ToolFailure::TimedOut) and
    /// the turn goes on. `None`: no limit.
    #[serde(rename = "tool_timeout_ms", with = "crate::support::millis::option")]
    pub tool_timeout: Option<Duration>,
    /// How many of a step's tool calls run at once. A step whose model asks for several tools
    /// runs them together, each under its own `tool_timeout`, up to this many at a time (a
    /// [sequential](crate::Tool::SEQUENTIAL) tool's call runs alone); hooks still decide and
    /// settle them in call order. `1` runs them one after another. Default 8.
    pub tool_concurrency: usize,
    /// How long one model call may take (inside the `wrap_model` hooks, which may retry it);
    /// past it the call fails with [`ModelError::TimedOut`](crate::model::ModelError::TimedOut).
    /// `None`: no limit.
    #[serde(rename = "model_timeout_ms", with = "crate::support::millis::option")]
    pub model_timeout: Option<Duration>,
    /// How long a turn may run, from `pre` to its final answer (`post` runs after, bounded by
    /// its hooks' own timeouts); past it the turn ends with
    /// [`Error::TurnTimedOut`](crate::Error::TurnTimedOut), the log keeping what ran. `None`:
    /// no limit.
    #[serde(rename = "turn_timeout_ms", with = "crate::support::millis::option")]
    pub turn_timeout: Option<Duration>,
}

impl Config {
    /// A [`context_budget`](Config::context_budget) that is none: nothing compacted, and most
    /// requests rendered without counting.
    ///
    /// ```
    /// use agentix::{Config, Conversation};
    ///
    /// let conversation =
    ///     Conversation::with_config(Config { context_budget: Config::UNBOUNDED, ..Config::default() });
    /// assert!(conversation.config().unbounded());
    /// ```
    pub const UNBOUNDED: usize = usize::MAX;

    /// Whether the conversation has no context budget ([`Config::UNBOUNDED`]).
    pub fn unbounded(&self) -> bool {
        self.context_budget == Config::UNBOUNDED
    }

    /// What the request but its injections may hold: `context_budget - injection_reserve`, the
    /// size compaction keeps a request to.
    pub(crate) fn compaction_target(&self) -> usize {
        self.context_budget.saturating_sub(self.injection_reserve)
    }
}

impl Default for Config {
    fn default() -> Self {
        Config {
            max_steps: 16,
            max_retries: 3,
            context_budget: 100_000,
            injection_reserve: 8_000,
            allow_empty_answers: false,
            tool_timeout: None,
            tool_concurrency: 8,
            model_timeout: None,
            turn_timeout: None,
        }
    }
}

/// Identifies a turn within its conversation; it correlates log entries, traces and audits.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct TurnRef(pub u64);

impl fmt::Display for TurnRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "turn {}", self.0)
    }
}

/// One record of the canonical log.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "entry", rename_all = "snake_case")]
pub enum Entry {
    /// The user message that opened a turn.
    User {
        /// The turn it opened.
        turn: TurnRef,
        /// What the user said.
        message: Message,
        /// The session's task the turn ran, if it ran one; every entry of the turn belongs to
        /// it ([`Conversation::task_of`]).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        task: Option<TaskTag>,
    },
    /// An accepted assistant message: a step's tool calls, or the turn's final answer.
    Assistant {
        /// The turn.
        turn: TurnRef,
        /// What the model said.
        message: AssistantMessage,
    },
    /// The answers to one assistant message's tool calls, one per call, in call order.
    ToolResults {
        /// The turn.
        turn: TurnRef,
        /// The results.
        results: Vec<ToolResult>,
    },
    /// A hook halted the turn — or, at a session's `step_start`, rejected its task: the turn
    /// ends there either way, and `event` says which.
    Halted {
        /// The turn.
        turn: TurnRef,
        /// Where it halted.
        event: EventKind,
        /// The hook that halted.
        hook: String,
        /// Why.
        reason: String,
    },
    /// What a `durable` hook produced: it joins the conversation and every later turn sees it.
    HookOutput {
        /// The turn.
        turn: TurnRef,
        /// Where the hook ran (`pre` or `post`).
        event: EventKind,
        /// The hook.
        hook: String,
        /// What it produced; it reaches the model with the user's role.
        parts: Vec<Part>,
    },
    /// A hook failed and, as its `on_error = skip` says, the turn went on without what it
    /// would have added.
    HookSkipped {
        /// The turn.
        turn: TurnRef,
        /// Where the hook ran.
        event: EventKind,
        /// The hook.
        hook: String,
        /// How it failed.
        reason: String,
    },
    /// The turn ended with an error.
    Failed {
        /// The turn.
        turn: TurnRef,
        /// The error, displayed.
        error: String,
    },
    /// The turn stopped at a tool call that waits for a person's approval
    /// ([`Approval::Suspend`]): the step as it stood. The log ends here until
    /// [`Agent::resume`](crate::Agent::resume) answers; no turn opens meanwhile.
    Suspended {
        /// The turn.
        turn: TurnRef,
        /// The step, the waiting call, and what the turn had counted.
        suspension: Box<Suspension>,
    },
    /// The answer a suspended turn resumed with; the step goes on from the waiting call, and
    /// joins the log whole (its assistant message and every result) when it ends.
    Resumed {
        /// The turn.
        turn: TurnRef,
        /// The answer.
        approval: Box<Approval>,
        /// Who gave it, when the caller said ([`Approval::by`]).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        by: Option<String>,
    },
    /// A summary of the log's entries before `through`, made by the agent's
    /// [`Summarizer`](crate::context::Summarizer) when compaction dropped them: from then on, requests
    /// carry it in their place. Each summary folds in the one before it, so a message is
    /// summarized once.
    Summary {
        /// The turn it was made in.
        turn: TurnRef,
        /// The log index where the summarized entries end: the start of a turn.
        through: usize,
        /// The summary.
        text: String,
    },
    /// What a sub-agent that keeps its conversation ([`AgentTool::keep_conversation`]) said
    /// in one of the turn's calls: the new entries of its conversation. Its conversation is
    /// these, in the order the log holds them, for its agent: kept beside the parent's, stored
    /// with it.
    ///
    /// [`AgentTool::keep_conversation`]: crate::delegate::AgentTool::keep_conversation
    Delegated {
        /// The parent's turn.
        turn: TurnRef,
        /// The call that ran the sub-agent.
        call: String,
        /// The sub-agent: the tool's name.
        agent: String,
        /// Its conversation's entries from the call.
        log: Vec<Entry>,
    },
}

impl Entry {
    /// The turn this entry belongs to.
    pub fn turn(&self) -> TurnRef {
        match self {
            Entry::User { turn, .. }
            | Entry::Assistant { turn, .. }
            | Entry::ToolResults { turn, .. }
            | Entry::Halted { turn, .. }
            | Entry::HookOutput { turn, .. }
            | Entry::HookSkipped { turn, .. }
            | Entry::Failed { turn, .. }
            | Entry::Suspended { turn, .. }
            | Entry::Resumed { turn, .. }
            | Entry::Summary { turn, .. }
            | Entry::Delegated { turn, .. } => *turn,
        }
    }

    /// Moves the entry to turn `to`: a log rebuilt from another's (a handoff's history).
    pub(crate) fn set_turn(&mut self, to: TurnRef) {
        match self {
            Entry::User { turn, .. }
            | Entry::Assistant { turn, .. }
            | Entry::ToolResults { turn, .. }
            | Entry::Halted { turn, .. }
            | Entry::HookOutput { turn, .. }
            | Entry::HookSkipped { turn, .. }
            | Entry::Failed { turn, .. }
            | Entry::Suspended { turn, .. }
            | Entry::Resumed { turn, .. }
            | Entry::Summary { turn, .. }
            | Entry::Delegated { turn, .. } => *turn = to,
        }
    }

    /// The message this entry contributes to a model's context; `None` for records that are
    /// not conversation (halts, failures).
    // Inline: compiled where the request is rendered, beside that crate's clones of messages.
    #[inline]
    pub fn to_message(&self) -> Option<Message> {
        match self {
            Entry::User { message, .. } => Some(message.clone()),
            Entry::Assistant { message, .. } => Some(message.clone().into()),
            Entry::ToolResults { results, .. } => Some(Message {
                role: Role::Tool,
                content: results.iter().cloned().map(Part::ToolResult).collect(),
            }),
            Entry::HookOutput { parts, .. } => {
                Some(Message { role: Role::User, content: parts.clone() })
            }
            // A summary stands in for the entries it covers, at the head of a request, not here.
            // A suspended step reaches the model whole, once resumed.
            Entry::Halted { .. }
            | Entry::HookSkipped { .. }
            | Entry::Failed { .. }
            | Entry::Suspended { .. }
            | Entry::Resumed { .. }
            | Entry::Summary { .. }
            | Entry::Delegated { .. } => None,
        }
    }
}

/// The durable record of a conversation: the canonical log, its config and its scope. It
/// serializes with serde (the scope's resources excepted) and a revived conversation goes on
/// where it left off.
///
/// The log is append-only and only the agent loop appends to it; it always reads as a valid
/// conversation (every tool call answered), whether a turn completed, halted, failed or was
/// dropped midway. A conversation read back with serde is checked as it is read
/// ([`validate`](Conversation::validate)): a log that breaks a rule does not load, and the error
/// names the entry.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(try_from = "Stored")]
pub struct Conversation {
    /// The stored form's version, [`Conversation::FORMAT`], written first.
    format: Format,
    /// Its id where it is kept (a store's key): what tools' idempotency keys start with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    id: Option<String>,
    config: Config,
    log: Vec<Entry>,
    turns: u64,
    #[serde(default)]
    scope: Scope,
    /// Each entry's tokens, counted once, kept between turns.
    #[serde(skip)]
    pub(crate) ledger: Ledger,
    /// How many entries the log held when it was loaded (or last marked saved).
    #[serde(skip)]
    saved: usize,
}

/// Writes the stored form's version: [`Conversation::FORMAT`].
#[derive(Debug, Default)]
struct Format;

impl Serialize for Format {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u32(Conversation::FORMAT)
    }
}

/// A conversation as stored, before its log is checked.
#[derive(Deserialize)]
struct Stored {
    /// Written before the stored form had a version: the first.
    #[serde(default = "first_format")]
    format: u32,
    #[serde(default)]
    id: Option<String>,
    config: Config,
    log: Vec<Entry>,
    turns: u64,
    #[serde(default)]
    scope: Scope,
}

fn first_format() -> u32 {
    1
}

impl TryFrom<Stored> for Conversation {
    type Error = NotLoaded;

    fn try_from(stored: Stored) -> Result<Self, NotLoaded> {
        let Stored { format, id, config, log, turns, scope } = migrate(stored)?;
        debug_assert_eq!(format, Conversation::FORMAT);
        let conversation = Conversation::from_parts(config, log, turns, scope)?;
        Ok(Conversation { id, ..conversation })
    }
}

/// Brings a conversation stored in an earlier format to the current one, a format at a time.
/// A change to the stored form raises [`Conversation::FORMAT`] and adds its step here, with a
/// fixture of the format before it that must go on loading (`tests/fixtures/stored/`).
fn migrate(mut stored: Stored) -> Result<Stored, NotLoaded> {
    loop {
        match stored.format {
            Conversation::FORMAT => return Ok(stored),
            // Format 2 names the event before a session task's step `step_start`; format 1's
            // `turn_start` reads as it already (an alias of `EventKind::StepStart`).
            1 => stored.format = 2,
            // Format 3 adds the kept entries of sub-agents, which a format 2 log has none of.
            2 => stored.format = 3,
            // Format 4 lets a suspended step's results answer calls past the waiting one (run
            // beside it) and more than one call wait; a format 3 suspension's results are its
            // first calls', and one call waits. Its config's `tool_concurrency` is the default.
            3 => stored.format = 4,
            format => return Err(NotLoaded::Format { format }),
        }
    }
}

/// Why a stored conversation does not load.
#[derive(Debug, thiserror::Error)]
enum NotLoaded {
    /// Written in a format this agentix does not read: a newer one, or none there ever was.
    #[error(
        "the conversation is stored in format {format}; this agentix reads formats 1 to {}",
        Conversation::FORMAT
    )]
    Format { format: u32 },
    /// Its log breaks a rule.
    #[error(transparent)]
    Log(#[from] InvalidLog),
}

impl Conversation {
    /// The version of the stored form (what serde writes of a conversation, and each entry's
    /// form within it), written as its `format` field. A conversation written in an earlier
    /// format is migrated as it loads; one written without the field is of format 1.
    ///
    /// 1. The first.
    /// 2. The event before a session task's step is `step_start` (it was `turn_start`).
    /// 3. A log may hold a kept sub-agent's entries ([`Entry::Delegated`]).
    /// 4. A step's calls run together: a suspended step holds the results of the calls that
    ///    ran beside the waiting one, more than one call may wait
    ///    ([`Suspension::also_waiting`](crate::approval::Suspension::also_waiting)), and the config has
    ///    [`tool_concurrency`](Config::tool_concurrency); a call's result may be withheld
    ///    ([`ToolFailure::Withheld`](crate::message::ToolFailure::Withheld)); a turn may end halted at
    ///    `tripwire`.
    pub const FORMAT: u32 = 4;

    /// An empty conversation with the default config.
    pub fn new() -> Self {
        Conversation::default()
    }

    /// An empty conversation with `config`.
    pub fn with_config(config: Config) -> Self {
        Conversation { config, ..Conversation::default() }
    }

    /// A conversation rebuilt from what a store kept of it: its config, its log, how many turns
    /// it has opened, and its scope. The log is checked as [`validate`](Conversation::validate)
    /// does; one that breaks a rule is refused, naming the entry.
    pub fn from_parts(
        config: Config,
        log: Vec<Entry>,
        turns: u64,
        scope: Scope,
    ) -> Result<Self, InvalidLog> {
        validate::validate_log(&log, turns)?;
        let saved = log.len();
        Ok(Conversation {
            format: Format,
            id: None,
            config,
            log,
            turns,
            scope,
            ledger: Ledger::default(),
            saved,
        })
    }

    /// This conversation, known as `id` where it is kept: a store's key. Tools' idempotency
    /// keys start with it ([`Turn::idempotency_key`](crate::Turn::idempotency_key)).
    pub fn with_id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }

    /// Its id where it is kept, if it has one.
    pub fn id(&self) -> Option<&str> {
        self.id.as_deref()
    }

    /// The entries added since it was loaded ([`from_parts`](Conversation::from_parts), serde)
    /// or last [marked saved](Conversation::mark_saved): what a backend that keeps entries
    /// writes, and only those. A new conversation's whole log.
    pub fn unsaved(&self) -> &[Entry] {
        &self.log[self.saved.min(self.log.len())..]
    }

    /// Marks every entry saved: [`unsaved`](Conversation::unsaved) is empty until the log
    /// grows again.
    pub fn mark_saved(&mut self) {
        self.saved = self.log.len();
    }

    /// This conversation with `scope` as its ambient state.
    pub fn with_scope(mut self, scope: Scope) -> Self {
        self.scope = scope;
        self
    }

    /// The canonical log.
    pub fn log(&self) -> &[Entry] {
        &self.log
    }

    /// The limits on each turn.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The limits on each turn, to change them between turns.
    pub fn config_mut(&mut self) -> &mut Config {
        &mut self.config
    }

    /// The ambient state.
    pub fn scope(&self) -> &Scope {
        &self.scope
    }

    /// The ambient state, mutably.
    pub fn scope_mut(&mut self) -> &mut Scope {
        &mut self.scope
    }

    /// How many turns have been opened.
    pub fn turns(&self) -> u64 {
        self.turns
    }

    /// The tool call a suspended turn waits on, and that turn: `Some` while the log ends with
    /// [`Entry::Suspended`]. No turn opens until [`Agent::resume`](crate::Agent::resume)
    /// answers it.
    pub fn pending_approval(&self) -> Option<(TurnRef, &PendingApproval)> {
        match self.log.last() {
            Some(Entry::Suspended { turn, suspension }) => Some((*turn, &suspension.pending)),
            _ => None,
        }
    }

    /// The session task the entry at `index` was written for: the task of its turn. `None` for
    /// an entry of a turn that ran no task, or an index past the log.
    pub fn task_of(&self, index: usize) -> Option<TaskTag> {
        let turn = self.log.get(index)?.turn();
        // Entries are in turn order: the turn's user entry is the last one at or before
        // `index` that opens a turn, found by bisection.
        let opened = self.log[..=index].partition_point(|entry| entry.turn() < turn);
        match self.log.get(opened) {
            Some(Entry::User { task, turn: opened, .. }) if *opened == turn => *task,
            _ => None,
        }
    }

    /// The log from entry `from` on, each entry beside the session task it was written for
    /// (its turn's): what a store writes as an entry's `task_id` and `plan_id`. The first
    /// entry's task is found by bisection; the rest follow as turns open.
    pub fn log_with_tasks(
        &self,
        from: usize,
    ) -> impl Iterator<Item = (&Entry, Option<TaskTag>)> + '_ {
        let mut current = self.task_of(from);
        self.log.iter().skip(from).map(move |entry| {
            if let Entry::User { task, .. } = entry {
                current = *task;
            }
            (entry, current)
        })
    }

    /// The log as conversation messages, in order.
    pub fn messages(&self) -> impl Iterator<Item = Message> + '_ {
        self.log.iter().filter_map(Entry::to_message)
    }

    pub(crate) fn open_turn(
        &mut self,
        message: Message,
        task: Option<TaskTag>,
    ) -> (TurnRef, usize) {
        self.turns += 1;
        let turn = TurnRef(self.turns);
        self.log.push(Entry::User { turn, message, task });
        (turn, self.log.len() - 1)
    }

    /// The log, to read, and its ledger, to bring up to date.
    #[inline]
    pub(crate) fn log_and_ledger(&mut self) -> (&[Entry], &mut Ledger) {
        (&self.log, &mut self.ledger)
    }

    #[inline]
    pub(crate) fn append(&mut self, entry: Entry) {
        self.log.push(entry);
    }
}
