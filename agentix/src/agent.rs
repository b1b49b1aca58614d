//! The agent and its loop.

use std::future::Future;
use std::mem;
use std::ops::{Deref, DerefMut};
use std::pin::Pin;
use std::sync::Arc;

use std::sync::atomic::{AtomicBool, Ordering};
use std::task::Poll;

use futures::{FutureExt, Stream, StreamExt};

use crate::stream::{Queue, StreamEvent};

use crate::approval::{Approval, Approver, NoApprover};
use crate::context::{AuditSink, CharsPerToken, MESSAGE_OVERHEAD, Summarizer, TokenCounter, Units};
use crate::conversation::{Conversation, Entry};
use crate::error::Error;
use crate::event::EventKind;
use crate::hook::{NextModel, NextTool};
use crate::message::{AssistantMessage, Message, Part, Role, ToolCall, ToolFailure, ToolResult};
use crate::model::{Chunk, Model, ModelError, ModelParams, ModelRequest, ModelResponse, Usage};
use crate::observe::{Observation, Observer};
use crate::pipeline::{Chain, Flow, Hooks, Pipeline, Register, hook_panic, not_run, settle};
use crate::tool::{NoTools, Tool, ToolSet, ToolSpec, Toolbox};
use crate::transform::StreamTransformer;
use crate::turn::{Blame, Turn};
use crate::verdict::{Feedback, Halt};
use crate::{Outcome, caught, panic_message};

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
}

/// What an agent is configured with beside its model, tools, hooks and approver.
#[derive(Clone)]
struct Settings {
    system: Option<Arc<str>>,
    model_name: Option<String>,
    params: ModelParams,
    counter: Arc<dyn TokenCounter>,
    summarizer: Option<Arc<dyn Summarizer>>,
    audit: Option<Arc<dyn AuditSink>>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            system: None,
            model_name: None,
            params: ModelParams::default(),
            counter: Arc::new(CharsPerToken::default()),
            summarizer: None,
            audit: None,
        }
    }
}

/// Builds an [`Agent`], growing its type with each tool and hook.
#[must_use = "an agent builder does nothing until `build` is called"]
pub struct AgentBuilder<M, T = NoTools, P = Hooks, A = NoApprover, X = ()> {
    model: M,
    tools: T,
    hooks: P,
    approver: A,
    transformer: X,
    settings: Settings,
}

impl<M: Model> Agent<M> {
    /// Starts building an agent around `model`.
    pub fn builder(model: M) -> AgentBuilder<M> {
        AgentBuilder {
            model,
            tools: NoTools,
            hooks: Hooks::default(),
            approver: NoApprover,
            transformer: (),
            settings: Settings::default(),
        }
    }
}

impl<M, T, P, A, X> AgentBuilder<M, T, P, A, X> {
    /// Sets the system prompt.
    pub fn system(mut self, prompt: impl Into<Arc<str>>) -> Self {
        self.settings.system = Some(prompt.into());
        self
    }

    /// Names the model to request, for adapters that serve several.
    pub fn model_name(mut self, name: impl Into<String>) -> Self {
        self.settings.model_name = Some(name.into());
        self
    }

    /// Sets the sampling parameters.
    pub fn params(mut self, params: ModelParams) -> Self {
        self.settings.params = params;
        self
    }

    /// Counts tokens with `counter` (for the context budget and the injection reserve) instead
    /// of the [`CharsPerToken`] estimate.
    pub fn token_counter(mut self, counter: impl TokenCounter + 'static) -> Self {
        self.settings.counter = Arc::new(counter);
        self
    }

    /// Summarizes the turns compaction drops, instead of dropping them silently.
    pub fn summarizer(mut self, summarizer: impl Summarizer + 'static) -> Self {
        self.settings.summarizer = Some(Arc::new(summarizer));
        self
    }

    /// Records every model request, exactly as sent, in `audit`.
    pub fn audit(mut self, audit: Arc<dyn AuditSink>) -> Self {
        self.settings.audit = Some(audit);
        self
    }

    /// Adds a tool.
    pub fn tool<U: Tool>(self, tool: U) -> AgentBuilder<M, Toolbox<T, U>, P, A, X> {
        AgentBuilder {
            tools: Toolbox::new(self.tools, tool),
            model: self.model,
            hooks: self.hooks,
            approver: self.approver,
            settings: self.settings,
            transformer: self.transformer,
        }
    }

    /// Replaces the tool set with a hand-written [`ToolSet`] (for tools known only at run time);
    /// [`tool`](AgentBuilder::tool) adds typed tools to the set instead.
    pub fn tools<U: ToolSet>(self, tools: U) -> AgentBuilder<M, U, P, A, X> {
        AgentBuilder {
            tools,
            model: self.model,
            hooks: self.hooks,
            approver: self.approver,
            settings: self.settings,
            transformer: self.transformer,
        }
    }

    /// Adds a hook after those already added: a `#[hook]` function, a [`Hook`](crate::Hook), or
    /// a hook of [`on`](crate::on). Hooks of one event run in the order they are added; wrap
    /// hooks nest with the first added outermost; consecutive parallel `pre` hooks run together.
    pub fn hook<H, Kind>(self, hook: H) -> AgentBuilder<M, T, H::Output, A, X>
    where
        H: Register<Kind, P>,
    {
        AgentBuilder {
            hooks: hook.register(self.hooks),
            model: self.model,
            tools: self.tools,
            approver: self.approver,
            settings: self.settings,
            transformer: self.transformer,
        }
    }

