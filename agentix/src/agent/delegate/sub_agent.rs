//! Sub-agents: an agent a parent calls as a tool ([`AgentTool`]). The child's turn runs
//! inside the parent's tool call, so it is the parent's turn's work: dropping the parent's turn
//! drops the child's, the parent's `turn_timeout` bounds it, its escalations go to the parent's
//! approver, what it costs adds into the parent's usage, and the parent's observer and stream
//! see its events nested under its name. A parent under a [`Policy`](crate::pipeline::Policy) takes only
//! children under the same one ([`AgentBuilder::sub_agent`]).

use std::future::{Future, ready};
use std::marker::PhantomData;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::approval::{Approval, Approver, PendingApproval};
use crate::conversation::{Config, Conversation, Entry, InvalidLog, TurnRef};
use crate::durable::{CommitError, ModelCall};
use crate::durable::{Journal, JournalDyn, JournalError, JournalStep};
use crate::message::{AssistantMessage, Message, ToolCall, ToolFailure, ToolResult};
use crate::model::{Model, Usage};
use crate::observe::{Observation, Observer};
use crate::pipeline::{
    Answering, Hooks,
    node::{Chain, Governs, ModelWraps, ToolWraps},
};
use crate::scope::Scope;
use crate::tool::{Arguments, ToolRunner, ToolSet, ToolSpec};
use crate::transform::StreamTransformer;
use crate::turn::Turn;
use crate::verdict::Escalation;

use super::Delegation;
use crate::agent::effects::{Effects, ErasedEffects, ErasedJournal, Journaled};
use crate::agent::runs::Runs;
use crate::agent::{Agent, AnyAgent};

/// What a sub-agent is asked by default: the message its turn opens with.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Prompt {
    /// What to ask the agent, as a message to it: it sees nothing else of the conversation.
    pub prompt: String,
}

/// An agent a parent calls as a tool: the model calls it by `name` with a prompt (or typed
/// input, [`input`](AgentTool::input)), and the call's result is the child's final answer — its
/// text, or its typed answer's JSON. Each call runs a fresh child conversation with the tool's
/// [`config`](AgentTool::config), its `turn_timeout` cut to what is left of the parent's.
/// Added with [`AgentBuilder::sub_agent`](crate::AgentBuilder::sub_agent).
///
/// ```
/// use agentix::{Agent, Conversation, ScriptedModel, delegate::AgentTool};
/// use serde_json::json;
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let researcher = Agent::builder(ScriptedModel::new().text("Oslo has 709 000 people.")).build();
/// let model = ScriptedModel::new()
///     .tool_call("research", json!({ "prompt": "How many people live in Oslo?" }))
///     .text("About 709 000.");
/// let planner = Agent::builder(model)
///     .sub_agent(AgentTool::new("research", "Looks facts up.", researcher))
///     .build();
/// let answer = planner.run(&mut Conversation::new(), "Oslo's population?").await?;
/// assert_eq!(answer.joined_text(), "About 709 000.");
/// # Ok::<_, agentix::Error>(())
/// # }).unwrap();
/// ```
pub struct AgentTool<R, I = Prompt> {
    agent: R,
    name: String,
    description: String,
    config: Config,
    keep: bool,
    message: fn(I) -> Message,
    _input: PhantomData<fn(I)>,
}

impl<R: SubAgent> AgentTool<R> {
    /// `agent` as the tool `name`, which the model is told does `description`, asked with a
    /// prompt.
    pub fn new(name: impl Into<String>, description: impl Into<String>, agent: R) -> Self {
        AgentTool {
            agent,
            name: name.into(),
            description: description.into(),
            config: Config::default(),
            keep: false,
            message: |prompt: Prompt| Message::user(prompt.prompt),
            _input: PhantomData,
        }
    }
}

impl<R: SubAgent, I> AgentTool<R, I> {
    /// Asks the agent with a typed input rather than a prompt: the model fills `J`'s schema,
    /// and the child's turn opens with its JSON.
    pub fn input<J: Arguments + Serialize>(self) -> AgentTool<R, J> {
        self.input_with(|input: J| {
            Message::user(serde_json::to_string(&input).expect("an input read from JSON writes"))
        })
    }

