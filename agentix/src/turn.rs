//! The turn: what every hook of a turn sees.

use std::borrow::Cow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use serde::{Deserialize, Serialize};

use crate::approval::TurnState;
use crate::conversation::{Config, Conversation, Entry, TurnRef};
use crate::durable::JournalError;
use crate::error::HookFailure;
use crate::error::{Component, Error};
use crate::event::EventKind;
pub use crate::message::Injection;
use crate::message::{AssistantMessage, Message, Part, ToolCall};
use crate::model::Usage;
use crate::scope::Scope;
use crate::support::lock;
use crate::task::{PlanId, TaskContext, TaskId, TaskTag};
use crate::tool::ToolId;
use crate::tool::at_hand::AtHand;
use crate::tool::spec::{ToolOrigin, ToolSpec};
use crate::trace::TurnTrace;
use crate::verdict::Halt;

/// The tool a call names, as per-tool `before_tool` hooks ask it.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) enum InHand {
    /// The agent has no per-tool `before_tool` hooks: nobody asks.
    #[default]
    Unsought,
    /// The call names this tool, found once before `before_tool`: each per-tool hook compares
    /// a type, not a name.
    Tool(ToolId),
    /// The call names no tool the set knows by type, or a hook renamed it: per-tool hooks
    /// compare the call's name with their tool's.
    ByName,
}

impl InHand {
    /// Whether the call `call` is one of `tool`'s.
    #[inline]
    pub(crate) fn is(self, tool: ToolId, call: &ToolCall) -> bool {
        match self {
            InHand::Tool(in_hand) => in_hand == tool,
            InHand::ByName | InHand::Unsought => call.name == tool.name(),
        }
    }

    /// After a hook that may have renamed the call: per-tool hooks go by name if it did.
    #[inline]
    pub(crate) fn after_edit(&mut self, call: &ToolCall) {
        if let InHand::Tool(tool) = *self
            && call.name != tool.name()
        {
            *self = InHand::ByName;
        }
    }
}

/// One turn in progress: the conversation so far, the user message that opened the turn, its
/// reference, and the scope. Hooks get `&mut Turn` (sequential) or `&Turn` (parallel `pre` hooks,
/// wrap hooks, tools).
///
/// The log is read-only here: only the agent loop appends to it. What a hook may add is
/// append-only too — [`inject`](Turn::inject) — and lives only in this turn's model requests.
///
/// A turn serializes with serde (to inspect or persist a turn in flight); what is only
/// meaningful while its hooks run — which hook is running, a panic inside a wrap chain — is left
/// out.
#[derive(Debug, Serialize, Deserialize)]
pub struct Turn {
    pub(crate) conversation: Conversation,
    /// The session's task the turn runs, if it runs one: boxed, so a turn run on its own
    /// carries one pointer for it.
    #[serde(default)]
    task: Option<Box<TaskContext>>,
    turn_ref: TurnRef,
    pub(crate) user_entry: usize,
    pub(crate) step: u32,
    pub(crate) retries: u32,
    injections: Vec<Injection>,
    /// What the turn's model calls cost, summed, and the latest call's.
    #[serde(default)]
    usage: Usage,
    #[serde(default)]
    last_usage: Option<Usage>,
    /// How many durable injections are already in the log (stored as `committed`).
    #[serde(rename = "committed")]
    logged: usize,
    /// The hook last given the turn to change (what it injects is its), and whether its
    /// output is durable.
    #[serde(skip)]
    running_hook: &'static str,
    #[serde(skip)]
    running_durable: bool,
    /// The component (not a hook) running code of its own, for a panic that unwinds out of
    /// the loop: the token counter, while a request is rendered.
    #[serde(skip)]
    pub(crate) running_component: Option<Component>,
    #[serde(skip)]
    pub(crate) aborted: OnceLock<Aborted>,
    /// The tool the call at hand names, for per-tool `before_tool` hooks.
    #[serde(skip)]
    pub(crate) tool_in_hand: InHand,
    /// Where the tool the call at hand names comes from, if its tool set knows, while the
    /// step's hooks decide and settle its calls one by one (calls running together each have
    /// theirs at hand instead).
    #[serde(skip)]
    pub(crate) tool_origin: Option<Arc<ToolOrigin>>,
    /// The tools this step offers, when the agent's tool set can change: read at the step's
    /// start, kept through its retries.
    #[serde(skip)]
    pub(crate) step_tools: Option<Arc<StepTools>>,
    #[serde(skip)]
    blame: Mutex<Blame>,
    /// Whether `blame` holds anything but `Nobody`: a successful call, the usual case, then
    /// has nothing to clear and takes no lock.
    #[serde(skip)]
    blamed: AtomicBool,
    /// What the sub-agents the turn's tool calls ran have cost: their calls are the turn's.
    #[serde(skip)]
    delegated: Mutex<Usage>,
    /// When the turn's `turn_timeout` runs out, if it has one: a sub-agent's turn ends by then.
    #[serde(skip)]
    pub(crate) deadline: Option<std::time::Instant>,
    /// The answer of the agent a tool call handed the turn to, until the loop takes it.
    #[serde(skip)]
    handoff: Mutex<Option<AssistantMessage>>,
    /// What sub-agents that keep their conversations said in this step's calls
    /// ([`Entry::Delegated`]), until the step joins the log.
    #[serde(skip)]
    kept: Mutex<Vec<Entry>>,
    /// The turn's span (`invoke_agent`), under which its model and tool calls open theirs:
    /// none when nobody listens.
    #[serde(skip)]
    pub(crate) trace: Option<Arc<TurnTrace>>,
}