    /// Adds a stream transformer after those already added: the model's text passes through
    /// each, in order, as it streams (and whole, when it does not), before any hook sees it.
    pub fn transformer<Y: StreamTransformer>(
        self,
        transformer: Y,
    ) -> AgentBuilder<M, T, P, A, (X, Y)> {
        AgentBuilder {
            transformer: (self.transformer, transformer),
            model: self.model,
            tools: self.tools,
            hooks: self.hooks,
            approver: self.approver,
            settings: self.settings,
        }
    }

    /// Sets who decides escalated tool calls. Without one, every escalation is rejected.
    pub fn approver<B: Approver>(self, approver: B) -> AgentBuilder<M, T, P, B, X> {
        AgentBuilder {
            approver,
            model: self.model,
            tools: self.tools,
            hooks: self.hooks,
            settings: self.settings,
            transformer: self.transformer,
        }
    }

    /// Finishes the agent.
    pub fn build(self) -> Agent<M, T, P, A, X>
    where
        T: ToolSet,
    {
        let mut specs = Vec::new();
        self.tools.specs(&mut specs);
        let tool_names = specs.iter().map(|spec| spec.name.clone()).collect();
        // The system prompt and the specs never change after build: counting them once keeps
        // their tokenizing (and the schemas' JSON serialization) out of every request.
        let counter = &*self.settings.counter;
        let fixed_tokens =
            self.settings.system.as_deref().map_or(0, |system| counter.count(system))
                + specs.iter().map(|spec| counter.count_tool(spec)).sum::<usize>();
        Agent {
            model: self.model,
            tools: self.tools,
            hooks: self.hooks,
            approver: self.approver,
            settings: self.settings,
            transformer: self.transformer,
            tool_specs: specs.into(),
            tool_names,
            fixed_tokens,
        }
    }
}

/// Runs one event's chain, skipped at compile time when no hook is on the event. When none of
/// the event's hooks awaits, the chain runs in place (`$in_place`: no future at all); otherwise in
/// the loop's own future (no future of its own). No guard of its own: a panic in one of its
/// hooks unwinds out of the loop to the turn's one guard (`run_observed`), which names the hook.
/// The loop holds nothing at these events that the log must keep, so it loses nothing by
/// unwinding.
macro_rules! run_chain {
    ($agent:expr, $turn:expr, $observer:expr, $event:ident, $method:ident / $in_place:ident($($value:expr)?)) => {{
        let chain = $agent.hooks.chain();
        if !handles(chain, EventKind::$event) {
            Flow::Continue
        } else if runs_in_place(chain, EventKind::$event) {
            chain.$in_place($($value,)? &mut *$turn, $observer)
        } else {
            chain.$method($($value,)? &mut *$turn, $observer).await
        }
    }};
}

/// [`run_chain!`] under a panic guard of its own, for the events after which the loop must still
/// write something to the log: the tool events (the step, with a result for every call) and
/// `post` (which runs after the turn's guard).
macro_rules! run_guarded_chain {
    ($agent:expr, $turn:expr, $observer:expr, $event:ident, $method:ident / $in_place:ident($($value:expr)?)) => {{
        let chain = $agent.hooks.chain();
        if !handles(chain, EventKind::$event) {
            Flow::Continue
        } else if runs_in_place(chain, EventKind::$event) {
            let run = || chain.$in_place($($value,)? &mut *$turn, $observer);
            let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(run));
            settle(caught, $turn, $observer)
        } else {
            let future = chain.$method($($value,)? &mut *$turn, $observer);
            // A plain `CatchUnwind`, not `caught`: a chain's future runs no code until it is
            // polled, so there is no panic in making it to catch (and that check costs about a
            // dozen instructions an event).
            let caught = std::panic::AssertUnwindSafe(future).catch_unwind().await;
            settle(caught, $turn, $observer)
        }
    }};
}

/// Whether `chain` has hooks on `event`: a constant, once `C` is known.
fn handles<C: Chain>(_chain: &C, event: EventKind) -> bool {
    C::EVENTS.contains(event)
}

/// Whether none of `chain`'s hooks on `event` awaits: a constant, once `C` is known.
fn runs_in_place<C: Chain>(_chain: &C, event: EventKind) -> bool {
    C::IN_PLACE_EVENTS.contains(event)
}

