//! The agent and its loop.

#[macro_use]
mod chains;
mod boxed;
mod builder;
pub mod delegate;
mod drive;
pub(crate) mod effects;
mod model_call;
mod open_turn;
mod render;
pub(crate) mod run;
mod runs;
mod served;
mod step;
mod together;
mod tool_call;

pub(crate) use crate::error::halted;
pub use boxed::BoxedAgent;
pub use builder::AgentBuilder;
pub use run::TurnRun;
pub use runs::AnyAgent;
pub(crate) use runs::TurnGate;

use std::future::{Future, IntoFuture};
use std::sync::Arc;

use crate::approval::{Answer, Approval, Approver, NoApprover, PendingApproval};
use crate::context::{AuditSink, CharsPerToken, Counter, DynSummarizer};
use crate::conversation::{Conversation, Entry, TurnRef};
use crate::error::{Component, Error};
use crate::event::EventKind;
use crate::message::{Message, Part, Role};
use crate::model::{Model, ModelParams};
use crate::observe::{Observation, Observer, Watched};
use crate::pipeline::{Flow, Hooks, Pipeline, hook_panic, node::Chain};
use crate::task::TaskContext;
use crate::tool::{NoTools, ToolSet, ToolSpec};
use crate::trace::{self, TurnTrace, Within};
use crate::transform::StreamTransformer;
use crate::turn::Turn;
use crate::{Outcome, support::caught};

use drive::Resume;
use effects::Effects;
use open_turn::OpenTurn;
use run::StartsTurn;

/// An agent: a model, a fixed set of tools, a static pipeline of hooks, and an approver.
///
/// Its type records all four, so every hook call is a direct, inlinable call. Use
/// [`boxed`](Agent::boxed) to store agents of different types behind one type.
///
/// ```
/// use agentix::{Agent, Conversation, ScriptedModel};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let agent = Agent::builder(ScriptedModel::new().text("Hello!")).build();
/// let mut conversation = Conversation::new();
/// let reply = agent.run(&mut conversation, "Hi").await?;
/// assert_eq!(reply.joined_text(), "Hello!");
/// # Ok::<_, agentix::Error>(())
/// # }).unwrap();
/// ```
pub struct Agent<M, T = NoTools, P = Hooks, A = NoApprover, X = ()> {
    model: M,
    tools: T,
    hooks: P,
    approver: A,
    transformer: X,
    settings: Settings,
    tool_specs: Arc<[ToolSpec]>,
    tool_names: Vec<String>,
    /// What the system prompt and the tool specs take of every request, by the agent's counter.
    fixed_tokens: usize,
    /// What the system prompt alone takes: a tool set whose list changes counts its own.
    system_tokens: usize,
}

/// What an agent is configured with beside its model, tools, hooks and approver.
#[derive(Clone)]
struct Settings {
    /// The agent's name, for traces (`gen_ai.agent.name`).
    name: Option<Arc<str>>,
    system: Option<Arc<str>>,
    model_name: Option<String>,
    params: ModelParams,
    counter: Counter,
    summarizer: Option<Arc<dyn DynSummarizer>>,
    audit: Option<Arc<dyn AuditSink>>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            name: None,
            system: None,
            model_name: None,
            params: ModelParams::default(),
            counter: Counter::new(CharsPerToken::default()),
            summarizer: None,
            audit: None,
        }
    }
}