/// The tools a step offers the model, from a tool set whose list can change
/// ([`ToolSet::CHANGES`](crate::ToolSet::CHANGES)), and what their specs take of a request.
#[derive(Clone, Debug)]
pub(crate) struct StepTools {
    /// The step they were read for.
    pub(crate) step: u32,
    /// The tool set's generation they were read at; `None` when a replay returned them.
    pub(crate) generation: Option<u64>,
    pub(crate) specs: Arc<[ToolSpec]>,
    /// The specs' tokens, by the agent's counter.
    pub(crate) tokens: usize,
}

/// Who made the `wrap_model` onion's latest error: the model, or a hook that made its own
/// (rather than passing on what `next` returned).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Blame {
    #[default]
    Nobody,
    Model,
    Hook(&'static str),
}

/// Something inside a model or tool call ended it past recovering — a wrap hook panicked, a
/// component the call runs panicked, a per-tool hook inside a tool call halted — and the call
/// was abandoned; the loop ends the turn.
#[derive(Clone, Debug)]
pub(crate) enum Aborted {
    /// A hook or a component failed.
    Failed { culprit: Culprit, failure: HookFailure },
    /// A per-tool hook inside a tool call halted the turn.
    Halted { event: EventKind, hook: &'static str, halt: Halt },
    /// The journal could not run or replay the call.
    Journal(JournalError),
}

/// Who failed: a hook at its event, or a component.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Culprit {
    Hook { event: EventKind, hook: &'static str },
    Component(Component),
}

impl Aborted {
    /// The turn's error.
    pub(crate) fn error(&self) -> Error {
        let (culprit, failure) = match self {
            Aborted::Halted { event, hook, halt } => {
                return crate::error::halted(*event, hook, halt.clone());
            }
            Aborted::Failed { culprit, failure } => (*culprit, failure.clone()),
            Aborted::Journal(error) => return Error::Journal(error.clone()),
        };
        match (culprit, failure) {
            (Culprit::Hook { event, hook }, failure) => failure.error(event, hook),
            (Culprit::Component(component), HookFailure::Panicked { message }) => {
                Error::ComponentPanicked { component, message }
            }
            (Culprit::Component(component), HookFailure::TimedOut { after }) => {
                let message = format!("it did not return within {after:?}");
                Error::ComponentPanicked { component, message }
            }
        }
    }