impl<M: Model, T: ToolSet, P: Pipeline, A: Approver, X: StreamTransformer> Agent<M, T, P, A, X> {
    /// Runs one turn: `message` opens it, and the reply is its final answer.
    ///
    /// The events fire in this order: `pre` → per step (`before_model` → `wrap_model` →
    /// `after_model` → per tool call (`before_tool` → `wrap_tool` → `after_tool` or
    /// `tool_error`)) → `before_final` → `post`. `post` runs at the end of every turn, however
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
        self.run_observed(conversation, message, &())
    }

    /// [`run`](Agent::run), reporting every event and hook decision to `observer`. `Send`, as
    /// `run` is.
    pub fn run_observed<'a, O: Observer>(
        &'a self,
        conversation: &'a mut Conversation,
        message: impl Into<Message>,
        observer: &'a O,
    ) -> impl Future<Output = Outcome> + Send + 'a {
        self.observed(conversation, message.into(), observer)
    }

    // `run_observed` names its future `Send` so that callers take that from its signature: a
    // concrete agent's `async fn` future, checked through, trips rust-lang/rust#100013 ("`Send`
    // is not general enough") on the borrows its onions hold across awaits.
    async fn observed<O: Observer>(
        &self,
        conversation: &mut Conversation,
        message: Message,
        observer: &O,
    ) -> Outcome {
        let mut turn = OpenTurn::open(conversation, message);
        // The turn's one panic guard, for the hooks of the events `drive` runs unguarded.
        let caught = caught(|| self.drive(&mut turn, observer)).await;
        let mut outcome = caught.unwrap_or_else(|payload| {
            let (event, hook, message) = hook_panic(payload, &mut turn, observer);
            Err(panicked(event, hook, message))
        });
        // `post` sees every outcome, recorded first.
        before_post(&outcome, &mut turn);
        fire(observer, &turn, EventKind::Post);
        let post_flow = run_guarded_chain!(
            self,
            &mut *turn,
            observer,
            Post,
            post / post_in_place(&mut outcome)
        );
        after_post(post_flow, &mut outcome, &mut turn, observer);
        turn.finish();
        outcome
    }

    /// [`run`](Agent::run), streamed: the model's text arrives as it is generated (through the
    /// stream transformers), with every event and hook decision, ending with
    /// [`StreamEvent::Finished`]. It is the same loop as `run`: every hook fires the same way on
    /// both. Dropping the stream midway cancels the turn and leaves the log consistent. The
    /// stream is `Send`, as `run`'s future is.
    pub fn run_stream<'a>(
        &'a self,
        conversation: &'a mut Conversation,
        message: impl Into<Message>,
    ) -> impl Stream<Item = StreamEvent> + Send + 'a {
        let message = message.into();
        async_stream::stream! {
            let queue = Queue::default();
            let mut turn = std::pin::pin!(self.run_observed(conversation, message, &queue));
            loop {
                let finished = std::future::poll_fn(|cx| match turn.as_mut().poll(cx) {
                    Poll::Ready(_) => Poll::Ready(true),
                    Poll::Pending if !queue.is_empty() => Poll::Ready(false),
                    Poll::Pending => Poll::Pending,
                })
                .await;
                while let Some(event) = queue.pop() {
                    yield event;
                }
                if finished {
                    break;
                }
            }
        }
    }

    /// Erases the agent's type, for storage beside agents of other types. Each turn then costs
    /// one allocation for its future.
    pub fn boxed(self) -> BoxedAgent
    where
        Self: 'static,
    {
        BoxedAgent { agent: Box::new(self) }
    }

    async fn drive<O: Observer>(&self, turn: &mut Turn, observer: &O) -> Outcome {
        fire(observer, turn, EventKind::Pre);
        match run_chain!(self, turn, observer, Pre, pre / pre_in_place()) {
            Flow::Continue => {
                check_injections(turn, &*self.settings.counter, turn.config().injection_reserve)?;
                turn.commit_durable(EventKind::Pre);
            }
            Flow::Halt { hook, halt } => return Err(halted(EventKind::Pre, hook, halt)),
            Flow::Panicked { hook, message } => {
                return Err(panicked(EventKind::Pre, hook, message));
            }
        }
        let mut retry: Option<Retry> = None;
        loop {
            if turn.step >= turn.config().max_steps {
                return Err(Error::StepLimit { limit: turn.config().max_steps });
            }
            let mut request = match self.plain_request(turn, retry.as_ref()) {
                Some(request) => request,
                None => self.render(turn, retry.as_ref()).await?,
            };
            fire(observer, turn, EventKind::BeforeModel);
            let mut message = match run_chain!(
                self,
                turn,
                observer,
                BeforeModel,
                before_model / before_model_in_place(&mut request)
            ) {
                Flow::Continue => self.call_model(&request, turn, observer).await?,
                Flow::Stop { value, .. } => value,
                Flow::Halt { hook, halt } => {
                    return Err(halted(EventKind::BeforeModel, hook, halt));
                }
                Flow::Panicked { hook, message } => {
                    return Err(panicked(EventKind::BeforeModel, hook, message));
                }
            };

            fire(observer, turn, EventKind::AfterModel);
            let mut answer = match run_chain!(
                self,
                turn,
                observer,
                AfterModel,
                after_model / after_model_in_place(&mut message)
            ) {
                Flow::Continue if message.calls_tools() => {
                    self.run_tools(message, turn, observer).await?;
                    turn.step += 1;
                    retry = None;
                    continue;
                }
                Flow::Continue => message,
                Flow::Stop { hook, value } => final_answer(EventKind::AfterModel, hook, value)?,
                Flow::Retry { hook, feedback } => {
                    let withdrawn =
                        Observation::Withdrawn { event: EventKind::AfterModel, hook: Some(hook) };
                    observer.observe(&withdrawn);
                    retry = Some(Retry::new(turn, EventKind::AfterModel, hook, message, feedback)?);
                    continue;
                }
                Flow::Halt { hook, halt } => {
                    return Err(halted(EventKind::AfterModel, hook, halt));
                }
                Flow::Panicked { hook, message } => {
                    return Err(panicked(EventKind::AfterModel, hook, message));
                }
            };

            fire(observer, turn, EventKind::BeforeFinal);
            match run_chain!(
                self,
                turn,
                observer,
                BeforeFinal,
                before_final / before_final_in_place(&mut answer)
            ) {
                Flow::Continue => {}
                Flow::Stop { hook, value } => {
                    answer = final_answer(EventKind::BeforeFinal, hook, value)?
                }
                Flow::Retry { hook, feedback } => {
                    observer.observe(&Observation::Withdrawn {
                        event: EventKind::BeforeFinal,
                        hook: Some(hook),
                    });
                    retry = Some(Retry::new(turn, EventKind::BeforeFinal, hook, answer, feedback)?);
                    continue;
                }
                Flow::Halt { hook, halt } => {
                    return Err(halted(EventKind::BeforeFinal, hook, halt));
                }
                Flow::Panicked { hook, message } => {
                    return Err(panicked(EventKind::BeforeFinal, hook, message));
                }
            }
            // A hook edited tool calls into the answer: committing it would leave them unanswered.
            // (Without `before_final` hooks, the answer is as `after_model` left it: checked.)
            if handles(self.hooks.chain(), EventKind::BeforeFinal) {
                answer = final_answer(EventKind::BeforeFinal, "before_final chain", answer)?;
            }
            turn.append(Entry::Assistant { turn: turn.turn_ref(), message: answer.clone() });
            return Ok(answer);
        }
    }

    /// Renders the request for this step: `[system, history…, user message, durable output,
    /// injections, this turn's steps…, retry feedback]`. The prefix before the injections
    /// depends only on the log, never on what hooks inject this turn, so the provider's prompt
    /// cache holds across turns. Compaction drops the oldest earlier turns, then the oldest
    /// steps, whole, until the request fits `context_budget - injection_reserve`; with a
    /// summarizer, what it drops is replaced by a summary.
    async fn render(&self, turn: &mut Turn, retry: Option<&Retry>) -> Result<ModelRequest, Error> {
        let counter = &*self.settings.counter;
        let config = turn.config().clone();
        check_injections(turn, counter, config.injection_reserve)?;

        let mut feedback = Vec::new();
        if let Some(Retry { rejected, feedback: Feedback { text: Some(text) } }) = retry {
            // Its tool calls never ran: replaying them unanswered would be an invalid request.
            let said: Vec<Part> = rejected
                .content
                .iter()
                .filter(|part| !matches!(part, Part::ToolCall(_)))
                .cloned()
                .collect();
            if !said.is_empty() {
                feedback.push(Message { role: Role::Assistant, content: said });
            }
            feedback.push(Message::user(text.clone()));
        }
        let fixed = self.fixed_tokens
            + feedback.iter().map(|message| counter.count_message(message)).sum::<usize>();
        let target = config.compaction_target();

        // Each entry rendered once: counted (if not yet this turn), then moved into the request.
        let rendered: Vec<Option<Message>> = turn.log().iter().map(Entry::to_message).collect();
        let units = Units::of(turn.log(), turn.user_entry());
        let mut total = fixed + turn.count_entries(&rendered, &units.durable, counter);
        let mut plan = units.keep_all();
        let mut summary = None;
        if total > target {
            turn.itemize_tokens(&rendered, counter);
            (plan, total) = units.plan(turn.log(), turn.entry_tokens(), fixed, target);
        }
        if let Some(summarizer) = &self.settings.summarizer {
            // A summary takes room too: while it makes more turns go, summarize those as well.
            // The dropped range only grows, so this ends.
            // The fixed tokens `total` was planned with: the previous round's summary counts in
            // it, and gives way to this round's.
            let mut planned_with = fixed;
            while !plan.dropped_history.is_empty() {
                let message = summarize(turn, summarizer.as_ref(), plan.dropped_history.end).await;
                let with_summary = fixed + counter.count_message(&message);
                let (next, next_total) =
                    units.plan(turn.log(), turn.entry_tokens(), with_summary, target);
                if next.dropped_history.end <= plan.dropped_history.end {
                    total = with_summary + (total - planned_with);
                    summary = Some(message);
                    break;
                }
                (plan, total, planned_with) = (next, next_total, with_summary);
            }
            if total > target && summary.take().is_some() {
                // Better the history without its summary than no request at all.
                (plan, total) = units.plan(turn.log(), turn.entry_tokens(), fixed, target);
            }
        }
        if total > target {
            return Err(Error::ContextOverflow { budget: target, size: total });
        }

        // The kept entries, collected in place of their rendering; then what is not in the log.
        let kept = |entry: usize| {
            (plan.dropped_history.end..units.opening.end).contains(&entry)
                || entry >= plan.dropped_steps.end
        };
        // Injections go right after the user message.
        let injected_at = (!turn.injections().is_empty()).then(|| {
            rendered[plan.dropped_history.end..units.opening.end].iter().flatten().count()
        });
        let mut messages: Vec<Message> = rendered
            .into_iter()
            .enumerate()
            .filter_map(|(entry, message)| message.filter(|_| kept(entry)))
            .collect();
        // Everything the turn injected, durable or not, in the order it was injected; the
        // durable part is also in the log, for later turns.
        if let Some(at) = injected_at {
            let injected = turn.injections().iter().map(|injection| injection.part.clone());
            messages.insert(at, Message { role: Role::User, content: injected.collect() });
        }
        if let Some(summary) = summary {
            messages.insert(0, summary);
        }
        messages.extend(feedback);
        Ok(self.request(messages))
    }

    /// The request of most steps, rendered without planning: when the step adds nothing to the
    /// log's messages (no injections, no retry feedback) and the log fits. `None` leaves the
    /// request to [`render`](Agent::render).
    fn plain_request(&self, turn: &mut Turn, retry: Option<&Retry>) -> Option<ModelRequest> {
        if retry.is_some_and(|retry| retry.feedback.text.is_some()) || !turn.injections().is_empty()
        {
            return None;
        }
        let room = turn.config().compaction_target().checked_sub(self.fixed_tokens)?;
        let messages = turn.render_within(room, &*self.settings.counter)?;
        Some(self.request(messages))
    }

    fn request(&self, messages: Vec<Message>) -> ModelRequest {
        ModelRequest {
            system: self.settings.system.clone(),
            messages,
            tools: self.tool_specs.clone(),
            model: self.settings.model_name.clone(),
            params: self.settings.params.clone(),
        }
    }

    async fn call_model<O: Observer>(
        &self,
        request: &ModelRequest,
        turn: &Turn,
        observer: &O,
    ) -> Result<AssistantMessage, Error> {
        fire(observer, turn, EventKind::WrapModel);
        let audit = self.settings.audit.as_deref();
        let model = CallModel {
            model: &self.model,
            turn,
            audit,
            observer,
            transformer: &self.transformer,
            streamed: AtomicBool::new(false),
        };
        let result = self.hooks.model_onion(turn, observer, model).call(request).await;
        if let Some(aborted) = turn.aborted.get() {
            return Err(panicked(aborted.event, aborted.hook, aborted.message.clone()));
        }
        match result {
            Ok(response) => Ok(response.message),
            // An error a wrap hook made itself names the hook; one it passed on is the model's.
            Err(error) => Err(match turn.model_blame() {
                Blame::Hook(hook) => Error::HookFailed {
                    event: EventKind::WrapModel,
                    hook,
                    message: error.to_string(),
                },
                Blame::Model | Blame::Nobody => Error::Model(error),
            }),
        }
    }

    /// Runs the step's tool calls in order and commits the step — the assistant message with one
    /// result per call — even when the turn ends midway, so the log never holds an unanswered call.
    /// `before_tool` hooks (and an approver) edit each call in place: the log records each call
    /// as they left it, so every result answers the call written beside it.
    async fn run_tools<O: Observer>(
        &self,
        mut message: AssistantMessage,
        turn: &mut Turn,
        observer: &O,
    ) -> Result<(), Error> {
        let mut results = Vec::with_capacity(message.tool_calls().count());
        let mut interruption = None;
        let calls = message.content.iter_mut().filter_map(|part| match part {
            Part::ToolCall(call) => Some(call),
            _ => None,
        });
        for call in calls {
            if let Err(error) = self.run_tool_call(call, &mut results, turn, observer).await {
                interruption = Some(error);
                break;
            }
        }
        if let Some(error) = &interruption {
            for call in message.tool_calls().skip(results.len()) {
                results.push(ToolResult::failure(
                    call,
                    ToolFailure::NotRun { reason: error.to_string() },
                ));
            }
        }
        let turn_ref = turn.turn_ref();
        turn.append(Entry::Assistant { turn: turn_ref, message });
        turn.append(Entry::ToolResults { turn: turn_ref, results });
        interruption.map_or(Ok(()), Err)
    }

    /// Runs one call and pushes its result onto `results` (where the `after_tool` and
    /// `tool_error` hooks then edit it: the result is not moved again). An error ends the turn;
    /// the call has a result if the tool ran.
    async fn run_tool_call<O: Observer>(
        &self,
        call: &mut ToolCall,
        results: &mut Vec<ToolResult>,
        turn: &mut Turn,
        observer: &O,
    ) -> Result<(), Error> {
        fire(observer, turn, EventKind::BeforeTool);
        let refusal = match run_guarded_chain!(
            self,
            turn,
            observer,
            BeforeTool,
            before_tool / before_tool_in_place(call)
        ) {
            Flow::Continue => None,
            Flow::Reject { hook, rejection } => Some((hook.to_owned(), rejection.reason)),
            Flow::Escalate { hook, escalation } => {
                let review = caught(|| self.approver.review(call, &escalation, turn)).await;
                let approval = review.unwrap_or_else(|payload| {
                    Approval::Reject(format!(
                        "the approver panicked: {}",
                        panic_message(payload.as_ref())
                    ))
                });
                observer.observe(&Observation::Approval { hook, call, approval: &approval });
                match approval {
                    Approval::Approve => None,
                    Approval::Edit(edited) => {
                        let id = mem::take(&mut call.id);
                        *call = ToolCall { id, ..edited };
                        None
                    }
                    Approval::Reject(reason) => {
                        Some((format!("the approver, on escalation by {hook}"), reason))
                    }
                }
            }
            Flow::Halt { hook, halt } => return Err(halted(EventKind::BeforeTool, hook, halt)),
            Flow::Panicked { hook, message } => {
                return Err(panicked(EventKind::BeforeTool, hook, message));
            }
        };
        if let Some((by, reason)) = refusal {
            results.push(ToolResult::failure(call, ToolFailure::Rejected { by, reason }));
            return Ok(());
        }

        fire(observer, turn, EventKind::WrapTool);
        let tool = CallTool { tools: &self.tools, names: &self.tool_names, turn };
        let result = self.hooks.tool_onion(turn, observer, tool).call(call).await;
        if let Some(aborted) = turn.aborted.get() {
            return Err(panicked(aborted.event, aborted.hook, aborted.message.clone()));
        }
        results.push(result);
        let Some(result) = results.last_mut() else { unreachable!("a result was just pushed") };

        let (event, end) = if result.is_error() {
            fire(observer, turn, EventKind::ToolError);
            let flow = run_guarded_chain!(
                self,
                turn,
                observer,
                ToolError,
                tool_error / tool_error_in_place(result)
            );
            (EventKind::ToolError, flow.into_end())
        } else {
            fire(observer, turn, EventKind::AfterTool);
            let flow = run_guarded_chain!(
                self,
                turn,
                observer,
                AfterTool,
                after_tool / after_tool_in_place(result)
            );
            (EventKind::AfterTool, flow.into_end())
        };
        answer_the_call(call, result);
        observer.observe(&Observation::ToolFinished { result });
        match end {
            None => Ok(()),
            Some(End::Halt { hook, halt }) => Err(halted(event, hook, halt)),
            Some(End::Panicked { hook, message }) => Err(panicked(event, hook, message)),
        }
    }
}