impl<M: Model, T: ToolSet, P: Pipeline, A: Approver, X: StreamTransformer> Agent<M, T, P, A, X> {
    /// Runs one turn: `message` opens it, and the reply is its final answer.
    ///
    /// The events fire in this order: `pre` → per step (`step_start` in a session's task →
    /// `before_model` → `wrap_model`, with `tripwire` beside the model call → `after_model` →
    /// per tool call (`before_tool` → `wrap_tool` → `after_tool` or `tool_error`)) →
    /// `before_final` → `post`. `post` runs at the end of every turn, however
    /// it ended.
    ///
    /// The turn is `Send` (every part of an agent is `Send + Sync`), so it can be spawned on a
    /// multi-thread runtime or awaited in a web server's handler:
    ///
    /// ```
    /// use std::sync::Arc;
    /// use agentix::{Agent, Conversation, ScriptedModel};
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let agent = Arc::new(Agent::builder(ScriptedModel::new().text("Hello!")).build());
    /// let task = tokio::spawn(async move {
    ///     let mut conversation = Conversation::new();
    ///     agent.run(&mut conversation, "Hi").await
    /// });
    /// assert_eq!(task.await.unwrap()?.joined_text(), "Hello!");
    /// # Ok::<_, agentix::Error>(())
    /// # }).unwrap();
    /// ```
    pub fn run<'a>(
        &'a self,
        conversation: &'a mut Conversation,
        message: impl Into<Message>,
    ) -> impl Future<Output = Outcome> + Send + 'a {
        run::start(self, conversation, message.into()).into_future()
    }

    /// One turn to set up, then await: [`run`](Agent::run) with more to say about how it runs
    /// — [`stream`](TurnRun::stream)ed, [`observe`](TurnRun::observe)d,
    /// [`commit`](TurnRun::commit)ted to a store step by step, or its effects passed through a
    /// [`journal`](TurnRun::journal) so that a crash does not repeat them. Each is paid for
    /// only when asked for; the future is `Send`, as `run`'s is.
    ///
    /// ```
    /// use agentix::{Agent, Conversation, ScriptedModel, StreamEvent};
    /// use futures::StreamExt;
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let agent = Agent::builder(ScriptedModel::new().text("Hello!")).build();
    /// let mut conversation = Conversation::new();
    /// let mut events = std::pin::pin!(agent.turn(&mut conversation, "Hi").stream());
    /// let mut text = String::new();
    /// while let Some(event) = events.next().await {
    ///     match event {
    ///         StreamEvent::Text(delta) => text.push_str(&delta),
    ///         StreamEvent::Finished(outcome) => assert!(outcome.is_ok()),
    ///         _ => {}
    ///     }
    /// }
    /// assert_eq!(text, "Hello!");
    /// # });
    /// ```
    pub fn turn<'a>(
        &'a self,
        conversation: &'a mut Conversation,
        message: impl Into<Message>,
    ) -> TurnRun<'a, Self, Message, (), (), impl StartsTurn<'a, Self, Message, (), ()>> {
        run::start(self, conversation, message.into())
    }

    /// Goes on with a turn the approver suspended ([`Approval::Suspend`]), `approval`
    /// answering the call it waits on ([`Conversation::pending_approval`]): approve it, reject
    /// it, or edit it. The step goes on from that call — the calls before it keep their results,
    /// the model is not called again for it — and the turn runs to its end as any does, `post`
    /// included. The log records the answer ([`Entry::Resumed`]). It may be suspended again, at
    /// a later call.
    ///
    /// The conversation may come from another process: a suspended turn is in its log, whole,
    /// and a store keeps it across a restart. Two processes answering one suspension at once
    /// would both run the call (the second's commit then conflicts): with many workers, take
    /// the conversation's lease first (`agentix_store::Store::lease`).
    ///
    /// What the resumed part is, for observers and limits: it fires no `pre` (that ran), it
    /// reports the answer as an [`Observation::Approval`] and its end as a second
    /// [`Observation::TurnEnded`] of the same turn (the first said it was waiting), and the
    /// conversation's `turn_timeout` counts from the resumption.
    ///
    /// ```
    /// use agentix::{Agent, Conversation, Error, ScriptedModel, Verdict, Turn, approval::Approval};
    /// use agentix::{ToolCall, event};
    /// use serde_json::json;
    ///
    /// #[agentix::hook(before_tool)]
    /// async fn ask_first(call: &mut ToolCall, _: &mut Turn) -> Verdict<event::BeforeTool> {
    ///     Verdict::escalate("deleting needs a person's yes")
    /// }
    ///
    /// #[agentix::tool(description = "Deletes a file.")]
    /// async fn delete(path: String) -> Result<String, std::convert::Infallible> {
    ///     Ok(format!("deleted {path}"))
    /// }
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let model = ScriptedModel::new()
    ///     .tool_call("delete", json!({ "path": "notes.txt" }))
    ///     .text("Deleted.");
    /// let agent = Agent::builder(model)
    ///     .tool(delete)
    ///     .hook(ask_first)
    ///     .approver(|_call, _escalation| async { Approval::Suspend })
    ///     .build();
    /// let mut conversation = Conversation::new();
    ///
    /// let waiting = agent.run(&mut conversation, "Delete my notes").await;
    /// assert!(matches!(waiting, Err(Error::AwaitingApproval { .. })));
    /// let (_, pending) = conversation.pending_approval().unwrap();
    /// assert_eq!(pending.call.name, "delete");
    ///
    /// let reply = agent.resume(&mut conversation, Approval::Approve).await?;
    /// assert_eq!(reply.joined_text(), "Deleted.");
    /// # Ok::<_, agentix::Error>(())
    /// # }).unwrap();
    /// ```
    pub fn resume<'a>(
        &'a self,
        conversation: &'a mut Conversation,
        answer: impl Into<Answer>,
    ) -> TurnRun<'a, Self, Answer, (), (), impl StartsTurn<'a, Self, Answer, (), ()>> {
        run::start(self, conversation, answer.into())
    }

    // `Runs::open` names its future `Send` so that callers take that from its signature: a
    // concrete agent's `async fn` future, checked through, trips rust-lang/rust#100013 ("`Send`
    // is not general enough") on the borrows its onions hold across awaits.
    //
    // A session's task passes its `step_start` hooks (`gate`) and what the turn knows of the
    // task; a plain turn passes `()`, which costs nothing.
    pub(crate) async fn observed<O: Observer, G: TurnGate, E: Effects>(
        &self,
        conversation: &mut Conversation,
        message: Message,
        observer: &O,
        gate: &G,
        task: Option<Box<TaskContext>>,
        effects: E,
    ) -> Outcome {
        check_user_message(&message)?;
        if let Some((turn, pending)) = conversation.pending_approval() {
            return Err(awaiting(turn, pending));
        }
        let mut turn = OpenTurn::open(conversation, message, task);
        self.conclude(&mut turn, None, observer, gate, &effects).await
    }

    /// Goes on with the suspended turn `conversation`'s log ends with, `answer` answering its
    /// waiting call.
    pub(crate) async fn resumed<O: Observer, E: Effects>(
        &self,
        conversation: &mut Conversation,
        answer: Answer,
        observer: &O,
        effects: E,
    ) -> Outcome {
        let (turn, mut resume) = resumption(conversation, answer)?;
        let state = std::mem::take(&mut resume.suspension.state);
        let mut turn = OpenTurn::reopen(conversation, turn, state);
        self.conclude(&mut turn, Some(resume), observer, &(), &effects).await
    }

    /// Drives an open turn to its end — or to a suspension — and ends it: `post`, the record of
    /// a failure, the last commit.
    ///
    /// Traced, it runs in the turn's span (`invoke_agent`), which records how it ended.
    async fn conclude<O: Observer, G: TurnGate, E: Effects>(
        &self,
        turn: &mut OpenTurn<'_>,
        resume: Option<Box<Resume>>,
        observer: &O,
        gate: &G,
        effects: &E,
    ) -> Outcome {
        if trace::listening() {
            turn.trace = self.turn_trace(turn, resume.is_none(), effects.agent_name());
        }
        let trace = turn.trace.clone();
        let span = trace.as_deref().map(|trace| &trace.span);
        let watched = Watched::new(observer, span);
        let observer = &watched;
        // The turn's one panic guard, for the hooks of the events `drive` runs unguarded, and
        // its time limit.
        let limit = turn.config().turn_timeout;
        turn.deadline = limit.map(|limit| std::time::Instant::now() + limit);
        let driven = bounded!(
            limit,
            Within::new(
                span,
                caught(|| self.drive(&mut turn.turn, &turn.step, observer, gate, effects, resume))
            )
        );
        let caught = driven.unwrap_or_else(|after| {
            // What was running when time ran out stopped there.
            turn.running_component = None;
            Ok(Err(Error::TurnTimedOut { after }))
        });
        let mut outcome = caught.unwrap_or_else(|payload| match hook_panic(payload, observer) {
            Ok((event, hook, message)) => Err(panicked(event, hook, message)),
            // Outside a hook: the component marked running, or agentix's own code.
            Err(payload) => {
                let component = turn.running_component.take().unwrap_or(Component::Loop);
                Err(component_panicked(component, payload))
            }
        });
        // An observer that panicked in the turn's last step ends it all the same.
        if outcome.is_ok() {
            outcome = observer.failed().and(outcome);
        }
        if let Err(Error::AwaitingApproval { .. }) = outcome {
            return suspended(outcome, turn, observer, effects).await;
        }
        if let Err(error) = &outcome {
            // A step the loop left midway (it unwound) joins the log, every call answered.
            turn.append_left_step(&error.to_string());
        }
        // `post` sees every outcome, recorded first.
        before_post(&outcome, turn);
        fire(observer, turn, EventKind::Post);
        let post_ended = run_guarded_chain!(
            in span;
            self,
            &mut *turn,
            observer,
            Post,
            post / post_in_place(&mut outcome)
        );
        after_post(post_ended, &mut outcome, turn);
        // The observer panicked at `post`.
        observer_failed(&mut outcome, turn, observer);
        // Ended here: a drop during the last commit records no cancellation after the end.
        turn.finish();
        // The turn's end: what `post` produced, or the record of how the turn failed. A failed
        // commit is the turn's error whatever ended it: the store is behind the log.
        if E::COMMITS
            && let Err(error) = commit_end(effects, turn).await
        {
            outcome = Err(error);
        }
        if let Some(trace) = &trace {
            trace::turn_ended(trace, &outcome, turn.usage());
        }
        // Told once the turn is committed: a stream's `Finished` comes after its last commit.
        observer.observe(&Observation::TurnEnded { turn: turn.turn_ref(), outcome: &outcome });
        if observer_failed(&mut outcome, turn, observer)
            && E::COMMITS
            && let Err(error) = commit_end(effects, turn).await
        {
            // The observer panicked at hearing that the turn ended: the log says so too.
            outcome = Err(error);
        }
        outcome
    }
}