    /// Asks the agent with a typed input, which `message` makes the child's first message of.
    pub fn input_with<J: Arguments>(self, message: fn(J) -> Message) -> AgentTool<R, J> {
        AgentTool {
            agent: self.agent,
            name: self.name,
            description: self.description,
            config: self.config,
            keep: self.keep,
            message,
            _input: PhantomData,
        }
    }

    /// The configuration of each call's child conversation (its `max_steps`, `max_retries`,
    /// timeouts); its `turn_timeout` is cut to what is left of the parent's turn.
    pub fn config(mut self, config: Config) -> Self {
        self.config = config;
        self
    }

    /// Keeps the child's conversation across calls, beside the parent's: each call goes on
    /// from what the agent said in the parent's earlier calls, and what it says joins the
    /// parent's log ([`Entry::Delegated`](crate::Entry::Delegated)) — stored with it, loaded
    /// with it. Without it, each call runs a fresh conversation.
    pub fn keep_conversation(mut self) -> Self {
        self.keep = true;
        self
    }

    /// The tool's name, and the agent's in nested observations and stream events.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What a call's child conversation starts from: nothing, or, kept, what the agent said
    /// in the parent's earlier calls — found in its log, and this step's, not yet there — and
    /// how many turns that is.
    fn earlier_log(&self, parent: &Turn) -> (Vec<Entry>, u64) {
        if !self.keep {
            return (Vec::new(), 0);
        }
        let mut log = Vec::new();
        for entry in parent.log().iter().chain(parent.kept_so_far().iter()) {
            if let Entry::Delegated { agent, log: said, .. } = entry
                && *agent == self.name
            {
                log.extend(said.iter().cloned());
            }
        }
        let turns = log.iter().filter(|entry| matches!(entry, Entry::User { .. })).count();
        (log, turns as u64)
    }
}

impl<R, I> std::fmt::Debug for AgentTool<R, I> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentTool").field("name", &self.name).finish_non_exhaustive()
    }
}

impl<R: SubAgent, I: Arguments + 'static> Delegation for AgentTool<R, I> {
    const HANDS_OFF: bool = false;

    // A kept conversation's calls each go on from the one before: one at a time.
    fn runs_alone(&self) -> bool {
        self.keep
    }

    fn tool_name(&self) -> &str {
        &self.name
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.name.clone(),
            description: self.description.clone(),
            parameters: I::schema().to_value(),
        }
    }

    /// Runs the child's turn for `call`, inside the parent's `turn`, reaching the parent
    /// through `hooks`.
    async fn run<H: ToolRunner>(&self, call: &ToolCall, turn: &Turn, hooks: &H) -> ToolResult {
        let input = match I::from_json(&call.arguments) {
            Ok(input) => input,
            Err(error) => {
                let message = format!("{error} (in {})", call.arguments);
                return ToolResult::failure(call, ToolFailure::InvalidArguments { message });
            }
        };
        let message = (self.message)(input);
        let (log, turns) = self.earlier_log(turn);
        let mut conversation =
            match child_conversation(&self.config, turn, call, &self.name, log, turns) {
                Ok(conversation) => conversation,
                Err(error) => {
                    let message =
                        format!("the kept conversation of `{}` is no log: {error}", self.name);
                    return ToolResult::failure(call, ToolFailure::Failed { message });
                }
            };
        let before = conversation.log().len();
        let outcome =
            run_child(&self.agent, &self.name, &mut conversation, message, call, turn, hooks).await;
        // A kept conversation's new entries join the parent's log after the step's results.
        if self.keep && outcome.is_ok() {
            turn.keep_delegated(Entry::Delegated {
                turn: turn.turn_ref(),
                call: call.id.clone(),
                agent: self.name.clone(),
                log: conversation.log()[before..].to_vec(),
            });
        }
        match answered(call, &self.name, outcome) {
            Ok(answer) => ToolResult::success(call, answer.joined_text()),
            Err(failed) => failed,
        }
    }
}