/// Records how the turn ended, for `post` to see.
fn before_post(outcome: &Outcome, turn: &mut Turn) {
    // What durable `pre` hooks produced joins the log only when `pre` went through.
    turn.discard_uncommitted();
    if let Err(error) = outcome {
        record(turn, error);
    }
}

/// Commits what durable `post` hooks produced and folds a `post` hook's halt or panic into the
/// outcome: it ends a completed turn; after a failure, the failure stays the cause.
fn after_post(
    post_flow: Flow<crate::event::Post>,
    outcome: &mut Outcome,
    turn: &mut Turn,
    observer: &impl Observer,
) {
    turn.commit_durable(EventKind::Post);
    let post_error = match post_flow {
        Flow::Continue => None,
        Flow::Halt { hook, halt } => Some(halted(EventKind::Post, hook, halt)),
        Flow::Panicked { hook, message } => Some(panicked(EventKind::Post, hook, message)),
    };
    if let Some(error) = post_error {
        record(turn, &error);
        if outcome.is_ok() {
            *outcome = Err(error);
        }
    }
    observer.observe(&Observation::TurnEnded { turn: turn.turn_ref(), outcome });
}

/// Fails the turn when what hooks injected is over the reserve, naming the hook whose content
/// crossed it: nothing is truncated.
#[inline]
fn check_injections(turn: &Turn, counter: &dyn TokenCounter, reserve: usize) -> Result<(), Error> {
    if turn.injections().is_empty() {
        return Ok(());
    }
    count_injections(turn, counter, reserve)
}