    /// Why the calls the abandoned call took down did not run.
    pub(crate) fn reason(&self) -> String {
        match self {
            Aborted::Halted { event, hook, halt } => {
                format!("the {event} hook `{hook}` halted the turn: {}", halt.reason)
            }
            Aborted::Failed { culprit: Culprit::Hook { event, hook }, failure } => {
                failure.describe(*event, hook)
            }
            Aborted::Failed { culprit: Culprit::Component(component), .. } => {
                format!("the {component} panicked")
            }
            Aborted::Journal(error) => error.to_string(),
        }
    }
}

impl Turn {
    pub(crate) fn open(
        mut conversation: Conversation,
        message: Message,
        task: Option<Box<TaskContext>>,
    ) -> Self {
        let (turn_ref, user_entry) =
            conversation.open_turn(message, task.as_ref().map(|task| task.tag));
        Turn::at(conversation, task, turn_ref, user_entry, TurnState::default())
    }

    /// Reopens the suspended turn `turn_ref` of `conversation` (whose log ends with its
    /// resumption), with what it had counted.
    pub(crate) fn reopen(conversation: Conversation, turn_ref: TurnRef, state: TurnState) -> Self {
        let user_entry = conversation
            .log()
            .iter()
            .rposition(|entry| matches!(entry, Entry::User { turn, .. } if *turn == turn_ref))
            .expect("a validated log opens each turn with its user message");
        Turn::at(conversation, None, turn_ref, user_entry, state)
    }

    /// The turn `turn_ref`, opened at `user_entry`, with what it has counted so far.
    #[inline(always)]
    fn at(
        conversation: Conversation,
        task: Option<Box<TaskContext>>,
        turn_ref: TurnRef,
        user_entry: usize,
        state: TurnState,
    ) -> Self {
        let TurnState { step, retries, injections, usage, last_usage, committed: logged } = state;
        Turn {
            task,
            conversation,
            turn_ref,
            user_entry,
            step,
            retries,
            injections,
            usage,
            last_usage,
            logged,
            running_hook: "",
            running_durable: false,
            running_component: None,
            aborted: OnceLock::new(),
            tool_in_hand: InHand::Unsought,
            tool_origin: None,
            step_tools: None,
            blame: Mutex::default(),
            blamed: AtomicBool::new(false),
            delegated: Mutex::default(),
            deadline: None,
            handoff: Mutex::default(),
            kept: Mutex::default(),
            trace: None,
        }
    }

    /// What the turn has counted, to keep while it is suspended.
    pub(crate) fn state(&self) -> TurnState {
        TurnState {
            step: self.step,
            retries: self.retries,
            injections: self.injections.clone(),
            usage: self.usage(),
            last_usage: self.last_usage,
            committed: self.logged,
        }
    }

    /// Whether the turn runs a session's task.
    pub(crate) fn runs_task(&self) -> bool {
        self.task.is_some()
    }

    /// The conversation, with the turn's entries so far.
    pub(crate) fn conversation(&self) -> &Conversation {
        &self.conversation
    }

    /// Trades the turn's conversation for `other`: how a finished turn hands the conversation
    /// back without moving the turn.
    pub(crate) fn swap_conversation(&mut self, other: &mut Conversation) {
        std::mem::swap(&mut self.conversation, other);
    }

    /// The turn's reference, shared by its log entries and traces.
    pub fn turn_ref(&self) -> TurnRef {
        self.turn_ref
    }

    /// The id of the tool call running, to the tool that runs it if it asked
    /// ([`Tool::WANTS_CALL_ID`](crate::Tool::WANTS_CALL_ID)); `None` otherwise.
    pub fn tool_call_id(&self) -> Option<String> {
        AtHand::read(self, |call| call.id().map(str::to_owned))
    }

    /// [`idempotency_key`](Turn::idempotency_key) of the tool call running, to the tool that
    /// runs it if it asked ([`Tool::WANTS_CALL_ID`](crate::Tool::WANTS_CALL_ID)).
    pub fn tool_idempotency_key(&self) -> Option<String> {
        AtHand::read(self, |call| call.id().map(|id| self.key_of(id)))
    }