impl<M: Model, T: ToolSet, P: Pipeline, A: Approver, X: StreamTransformer> Agent<M, T, P, A, X> {
    /// The span of `turn` (`invoke_agent`), `opened` by its user message or resumed, unless
    /// the subscriber leaves it out; the agent's name is its own, or the one it runs under
    /// (`called`: a sub-agent's tool's).
    #[cold]
    fn turn_trace(
        &self,
        turn: &Turn,
        opened: bool,
        called: Option<&str>,
    ) -> Option<Arc<TurnTrace>> {
        let requested = self.settings.model_name.as_deref();
        let span = trace::turn_span(
            self.settings.name.as_deref().or(called),
            self.model.provider(requested),
            self.model.model_name(requested),
            turn.conversation().id(),
            turn.turn_ref(),
            opened.then(|| turn.user_message()),
        );
        (!span.is_disabled()).then(|| Arc::new(TurnTrace::new(span, turn.usage())))
    }
}

/// What resuming `conversation` with `answer` goes on with; the log records the answer and
/// who gave it.
#[cold]
fn resumption(
    conversation: &mut Conversation,
    answer: Answer,
) -> Result<(TurnRef, Box<Resume>), Error> {
    let Answer { approval, by } = answer;
    let Some(Entry::Suspended { turn, suspension }) = conversation.log().last() else {
        return Err(Error::CannotResume {
            reason: "the conversation's log does not end with a suspended turn".to_owned(),
        });
    };
    if approval == Approval::Suspend {
        return Err(Error::CannotResume {
            reason: "the answer suspends the call again; resume with approve, reject or edit"
                .to_owned(),
        });
    }
    let (turn, suspension) = (*turn, (**suspension).clone());
    conversation.append(Entry::Resumed { turn, approval: Box::new(approval.clone()), by });
    Ok((turn, Box::new(Resume { suspension, approval })))
}