fn count_injections(turn: &Turn, counter: &dyn TokenCounter, reserve: usize) -> Result<(), Error> {
    let mut size = MESSAGE_OVERHEAD;
    let mut offender = None;
    for injection in turn.injections() {
        size += counter.count_part(&injection.part);
        if size > reserve && offender.is_none() {
            offender = Some(injection.hook.clone().into_owned());
        }
    }
    match offender {
        None => Ok(()),
        Some(hook) => Err(Error::InjectionOverflow { hook, reserve, size }),
    }
}

/// The summary of the earlier turns up to log index `end`, from the turn's cache when the same
/// turns were summarized for an earlier step.
async fn summarize(turn: &mut Turn, summarizer: &dyn Summarizer, end: usize) -> Message {
    if let Some((cached, message)) = &turn.summary
        && *cached == end
    {
        return message.clone();
    }
    let dropped: Vec<Message> = turn.log()[..end].iter().filter_map(Entry::to_message).collect();
    let text = summarizer.summarize(&dropped).await;
    let message = Message::user(format!("Summary of the earlier conversation: {text}"));
    turn.summary = Some((end, message.clone()));
    message
}

/// The result answers the call that ran, whatever id and name a `wrap_tool`, `after_tool` or
/// `tool_error` hook gave it: the log pairs every call with its result by id.
fn answer_the_call(call: &ToolCall, result: &mut ToolResult) {
    if result.call_id != call.id {
        result.call_id.clone_from(&call.id);
    }
    if result.name != call.name {
        result.name.clone_from(&call.name);
    }
}