    /// Where the tool of the call at hand comes from — an MCP server's name and address — during
    /// that call's tool events (`before_tool`, `wrap_tool`, `after_tool`, `tool_error`), if its
    /// tool set knows ([`ToolSet::origin`](crate::ToolSet::origin)); `None` for a native tool.
    /// Each of a step's calls running together reads its own.
    pub fn tool_origin(&self) -> Option<Arc<ToolOrigin>> {
        match &self.tool_origin {
            Some(origin) => Some(Arc::clone(origin)),
            None => AtHand::read(self, |call| call.origin().cloned()),
        }
    }

    /// A key naming one tool call for good: the conversation's id (`-` if it has none), the
    /// turn, the call's id — the same however often the call is attempted (a `wrap_tool`
    /// retry, a turn resumed or replayed after a crash). Pass it to the system a tool acts on,
    /// and an effect attempted twice is applied once.
    pub fn idempotency_key(&self, call: &ToolCall) -> String {
        self.key_of(&call.id)
    }

    fn key_of(&self, call_id: &str) -> String {
        let conversation = self.conversation.id().unwrap_or("-");
        format!("{conversation}/{}/{call_id}", self.turn_ref.0)
    }

    /// The index of the current step (model call and its tool calls), from 0.
    pub fn step(&self) -> u32 {
        self.step
    }

    /// What the turn's model calls cost so far, summed — every call the model answered, those a
    /// `wrap_model` hook made and discarded included, and the calls of the sub-agents its tool
    /// calls ran: a `post` hook's meter. (A turn serialized in flight keeps its own calls'.)
    pub fn usage(&self) -> Usage {
        let mut usage = self.usage;
        usage += *lock(&self.delegated);
        usage
    }

    /// Adds what a sub-agent a tool call ran has cost: the parent's turn pays for it.
    pub(crate) fn add_delegated(&self, usage: Usage) {
        *lock(&self.delegated) += usage;
    }

    /// Keeps what a sub-agent said in a call of this step, for the log after the step's results.
    pub(crate) fn keep_delegated(&self, entry: Entry) {
        lock(&self.kept).push(entry);
    }

    /// What sub-agents said in this step's calls so far (a kept conversation's next call in
    /// the step goes on from them).
    pub(crate) fn kept_so_far(&self) -> Vec<Entry> {
        lock(&self.kept).clone()
    }

    /// Whether a call of this step left what only the step holds: a kept sub-agent's entries,
    /// or an answer handed back.
    pub(crate) fn holds_delegated(&self) -> bool {
        self.handed_off() || !lock(&self.kept).is_empty()
    }

    /// What sub-agents said in this step's calls, in the order they ended.
    pub(crate) fn take_kept(&mut self) -> Vec<Entry> {
        std::mem::take(self.kept.get_mut().unwrap_or_else(|poisoned| poisoned.into_inner()))
    }

    /// Leaves the answer of the agent the turn was handed to, for the loop.
    pub(crate) fn hand_off(&self, answer: AssistantMessage) {
        *lock(&self.handoff) = Some(answer);
    }

    /// Whether a tool call of this step handed the turn to another agent.
    pub(crate) fn handed_off(&self) -> bool {
        lock(&self.handoff).is_some()
    }

    /// The answer of the agent the turn was handed to, if a tool call handed it.
    pub(crate) fn take_handoff(&mut self) -> Option<AssistantMessage> {
        self.handoff.get_mut().unwrap_or_else(|poisoned| poisoned.into_inner()).take()
    }

    /// When the turn's `turn_timeout` runs out, if it has one: what it runs — a sub-agent's
    /// turn — ends by then.
    pub fn deadline(&self) -> Option<std::time::Instant> {
        self.deadline
    }

    /// What the answer at hand cost, cached tokens included: an `after_model` hook reads it
    /// beside the answer. `None` before the turn's first model call, and when a `before_model`
    /// hook answered in the model's place.
    pub fn last_usage(&self) -> Option<Usage> {
        self.last_usage
    }

    /// Records a step's model calls: what they cost in all, and what the answer they gave cost.
    pub(crate) fn record_usage(&mut self, spent: Usage, answer: Option<Usage>) {
        self.usage += spent;
        self.last_usage = answer;
    }

    /// The most model calls the turn may make: its task's `max_steps`, or the conversation's
    /// `max_steps`.
    pub fn max_steps(&self) -> u32 {
        match self.task.as_ref().and_then(|task| task.max_steps) {
            Some(max_steps) => max_steps,
            None => self.config().max_steps,
        }
    }