/// Ends the run of a turn the approver suspended: no `post` (the turn has not ended; it runs
/// when the resumed turn does), the suspended step committed, observers told.
#[cold]
async fn suspended<E: Effects>(
    mut outcome: Outcome,
    turn: &mut OpenTurn<'_>,
    observer: &impl Observer,
    effects: &E,
) -> Outcome {
    // Ended here: a drop while the step commits leaves the log as it is, suspended.
    turn.finish();
    if E::COMMITS
        && let Err(error) = commit_end(effects, turn).await
    {
        outcome = Err(error);
    }
    if let Some(trace) = &turn.trace {
        trace::turn_ended(trace, &outcome, turn.usage());
    }
    observer.observe(&Observation::TurnEnded { turn: turn.turn_ref(), outcome: &outcome });
    outcome
}

/// Whether the observer panicked while the turn was still going well: the turn then ends with
/// its error, recorded in the log.
fn observer_failed(
    outcome: &mut Outcome,
    turn: &mut Turn,
    observer: &Watched<'_, impl Observer>,
) -> bool {
    match (&*outcome, observer.failed()) {
        (Ok(_), Err(error)) => {
            record(turn, &error);
            *outcome = Err(error);
            true
        }
        _ => false,
    }
}

/// The error of a turn that waits on `pending`.
#[cold]
fn awaiting(turn: TurnRef, pending: &PendingApproval) -> Error {
    Error::AwaitingApproval { turn, pending: Box::new(pending.clone()) }
}