fn fire<O: Observer>(observer: &O, turn: &Turn, event: EventKind) {
    observer.observe(&Observation::Event { turn: turn.turn_ref(), step: turn.step(), event });
}

#[cold]
fn halted(event: EventKind, hook: &'static str, halt: Halt) -> Error {
    if halt.failed {
        Error::HookFailed { event, hook, message: halt.reason }
    } else {
        Error::Halted { event, hook, reason: halt.reason }
    }
}

#[cold]
fn panicked(event: EventKind, hook: &'static str, message: String) -> Error {
    Error::HookPanicked { event, hook, message }
}

#[cold]
fn record(turn: &mut Turn, error: &Error) {
    let entry = match error {
        Error::Halted { event, hook, reason } => Entry::Halted {
            turn: turn.turn_ref(),
            event: *event,
            hook: (*hook).to_owned(),
            reason: reason.clone(),
        },
        other => Entry::Failed { turn: turn.turn_ref(), error: other.to_string() },
    };
    turn.append(entry);
}

fn final_answer(
    event: EventKind,
    hook: &'static str,
    answer: AssistantMessage,
) -> Result<AssistantMessage, Error> {
    if answer.calls_tools() { Err(Error::FinalCallsTools { event, hook }) } else { Ok(answer) }
}

/// A RETRY being acted on: the next request shows the model its rejected message and the
/// feedback. Neither joins the log.
struct Retry {
    rejected: AssistantMessage,
    feedback: Feedback,
}