/// Runs `agent`'s turn, opened by `message` in `conversation`, inside the parent's `turn` and
/// its call `call`, reaching the parent through `hooks`; `Err` if the call ran out of time.
pub(super) async fn run_child<R: SubAgent, H: ToolRunner>(
    agent: &R,
    name: &str,
    conversation: &mut Conversation,
    message: Message,
    call: &ToolCall,
    turn: &Turn,
    hooks: &H,
) -> Result<crate::Outcome, std::time::Duration> {
    let observer = Nested { hooks, call, agent: name, text: R::ANSWERS_TEXT };
    let effects = Delegated { hooks, parent: turn, agent: name };
    // In a journaled turn, each of the child's steps is journaled inside the parent's. The
    // child's turn is boxed: a whole agent loop, it would otherwise sit inside the parent's
    // future (and, as it is made, on the stack).
    let outcome = match hooks.journal() {
        Some(parent) => {
            // No clock of its own: a timeout that cut the child short would not cut its
            // replay at the same place (the replay's steps return at once). The turn's own
            // `turn_timeout` bounds it, and its model and tool calls record their timeouts.
            conversation.config_mut().turn_timeout = None;
            let journal = Nesting { parent, turn: turn.turn_ref(), agent: name, call };
            let effects = Journaled { journal: &journal, inner: &effects };
            Ok(Box::pin(agent.open(conversation, message, &observer, effects)).await)
        }
        None => {
            let run = Box::pin(agent.open(conversation, message, &observer, &effects));
            hooks.run_tool(run).await
        }
    };
    // The journal failed inside the child: the parent's turn is no longer what the journal
    // holds either, and ends as any turn whose journal failed.
    if let Ok(Err(crate::Error::Journal(error))) = &outcome {
        turn.abort_journal(error.clone());
    }
    outcome
}

/// The answer of a child's run, or the call's failed result: the child's error, or the call's
/// timeout.
pub(super) fn answered(
    call: &ToolCall,
    agent: &str,
    outcome: Result<crate::Outcome, std::time::Duration>,
) -> Result<AssistantMessage, ToolResult> {
    match outcome {
        Ok(Ok(answer)) => Ok(answer),
        Ok(Err(error)) => {
            let message = format!("the agent `{agent}` failed: {error}");
            Err(ToolResult::failure(call, ToolFailure::Failed { message }))
        }
        Err(after) => Err(ToolResult::failure(call, ToolFailure::TimedOut { after })),
    }
}

/// The child conversation of a call: `log` (its `turns` turns; a fresh one's empty) with
/// `config`'s settings, its `turn_timeout` cut to what is left of the parent's `turn`, its id
/// the call's (`conversation/turn/call/agent`) — the same when a journaled turn runs again, so
/// its tools' idempotency keys are too, and apart from an earlier call's that kept nothing (it
/// timed out, or was dropped). A log that breaks a rule is refused.
pub(super) fn child_conversation(
    config: &Config,
    parent: &Turn,
    call: &ToolCall,
    agent: &str,
    log: Vec<Entry>,
    turns: u64,
) -> Result<Conversation, InvalidLog> {
    let mut config = config.clone();
    if let Some(deadline) = parent.deadline() {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        config.turn_timeout = Some(config.turn_timeout.map_or(left, |own| own.min(left)));
    }
    let id = format!("{}/{agent}", parent.idempotency_key(call));
    Ok(Conversation::from_parts(config, log, turns, Scope::new())?.with_id(id))
}

/// An agent that can be a sub-agent, and the policy it runs under: an [`Agent`], or a
/// reference or an `Arc` to one, which says which from its type. (A [`BoxedAgent`](crate::BoxedAgent)
/// cannot be one: its type, policy and all, is erased, and so are the effects through which a
/// child reaches its parent.)
pub trait SubAgent: AnyAgent + Runs {
    /// [`Under<P>`](crate::pipeline::node::Under) or [`Ungoverned`](crate::pipeline::node::Ungoverned).
    type Policy;
}

impl<M, T, C, Mw, Tw, F, A, X> SubAgent for Agent<M, T, Hooks<C, Mw, Tw, F>, A, X>
where
    M: Model,
    T: ToolSet,
    C: Chain + Governs,
    Mw: ModelWraps,
    Tw: ToolWraps,
    F: Answering,
    A: Approver,
    X: StreamTransformer,
{
    type Policy = C::Policy;
}