/// Commits the turn's log through `effects`: what joined the log since its last commit.
/// Inside the loop, whose panic guard names the effects if it panics.
pub(super) async fn commit_step<E: Effects>(effects: &E, turn: &mut Turn) -> Result<(), Error> {
    turn.running_component = Some(Component::Committer);
    let committed = effects.commit(turn.conversation()).await;
    turn.running_component = None;
    committed.map_err(Error::Commit)
}

/// [`commit_step`] at the turn's end, outside the loop's guard: under a guard of its own.
async fn commit_end<E: Effects>(effects: &E, turn: &mut Turn) -> Result<(), Error> {
    match caught(|| effects.commit(turn.conversation())).await {
        Ok(result) => result.map_err(Error::Commit),
        Err(payload) => Err(component_panicked(Component::Committer, payload)),
    }
}

/// The turn's error for a component's panic.
#[cold]
fn component_panicked(component: Component, payload: Box<dyn std::any::Any + Send>) -> Error {
    Error::ComponentPanicked { component, message: crate::support::panic_message(payload.as_ref()) }
}

/// Refuses a message that cannot open a turn: one whose role is not the user's, or that
/// carries tool calls or results (a request holding it would be invalid).
fn check_user_message(message: &Message) -> Result<(), Error> {
    let reason = if message.role != Role::User {
        format!("its role is {}, not user", message.role)
    } else if message.content.iter().any(|part| !matches!(part, Part::Text(_))) {
        "it carries a tool call or a tool result; a user message holds text".to_owned()
    } else {
        return Ok(());
    };
    Err(Error::InvalidMessage { reason })
}

/// Records how the turn ended, for `post` to see.
fn before_post(outcome: &Outcome, turn: &mut Turn) {
    // What durable `pre` hooks produced joins the log only when `pre` went through.
    turn.discard_unlogged();
    if let Err(error) = outcome {
        record(turn, error);
    }
}

/// Commits what durable `post` hooks produced and folds a `post` hook's halt or panic into the
/// outcome: it ends a completed turn; after a failure, the failure stays the cause.
fn after_post(
    post_ended: Option<Box<Flow<crate::event::Post>>>,
    outcome: &mut Outcome,
    turn: &mut Turn,
) {
    turn.log_durable(EventKind::Post);
    if let Some(flow) = post_ended {
        post_ended_turn(*flow, outcome, turn);
    }
}

/// A `post` hook halted or failed: the turn's error, unless it had one.
#[cold]
fn post_ended_turn(flow: Flow<crate::event::Post>, outcome: &mut Outcome, turn: &mut Turn) {
    let error = match flow {
        Flow::Continue => return,
        Flow::Halt { hook, halt } => halted(EventKind::Post, hook, halt),
        Flow::Failed { hook, failure } => failure.error(EventKind::Post, hook),
    };
    record(turn, &error);
    if outcome.is_ok() {
        *outcome = Err(error);
    }
}

fn fire<O: Observer>(observer: &O, turn: &Turn, event: EventKind) {
    observer.observe(&Observation::Event { turn: turn.turn_ref(), step: turn.step(), event });
}

#[cold]
fn panicked(event: EventKind, hook: &'static str, message: String) -> Error {
    Error::HookPanicked { event, hook, message }
}

#[cold]
fn record(turn: &mut Turn, error: &Error) {
    let entry = match error {
        Error::Halted { event, hook, reason } | Error::Rejected { event, hook, reason } => {
            Entry::Halted {
                turn: turn.turn_ref(),
                event: *event,
                hook: (*hook).to_owned(),
                reason: reason.clone(),
            }
        }
        // A trip is a guard's decision, as a halt is: the log names the hook and why.
        Error::Tripped { hook, reason } => Entry::Halted {
            turn: turn.turn_ref(),
            event: EventKind::Tripwire,
            hook: (*hook).to_owned(),
            reason: reason.clone(),
        },
        other => Entry::Failed { turn: turn.turn_ref(), error: other.to_string() },
    };
    turn.append(entry);
}

impl<M, T, P, A, X> std::fmt::Debug for Agent<M, T, P, A, X> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent")
            .field("system", &self.settings.system)
            .field("model_name", &self.settings.model_name)
            .field("tools", &self.tool_names)
            .finish_non_exhaustive()
    }
}