impl Retry {
    fn new(
        turn: &mut Turn,
        event: EventKind,
        hook: &'static str,
        rejected: AssistantMessage,
        feedback: Feedback,
    ) -> Result<Self, Error> {
        let limit = turn.config().max_retries;
        if turn.retries >= limit {
            return Err(Error::RetryLimit { event, hook, limit });
        }
        turn.retries += 1;
        Ok(Retry { rejected, feedback })
    }
}

/// How a chain of hooks that can only continue or end the turn ended it.
enum End {
    Halt { hook: &'static str, halt: Halt },
    Panicked { hook: &'static str, message: String },
}

trait IntoEnd {
    fn into_end(self) -> Option<End>;
}

macro_rules! into_end {
    ($($event:ident),*) => {$(
        impl IntoEnd for Flow<crate::event::$event> {
            fn into_end(self) -> Option<End> {
                match self {
                    Flow::Continue => None,
                    Flow::Halt { hook, halt } => Some(End::Halt { hook, halt }),
                    Flow::Panicked { hook, message } => Some(End::Panicked { hook, message }),
                }
            }
        }
    )*};
}

into_end!(AfterTool, ToolError);

/// The innermost `next` of the `wrap_model` chain: the model itself.
struct CallModel<'a, M, O, X> {
    model: &'a M,
    turn: &'a Turn,
    audit: Option<&'a dyn AuditSink>,
    observer: &'a O,
    transformer: &'a X,
    /// Whether a call of this step has streamed already.
    streamed: AtomicBool,
}

impl<M: Model, O: Observer, X: StreamTransformer> NextModel for CallModel<'_, M, O, X> {
    async fn call(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        if self.turn.aborted.get().is_some() {
            return Err(ModelError::Aborted);
        }
        if let Some(audit) = self.audit {
            audit.record(self.turn.turn_ref(), request);
        }
        let result = match caught(|| self.answer(request)).await {
            Ok(result) => result,
            Err(payload) => Err(ModelError::Other(format!(
                "the model panicked: {}",
                panic_message(payload.as_ref())
            ))),
        };
        self.turn.settle_model_call(None, result.is_ok());
        result
    }
}

impl<M: Model, O: Observer, X: StreamTransformer> CallModel<'_, M, O, X> {
    /// The model's answer, its text through the stream transformers: streamed piece by piece
    /// when the observer wants the pieces, whole otherwise — assembled the same way either way.
    async fn answer(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        if O::STREAMS {
            let mut answer = Assembly::new(self.transformer);
            // A wrap hook that calls the model again discards what the earlier call streamed.
            if self.streamed.swap(true, Ordering::Relaxed) {
                self.observer
                    .observe(&Observation::Withdrawn { event: EventKind::WrapModel, hook: None });
            }
            let mut chunks = std::pin::pin!(self.model.stream(request));
            while let Some(chunk) = chunks.next().await {
                answer.add(chunk?, self.observer);
            }
            return Ok(answer.finish(self.observer));
        }
        let response = self.model.complete(request).await?;
        if X::IDENTITY && Assembly::<X>::assembled(&response.message) {
            return Ok(response);
        }
        let mut answer = Assembly::new(self.transformer);
        for chunk in Chunk::of(response) {
            answer.add(chunk, &());
        }
        // Not streamed: the observer gets no pieces, the transformers' held-back tail included.
        Ok(answer.finish(&()))
    }
}

/// A model's answer, built from its chunks: the text (through the transformers) in one part,
/// then the tool calls in the order they came.
struct Assembly<'a, X: StreamTransformer> {
    transformer: &'a X,
    state: X::State,
    text: String,
    calls: Vec<ToolCall>,
    usage: Usage,
}