    /// The session's task this turn runs; `None` for a turn run on its own.
    pub fn task(&self) -> Option<TaskTag> {
        self.task.as_ref().map(|task| task.tag)
    }

    /// The id of the session's task this turn runs.
    pub fn task_id(&self) -> Option<TaskId> {
        self.task().map(|tag| tag.task)
    }

    /// The plan of the session's task this turn runs, if it has one.
    pub fn plan_id(&self) -> Option<PlanId> {
        self.task().and_then(|tag| tag.plan)
    }

    /// The index of the current model call within the task, from 0: the turn's
    /// [`step`](Turn::step).
    pub fn task_step_index(&self) -> u32 {
        self.step
    }

    /// Whether the current model call is the task's first.
    pub fn is_first_step_in_task(&self) -> bool {
        self.step == 0
    }

    /// The index of the current model call within the session, from 0; outside a session,
    /// within the turn.
    pub fn step_index(&self) -> u64 {
        self.task.as_ref().map_or(0, |task| task.steps_before) + u64::from(self.step)
    }

    /// How many RETRY verdicts this turn has acted on.
    pub fn retries(&self) -> u32 {
        self.retries
    }

    /// The user message that opened the turn.
    pub fn user_message(&self) -> &Message {
        match &self.conversation.log()[self.user_entry] {
            Entry::User { message, .. } => message,
            other => unreachable!("turn opened on a non-user entry: {other:?}"),
        }
    }

    /// The canonical log, this turn's appended steps included.
    pub fn log(&self) -> &[Entry] {
        self.conversation.log()
    }

    /// The log entries that precede this turn.
    pub fn history(&self) -> &[Entry] {
        &self.conversation.log()[..self.user_entry]
    }

    /// This turn's entries in the log after the user message: its durable `pre` output, the
    /// finished steps, and a summary compaction made during the turn, if any.
    pub fn steps(&self) -> &[Entry] {
        &self.conversation.log()[self.user_entry + 1..]
    }

    /// The conversation's limits.
    pub fn config(&self) -> &Config {
        self.conversation.config()
    }

    /// The ambient state.
    pub fn scope(&self) -> &Scope {
        self.conversation.scope()
    }

    /// The ambient state, mutably (an effect).
    pub fn scope_mut(&mut self) -> &mut Scope {
        self.conversation.scope_mut()
    }

    /// Adds content for this turn. It is placed at the tail of every later model request the
    /// turn makes, right after the user message, with the user's role; it is not written to the
    /// log. Content injected in `pre` reaches every call; content injected later (a schema from
    /// a `tool_error` hook) reaches the calls after it. Injections only accumulate: to change
    /// one request, edit it in `before_model` instead.
    ///
    /// A `durable` hook's content also joins the log as the hook's output, so later turns see
    /// it; a transient hook's content never reaches the log. What a turn injects, durable or
    /// not, counts against the conversation's `injection_reserve`.
    ///
    /// Injected content reaches the model at the same trust level as the user's own words:
    /// content from elsewhere (retrieved documents) is a prompt-injection surface — wrap it with
    /// [`fence`](crate::context::fence).
    pub fn inject(&mut self, part: impl Into<Part>) {
        let (hook, durable) = (Cow::Borrowed(self.running_hook), self.running_durable);
        self.injections.push(Injection { hook, part: part.into(), durable });
    }

    /// What hooks have injected so far, in the order they injected it.
    pub fn injections(&self) -> &[Injection] {
        &self.injections
    }

    pub(crate) fn inject_as(
        &mut self,
        hook: &'static str,
        durable: bool,
        parts: impl IntoIterator<Item = Part>,
    ) {
        let hook = Cow::Borrowed(hook);
        self.injections.extend(parts.into_iter().map(|part| Injection {
            hook: hook.clone(),
            part,
            durable,
        }));
    }