impl<R: SubAgent + ?Sized> SubAgent for &R {
    type Policy = R::Policy;
}

impl<R: SubAgent + ?Sized> SubAgent for Arc<R> {
    type Policy = R::Policy;
}

/// The parent's journal, as the child's: each of the child's steps recorded inside the parent's
/// turn, named after the call that runs the child.
struct Nesting<'a> {
    parent: &'a dyn JournalDyn,
    turn: TurnRef,
    agent: &'a str,
    call: &'a ToolCall,
}

impl Nesting<'_> {
    fn nested<'s>(&'s self, step: &'s JournalStep<'s>) -> JournalStep<'s> {
        JournalStep::Nested { turn: self.turn, agent: self.agent, call: &self.call.id, step }
    }
}

impl Journal for Nesting<'_> {
    async fn journal<T, F>(&self, step: &JournalStep<'_>, effect: F) -> Result<T, JournalError>
    where
        T: Serialize + DeserializeOwned + Send,
        F: Future<Output = T> + Send,
    {
        Journal::journal(&ErasedJournal(self.parent), &self.nested(step), effect).await
    }

    async fn approval<F>(
        &self,
        step: &JournalStep<'_>,
        waiting: &PendingApproval,
        review: F,
    ) -> Result<Approval, JournalError>
    where
        F: Future<Output = Approval> + Send,
    {
        Journal::approval(&ErasedJournal(self.parent), &self.nested(step), waiting, review).await
    }
    // The child's calls run together if the parent's journal keeps calls apart: their steps
    // are nested under the parent's call, each in a lane of its own.
    fn concurrent_calls(&self) -> bool {
        self.parent.concurrent_calls()
    }
}

/// The child's observer: what it sees reaches the parent's, nested under the agent's name.
struct Nested<'a, H> {
    hooks: &'a H,
    call: &'a ToolCall,
    agent: &'a str,
    /// Whether the child answers with text: a typed child's streamed JSON is not shown, as
    /// its own stream would not show it.
    text: bool,
}

impl<H: ToolRunner> Observer for Nested<'_, H> {
    const STREAMS: bool = H::STREAMS;
    const SILENT: bool = H::SILENT;

    fn observe(&self, observation: &Observation<'_>) {
        if !self.text && matches!(observation, Observation::TextDelta { .. }) {
            return;
        }
        self.hooks.nested(self.call, self.agent, observation);
    }
}

/// The child's effects: its escalations go to the parent's approver, and what each of its
/// model calls costs is the parent's turn's (and, through it, its own parent's). Its steps are
/// kept nowhere of their own.
struct Delegated<'a, H> {
    hooks: &'a H,
    parent: &'a Turn,
    agent: &'a str,
}

impl<H: ToolRunner> Effects for Delegated<'_, H> {
    // To hear of each model call, for its usage; there is nothing to commit.
    const COMMITS: bool = true;
    const DELEGATES_REVIEW: bool = true;

    fn commit(&self, _: &Conversation) -> impl Future<Output = Result<(), CommitError>> + Send {
        ready(Ok(()))
    }

    fn model_call(&self, call: &ModelCall<'_>) {
        if let Ok(response) = call.outcome {
            self.hooks.spent(self.parent, response.usage);
        }
    }

    fn delegated(&self, usage: Usage) {
        self.hooks.spent(self.parent, usage);
    }

    fn agent_name(&self) -> Option<&str> {
        Some(self.agent)
    }

    fn review<'a>(
        &'a self,
        call: &'a ToolCall,
        escalation: &'a Escalation,
    ) -> std::pin::Pin<Box<dyn Future<Output = Approval> + Send + 'a>> {
        Box::pin(async move {
            let review = self.hooks.review_nested(call, escalation, self.parent);
            match review.await {
                // The child's turn cannot stop to wait: nobody could answer it into its
                // conversation, which lives only as long as the parent's call.
                Approval::Suspend => Approval::Reject(format!(
                    "the call of `{}` in the sub-agent `{}` cannot wait for a person's approval",
                    call.name, self.agent
                )),
                approval => approval,
            }
        })
    }

    fn erased(&self) -> ErasedEffects<'_> {
        ErasedEffects::Plain
    }
}