impl<'a, X: StreamTransformer> Assembly<'a, X> {
    fn new(transformer: &'a X) -> Self {
        Assembly {
            transformer,
            state: X::State::default(),
            text: String::new(),
            calls: Vec::new(),
            usage: Usage::default(),
        }
    }

    /// Whether `message` is already as assembling it would leave it: its text in one leading
    /// part, then its tool calls.
    fn assembled(message: &AssistantMessage) -> bool {
        let calls = match message.content.split_first() {
            Some((Part::Text(text), calls)) if !text.is_empty() => calls,
            _ => &message.content[..],
        };
        calls.iter().all(|part| matches!(part, Part::ToolCall(_)))
    }

    fn add(&mut self, chunk: Chunk, observer: &impl Observer) {
        match chunk {
            Chunk::Text(piece) => {
                let piece = self.transformer.transform(&mut self.state, piece);
                self.emit(piece, observer);
            }
            Chunk::ToolCall(call) => {
                observer.observe(&Observation::ToolCallStreamed { call: &call });
                self.calls.push(call);
            }
            Chunk::Usage(usage) => self.usage = usage,
        }
    }

    fn emit(&mut self, piece: String, observer: &impl Observer) {
        if !piece.is_empty() {
            observer.observe(&Observation::TextDelta { text: &piece });
            self.text.push_str(&piece);
        }
    }

    fn finish(mut self, observer: &impl Observer) -> ModelResponse {
        let rest = self.transformer.flush(&mut self.state);
        self.emit(rest, observer);
        let mut message = AssistantMessage::default();
        if !self.text.is_empty() {
            message.content.push(Part::Text(self.text));
        }
        message.content.extend(self.calls.into_iter().map(Part::ToolCall));
        ModelResponse { message, usage: self.usage }
    }
}

/// The innermost `next` of the `wrap_tool` chain: the tool set.
struct CallTool<'a, T> {
    tools: &'a T,
    names: &'a [String],
    turn: &'a Turn,
}

impl<T: ToolSet> NextTool for CallTool<'_, T> {
    async fn call(&self, call: &ToolCall) -> ToolResult {
        if self.turn.aborted.get().is_some() {
            return not_run(call);
        }
        match caught(|| self.tools.call(call, self.turn)).await {
            Ok(Some(result)) => result,
            Ok(None) => ToolResult::failure(
                call,
                ToolFailure::UnknownTool { available: self.names.to_vec() },
            ),
            Err(payload) => {
                let message = panic_message(payload.as_ref());
                ToolResult::failure(call, ToolFailure::Panicked { message })
            }
        }
    }
}

/// The turn in progress, owning the conversation it borrowed. However the turn ends — returned,
/// failed, or dropped midway — the conversation goes back to the caller with every committed
/// entry; a dropped turn also records that it was cancelled.
struct OpenTurn<'c> {
    home: &'c mut Conversation,
    turn: Turn,
    finished: bool,
}

impl<'c> OpenTurn<'c> {
    fn open(home: &'c mut Conversation, message: Message) -> Self {
        let turn = Turn::open(mem::take(home), message);
        OpenTurn { home, turn, finished: false }
    }

    /// Marks the turn ended, so dropping it records no cancellation. By reference: moving the
    /// turn out to consume it would copy all of it.
    fn finish(&mut self) {
        self.finished = true;
    }
}

impl Deref for OpenTurn<'_> {
    type Target = Turn;

    fn deref(&self) -> &Turn {
        &self.turn
    }
}

impl DerefMut for OpenTurn<'_> {
    fn deref_mut(&mut self) -> &mut Turn {
        &mut self.turn
    }
}

impl Drop for OpenTurn<'_> {
    fn drop(&mut self) {
        if !self.finished {
            let error = "the turn was cancelled before it ended".to_owned();
            self.turn.append(Entry::Failed { turn: self.turn.turn_ref(), error });
        }
        // The conversation goes home; the turn keeps the empty one `open` left there.
        self.turn.swap_conversation(self.home);
    }
}

/// An [`Agent`] with its type erased.
pub struct BoxedAgent {
    agent: Box<dyn DynAgent>,
}

impl BoxedAgent {
    /// Runs one turn; see [`Agent::run`].
    pub async fn run(
        &self,
        conversation: &mut Conversation,
        message: impl Into<Message>,
    ) -> Outcome {
        self.agent.run(conversation, message.into()).await
    }
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

impl<M, T, P, A, X> std::fmt::Debug for AgentBuilder<M, T, P, A, X> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentBuilder")
            .field("system", &self.settings.system)
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for BoxedAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BoxedAgent").finish_non_exhaustive()
    }
}

type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

trait DynAgent: Send + Sync {
    fn run<'a>(
        &'a self,
        conversation: &'a mut Conversation,
        message: Message,
    ) -> BoxFuture<'a, Outcome>;
}

impl<M: Model, T: ToolSet, P: Pipeline, A: Approver, X: StreamTransformer> DynAgent
    for Agent<M, T, P, A, X>
{
    fn run<'a>(
        &'a self,
        conversation: &'a mut Conversation,
        message: Message,
    ) -> BoxFuture<'a, Outcome> {
        Box::pin(Agent::run(self, conversation, message))
    }
}