    /// Marks `hook` as the one the turn is lent to, so what it injects is attributed to it;
    /// `durable` says whether its output joins the log. (A panic is attributed by the chain's
    /// `Running` mark.)
    pub(crate) fn attribute(&mut self, hook: &'static str, durable: bool) {
        self.running_hook = hook;
        self.running_durable = durable;
    }

    /// Records that `hook` failed at `event` and the turn went on without it.
    #[cold]
    pub(crate) fn record_skipped(&mut self, event: EventKind, hook: &'static str, reason: String) {
        let turn = self.turn_ref;
        self.conversation.append(Entry::HookSkipped { turn, event, hook: hook.to_owned(), reason });
    }

    /// Leaves the durable output not yet logged out of the log: a `pre` chain that halted or
    /// failed logs nothing.
    pub(crate) fn discard_unlogged(&mut self) {
        self.logged = self.injections.len();
    }

    /// Appends the durable output not yet logged to the log, one entry per hook and run, in the
    /// order it was produced.
    #[inline]
    pub(crate) fn log_durable(&mut self, event: EventKind) {
        if self.logged < self.injections.len() {
            self.log_fresh(event);
        }
    }

    /// `log_durable`'s work, out of line: most events have nothing to log.
    fn log_fresh(&mut self, event: EventKind) {
        let turn = self.turn_ref;
        let fresh: Vec<Injection> = self.injections[self.logged..]
            .iter()
            .filter(|injection| injection.durable)
            .cloned()
            .collect();
        self.logged = self.injections.len();
        let mut outputs: Vec<Entry> = Vec::new();
        for injection in fresh {
            match outputs.last_mut() {
                Some(Entry::HookOutput { hook, parts, .. }) if *hook == injection.hook => {
                    parts.push(injection.part)
                }
                _ => outputs.push(Entry::HookOutput {
                    turn,
                    event,
                    hook: injection.hook.into_owned(),
                    parts: vec![injection.part],
                }),
            }
        }
        for output in outputs {
            self.conversation.append(output);
        }
    }

    pub(crate) fn user_entry(&self) -> usize {
        self.user_entry
    }

    #[inline]
    pub(crate) fn append(&mut self, entry: Entry) {
        self.conversation.append(entry);
    }

    /// Records how one part of the `wrap_model` onion returned: the model (`hook: None`) or a
    /// hook. A success clears the blame; an error from a hook whose `next` did not fail is the
    /// hook's own.
    #[inline]
    pub(crate) fn settle_model_call(&self, hook: Option<&'static str>, ok: bool) {
        if !ok || self.blamed.load(Ordering::Relaxed) {
            self.blame_model_call(hook, ok);
        }
    }

    /// `settle_model_call`'s work, out of line: a success with nothing blamed has none.
    fn blame_model_call(&self, hook: Option<&'static str>, ok: bool) {
        let mut blame = crate::support::lock(&self.blame);
        *blame = match (ok, hook, *blame) {
            (true, ..) => Blame::Nobody,
            (false, None, _) => Blame::Model,
            (false, Some(hook), Blame::Nobody) => Blame::Hook(hook),
            (false, Some(_), kept) => kept,
        };
        self.blamed.store(*blame != Blame::Nobody, Ordering::Relaxed);
    }

    /// Who made the onion's latest error.
    pub(crate) fn model_blame(&self) -> Blame {
        if !self.blamed.load(Ordering::Relaxed) {
            return Blame::Nobody;
        }
        *crate::support::lock(&self.blame)
    }

    pub(crate) fn abort(&self, culprit: Culprit, failure: HookFailure) {
        // The first failure is the cause; later ones are its echoes.
        let _ = self.aborted.set(Aborted::Failed { culprit, failure });
    }

    /// Ends the call in flight and the turn: the journal failed it.
    #[cold]
    pub(crate) fn abort_journal(&self, error: JournalError) {
        let _ = self.aborted.set(Aborted::Journal(error));
    }

    /// Ends the call in flight and the turn with `hook`'s halt at `event`: a per-tool hook that
    /// runs inside the call, where the turn is shared.
    pub(crate) fn halt_in_call(&self, event: EventKind, hook: &'static str, halt: Halt) {
        let _ = self.aborted.set(Aborted::Halted { event, hook, halt });
    }
}
