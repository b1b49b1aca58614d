//! Sessions, plans and tasks: the lifecycle above the turn (Turin's model).
//!
//! A [`Session`] owns one conversation and a queue of tasks. [`run`](Session::run) runs them in
//! order, each as one turn of its agent whose user message is the task's prompt; the turn takes
//! as many model calls as it needs, up to the task's `max_turns` (Turin calls each model call
//! a turn; agentix calls it a step). Tasks come one at a time
//! ([`enqueue`](Session::enqueue)) or in plans ([`submit_plan`](Session::submit_plan), or the
//! model's [`SubmitPlan`] tool), and every task ends exactly once, with a [`TaskStatus`].
//!
//! The session's events, in order: `session_start` → per task (`task_start` → the turn, whose
//! `turn_start` fires before each model call, ahead of `before_model` → `plan_submit` for each
//! plan the turn submitted → `task_complete` → `plan_complete` when it ended its plan's last
//! task) → `all_tasks_complete` when the queue is empty (ENQUEUE runs more) → `session_end`.
//!
//! How a task ends: a final answer is `success`; a `task_start` or `turn_start` REJECT, an
//! escalation the approver turned down, or a turn hook's HALT is `rejected`; running out of
//! `max_turns` is `max_turns`; any other failure of the turn is `error`, and the session goes on
//! to the next task. A session hook's HALT (or its error, panic or timeout: session hooks fail
//! closed) ends the session: the task running and every task still queued end `cancelled`, each
//! reported to `task_complete`, and `session_end` fires; `run` returns the hook's error.
//!
//! Cancellation: dropping [`run`](Session::run)'s future (or its stream) at any await point
//! leaves the log valid (a turn dropped midway records that it was cancelled) and every task
//! ended, queued, or running. The next `run` picks up there, before anything else: the task
//! that was running is reported `cancelled` to `task_complete`. Hooks are async, so nothing is
//! reported from `drop`. An event is done once all its hooks have returned: one whose hooks a
//! drop interrupted (`session_start`, `plan_submit`, `task_complete`, `plan_complete`,
//! `all_tasks_complete`, `session_end`) fires again at the next run, from its first hook — so a
//! hook sees each event exactly once when no run is dropped inside that event's hooks, and at
//! least once when one is.

pub(crate) mod hooks;
mod runner;
mod submit_plan;
mod task;

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::AtomicU32;
use std::task::Poll;

use futures::Stream;
use serde::{Deserialize, Serialize};

pub use hooks::{
    OnAllTasksComplete, OnPlanComplete, OnPlanSubmit, OnSessionEnd, OnSessionStart, OnTaskComplete,
    OnTaskStart, OnTurnStart, RegisterSession, SessionChain, SessionHook, Then,
};
pub use runner::{TaskContext, TaskRunner, TurnGate};
pub use submit_plan::{SubmitPlan, SubmitPlanError};
pub use task::{
    FollowUp, Plan, PlanId, PlanProgress, PlanReport, QueuedTask, SessionState, Task, TaskId,
    TaskReport, TaskStatus, TaskTag,
};

pub(crate) use submit_plan::PlanInbox;

use crate::conversation::{Conversation, TurnRef};
use crate::error::Error;
use crate::event::{Event, EventKind, Forbidden};
use crate::message::{AssistantMessage, Message};
use crate::observe::{Observation, Observer, Watched};
use crate::pipeline::Flow;
use crate::stream::{Queue, StreamEvent};

use runner::Gate;

/// What happened in a session, beside its turns: what a streamed or observed run reports.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum SessionEvent {
    /// The session started: `session_start` fires next.
    Started,
    /// A plan passed `plan_submit` and its tasks joined the queue.
    PlanAccepted {
        /// Its id.
        plan: PlanId,
        /// Its title.
        title: Option<String>,
        /// Its tasks, in the order they run.
        tasks: Vec<TaskId>,
    },
    /// A `plan_submit` hook rejected a plan; none of its tasks were queued.
    PlanRejected {
        /// The hook.
        hook: String,
        /// Why.
        reason: String,
    },
    /// A task starts: `task_start` fires next, then its turn.
    TaskStarted {
        /// The task.
        task: QueuedTask,
    },
    /// A task ended: `task_complete` fires next.
    TaskCompleted {
        /// How.
        report: TaskReport,
    },
    /// Every task of a plan ended: `plan_complete` fires next.
    PlanCompleted {
        /// The plan's counts.
        plan: PlanProgress,
    },
    /// An `all_tasks_complete` hook enqueued follow-up tasks.
    FollowUpEnqueued {
        /// The tasks, in the order they run.
        tasks: Vec<TaskId>,
    },
    /// The session ended: `session_end` fires next.
    Ended,
    /// A run ended: the tasks that ended in it, or why it stopped. A stream's last item.
    RunEnded {
        /// What [`Session::run`] returns.
        result: Result<Vec<TaskReport>, Error>,
    },
}

impl std::fmt::Display for SessionEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SessionEvent::Started => f.write_str("session started"),
            SessionEvent::PlanAccepted { plan, title, tasks } => {
                write!(f, "{plan} accepted")?;
                if let Some(title) = title {
                    write!(f, " ({title:?})")?;
                }
                write!(f, ": {} task(s)", tasks.len())
            }
            SessionEvent::PlanRejected { hook, reason } => {
                write!(f, "plan rejected by `{hook}`: {reason}")
            }
            SessionEvent::TaskStarted { task } => match &task.task.title {
                Some(title) => write!(f, "{} started ({title:?})", task.id()),
                None => write!(f, "{} started", task.id()),
            },
            SessionEvent::TaskCompleted { report } => {
                write!(f, "{} ended: {}", report.task.id(), report.status)
            }
            SessionEvent::PlanCompleted { plan } => {
                write!(f, "{} complete: {}/{} succeeded", plan.id, plan.succeeded, plan.total)
            }
            SessionEvent::FollowUpEnqueued { tasks } => {
                write!(f, "{} follow-up task(s) enqueued", tasks.len())
            }
            SessionEvent::Ended => f.write_str("session ended"),
            SessionEvent::RunEnded { result: Ok(reports) } => {
                write!(f, "run ended: {} task(s) ended", reports.len())
            }
            SessionEvent::RunEnded { result: Err(error) } => write!(f, "run stopped: {error}"),
        }
    }
}

/// A session: one conversation, an agent, a queue of tasks, and hooks on the session's events.
/// Built by [`Session::builder`].
///
/// ```
/// use agentix::session::{Session, TaskStatus};
/// use agentix::{Agent, ScriptedModel};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let agent = Agent::builder(ScriptedModel::new().text("Paris.").text("Rome.")).build();
/// let mut session = Session::builder(&agent).build();
/// session.enqueue("The capital of France?");
/// session.enqueue("The capital of Italy?");
/// let reports = session.run().await?;
/// assert!(reports.iter().all(|report| report.status == TaskStatus::Success));
/// assert_eq!(reports[1].answer.as_ref().unwrap().joined_text(), "Rome.");
/// # Ok::<_, agentix::Error>(())
/// # }).unwrap();
/// ```
pub struct Session<R, S = ()> {
    agent: R,
    hooks: S,
    conversation: Conversation,
    state: SessionState,
    inbox: Arc<PlanInbox>,
    max_follow_ups: u32,
}

/// Builds a [`Session`]: its hooks, its conversation, its limits.
pub struct SessionBuilder<R, S = ()> {
    agent: R,
    hooks: S,
    conversation: Conversation,
    max_follow_ups: u32,
}

impl<R: TaskRunner> Session<R> {
    /// A builder for a session running its tasks on `agent` (an [`Agent`](crate::Agent), a
    /// reference to one, or an `Arc`).
    pub fn builder(agent: R) -> SessionBuilder<R> {
        SessionBuilder { agent, hooks: (), conversation: Conversation::new(), max_follow_ups: 16 }
    }
}

impl<R, S> SessionBuilder<R, S> {
    /// Adds a hook on session events: a `#[hook(task_complete)]` function (or any other
    /// session event), a type implementing one trait of [`on`](crate::on) for a session
    /// event, or a [`SessionHook`]. Hooks of one event run in the order they were added; the
    /// first that does not continue decides.
    pub fn hook<H, Role>(self, hook: H) -> SessionBuilder<R, Then<S, H::Hook>>
    where
        H: RegisterSession<Role>,
    {
        SessionBuilder {
            agent: self.agent,
            hooks: Then { rest: self.hooks, hook: hook.session_hook() },
            conversation: self.conversation,
            max_follow_ups: self.max_follow_ups,
        }
    }

    /// The conversation the session's tasks run in; a new one by default.
    pub fn conversation(mut self, conversation: Conversation) -> Self {
        self.conversation = conversation;
        self
    }

    /// How many times `all_tasks_complete` hooks may enqueue follow-up work in the session
    /// (16 by default); one more ends the session with [`Error::FollowUpLimit`].
    pub fn max_follow_ups(mut self, limit: u32) -> Self {
        self.max_follow_ups = limit;
        self
    }

    /// The session.
    pub fn build(self) -> Session<R, S> {
        let inbox = Arc::new(PlanInbox::default());
        let mut conversation = self.conversation;
        conversation.scope_mut().insert_resource(Arc::clone(&inbox));
        Session {
            agent: self.agent,
            hooks: self.hooks,
            conversation,
            state: SessionState::default(),
            inbox,
            max_follow_ups: self.max_follow_ups,
        }
    }
}

impl<R: TaskRunner, S: SessionChain> Session<R, S> {
    /// Queues a task on its own (no plan); it runs after the tasks queued before it.
    pub fn enqueue(&mut self, task: impl Into<Task>) -> TaskId {
        self.state.queue_task(None, task.into())
    }

    /// Submits a plan, as the model's `submit_plan` tool does: the next [`run`](Session::run)
    /// reviews it with the `plan_submit` hooks, then queues its tasks.
    pub fn submit_plan(&mut self, plan: Plan) {
        self.inbox.submit(plan);
    }

    /// The session's queue, plans and ended tasks.
    pub fn state(&self) -> &SessionState {
        &self.state
    }

    /// The conversation, every task's turn in it.
    pub fn conversation(&self) -> &Conversation {
        &self.conversation
    }

    /// The conversation, for a new session or a plain turn.
    pub fn into_conversation(self) -> Conversation {
        self.conversation
    }

    /// Runs the queued tasks in order until the queue is empty and `all_tasks_complete` adds
    /// nothing, then ends the session (`session_end`). Returns the tasks that ended in this
    /// run, or the error of the session hook that ended it. A session that ended runs no more:
    /// [`Error::SessionEnded`].
    pub fn run(&mut self) -> impl Future<Output = Result<Vec<TaskReport>, Error>> + Send + '_ {
        self.observed(&())
    }

    /// [`run`](Session::run), reporting the session's events ([`Observation::Session`]) and
    /// every turn's events to `observer`.
    pub fn run_observed<'a, O: Observer>(
        &'a mut self,
        observer: &'a O,
    ) -> impl Future<Output = Result<Vec<TaskReport>, Error>> + Send + 'a {
        self.observed(observer)
    }

    /// [`run`](Session::run), streamed: the session's events ([`StreamEvent::Session`]) and
    /// each task's turn's stream events, in order, ending with
    /// [`SessionEvent::RunEnded`]. Dropping the stream midway is dropping `run`.
    pub fn run_stream(&mut self) -> impl Stream<Item = StreamEvent> + Send + '_ {
        async_stream::stream! {
            let queue = Queue::default();
            let mut run = std::pin::pin!(self.observed(&queue));
            loop {
                let finished = std::future::poll_fn(|cx| match run.as_mut().poll(cx) {
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

    async fn observed<O: Observer>(&mut self, observer: &O) -> Result<Vec<TaskReport>, Error> {
        let watched = Watched::new(observer);
        let result = self.run_tasks(&watched).await;
        if O::STREAMS || !O::SILENT {
            let result = result.clone();
            watched.observe(&Observation::Session(&SessionEvent::RunEnded { result }));
        }
        result
    }

    async fn run_tasks<O: Observer>(&mut self, observer: &O) -> Result<Vec<TaskReport>, Error> {
        if self.state.ended {
            return Err(Error::SessionEnded);
        }
        let first = self.state.completed.len();
        if !self.state.ending {
            self.run_queue(observer).await;
            self.state.ending = true;
        }
        emit(observer, || SessionEvent::Ended);
        let end = settle(self.hooks.session_end(&self.state, observer).await);
        self.state.ended = true;
        match (&self.state.stopped, end) {
            (Some(error), _) => Err(error.clone()),
            (None, Err(error)) => Err(error),
            (None, Ok(())) => Ok(self.state.completed[first..].to_vec()),
        }
    }

    /// Everything before `session_end`: `session_start`, what a dropped run left, the queue
    /// until it is empty and `all_tasks_complete` adds nothing, or until a session hook stops
    /// the session, whose tasks left then end `cancelled`.
    async fn run_queue<O: Observer>(&mut self, observer: &O) {
        if !self.state.started {
            emit(observer, || SessionEvent::Started);
            let started = settle(self.hooks.session_start(&self.state, observer).await);
            self.state.started = true;
            self.stop_on(started);
        }
        // What a dropped run left midway ends first: a task's end its hooks had not all seen,
        // then the task that was running, cancelled.
        let delivered = self.deliver(observer).await;
        self.stop_on(delivered);
        if self.state.stopped.is_none() {
            let reviewed = self.review_plans(observer).await;
            self.stop_on(reviewed);
        }
        if let Some(running) = self.state.running.take() {
            let reason = "the session's run was dropped while the task ran".to_owned();
            let completed =
                self.complete(running.task, Ended::cancelled(reason, running.turn), observer).await;
            self.stop_on(completed);
        }
        while self.state.stopped.is_none() {
            let Some(task) = self.state.queue.pop_front() else {
                match self.follow_up(observer).await {
                    Ok(true) => continue,
                    Ok(false) => break,
                    Err(error) => {
                        self.stop_on(Err(error));
                        break;
                    }
                }
            };
            let ran = self.run_task(task, observer).await;
            self.stop_on(ran);
        }
        if let Some(error) = &self.state.stopped {
            let reason = format!("the session ended before the task ran: {error}");
            while let Some(task) = self.state.queue.pop_front() {
                // The session has its cause; a hook's halt as it winds down is not another.
                let _ = self.complete(task, Ended::cancelled(reason.clone(), None), observer).await;
            }
        }
    }

    /// Records the first error that stops the session.
    fn stop_on(&mut self, result: Result<(), Error>) {
        if let Err(error) = result
            && self.state.stopped.is_none()
        {
            self.state.stopped = Some(error);
        }
    }

    /// One task: `task_start`, its turn, the plans it submitted, `task_complete`. An error is
    /// a session hook's: it ends the session.
    async fn run_task<O: Observer>(
        &mut self,
        mut task: QueuedTask,
        observer: &O,
    ) -> Result<(), Error> {
        self.state.running = Some(Running { task: task.clone(), turn: None });
        emit(observer, || SessionEvent::TaskStarted { task: task.clone() });
        match self.hooks.task_start(&mut task, &self.state, observer).await {
            Flow::Continue => {}
            Flow::Reject { hook, rejection } => {
                let error =
                    Error::Rejected { event: EventKind::TaskStart, hook, reason: rejection.reason };
                let ended = Ended { status: TaskStatus::Rejected, ..Ended::failed(&error, None) };
                return self.complete(task, ended, observer).await;
            }
            Flow::Halt { hook, halt } => {
                let error = crate::agent::halted(EventKind::TaskStart, hook, halt);
                let _ =
                    self.complete(task, Ended::cancelled(error.to_string(), None), observer).await;
                return Err(error);
            }
            Flow::Failed { hook, failure } => {
                let error = failure.error(EventKind::TaskStart, hook);
                let _ =
                    self.complete(task, Ended::cancelled(error.to_string(), None), observer).await;
                return Err(error);
            }
        }
        let turn = TurnRef(self.conversation.turns() + 1);
        self.state.running = Some(Running { task: task.clone(), turn: Some(turn) });
        if self.conversation.scope().resource::<Arc<PlanInbox>>().is_none() {
            // The conversation's scope was replaced since: the tool looks for the inbox there.
            self.conversation.scope_mut().insert_resource(Arc::clone(&self.inbox));
        }
        let gate = Gate { hooks: &self.hooks, state: &self.state, steps: AtomicU32::new(0) };
        let context = TaskContext {
            tag: task.tag(),
            turns_before: self.state.turns,
            max_turns: task.task.max_turns,
        };
        let message = Message::user(task.task.prompt.clone());
        let outcome =
            self.agent.run_task(&mut self.conversation, message, observer, &gate, context).await;
        let steps = gate.steps.into_inner();
        self.state.turns += u64::from(steps);
        let (mut ended, session_error) = match outcome {
            Ok(answer) => (Ended::succeeded(answer, turn), None),
            Err(error) if ends_the_session(&error) => {
                (Ended::cancelled(error.to_string(), Some(turn)), Some(error))
            }
            Err(error) => (Ended::failed(&error, Some(turn)), None),
        };
        ended.turns = steps;
        let reviewed = self.review_plans(observer).await;
        let completed = self.complete(task, ended, observer).await;
        session_error.map_or(Ok(()), Err).and(reviewed).and(completed)
    }

    /// Reviews the plans waiting with `plan_submit`, and queues those it accepts.
    async fn review_plans<O: Observer>(&mut self, observer: &O) -> Result<(), Error> {
        while let Some(mut plan) = self.inbox.first() {
            let flow = self.hooks.plan_submit(&mut plan, &self.state, observer).await;
            self.inbox.reviewed();
            match flow {
                Flow::Continue => self.accept(plan, observer).await?,
                Flow::Reject { hook, rejection } => {
                    emit(observer, || SessionEvent::PlanRejected {
                        hook: hook.to_owned(),
                        reason: rejection.reason.clone(),
                    });
                }
                Flow::Halt { hook, halt } => {
                    return Err(crate::agent::halted(EventKind::PlanSubmit, hook, halt));
                }
                Flow::Failed { hook, failure } => {
                    return Err(failure.error(EventKind::PlanSubmit, hook));
                }
            }
        }
        Ok(())
    }

    /// Queues an accepted plan's tasks; with `clear_existing`, the tasks queued before end
    /// `cancelled` first.
    async fn accept<O: Observer>(&mut self, plan: Plan, observer: &O) -> Result<(), Error> {
        let mut result = Ok(());
        let plan_id = PlanId::new(self.state.next_plan + 1).expect("ids are counted from 1");
        if plan.clear_existing {
            while let Some(task) = self.state.queue.pop_front() {
                let reason = format!("{plan_id} replaced the tasks queued before it");
                let completed = self.complete(task, Ended::cancelled(reason, None), observer).await;
                result = result.and(completed);
            }
        }
        self.state.next_plan += 1;
        let Plan { title, tasks, .. } = plan;
        let total = u32::try_from(tasks.len()).unwrap_or(u32::MAX);
        let progress = PlanProgress { id: plan_id, title, total, completed: 0, succeeded: 0 };
        self.state.plans.insert(plan_id, progress);
        let ids: Vec<TaskId> =
            tasks.into_iter().map(|task| self.state.queue_task(Some(plan_id), task)).collect();
        emit(observer, || SessionEvent::PlanAccepted {
            plan: plan_id,
            title: self.state.plans[&plan_id].title.clone(),
            tasks: ids.clone(),
        });
        if ids.is_empty() {
            // A plan its hooks emptied has nothing left to wait for.
            self.state.delivering = Some(Delivery { report: None, plan: Some(plan_id) });
            result = result.and(self.deliver(observer).await);
        }
        result
    }

    /// Ends a task: its report, its plan's counts, `task_complete`, and `plan_complete` if it
    /// was its plan's last. Both fire whatever the first returns.
    async fn complete<O: Observer>(
        &mut self,
        task: QueuedTask,
        ended: Ended,
        observer: &O,
    ) -> Result<(), Error> {
        self.state.running = None;
        let plan = task.plan();
        let success = ended.status == TaskStatus::Success;
        let Ended { status, answer, reason, turn, turns } = ended;
        self.state.completed.push(TaskReport { task, status, answer, reason, turn, turns });
        let mut plan_done = None;
        if let Some(progress) = plan.and_then(|id| self.state.plans.get_mut(&id)) {
            progress.completed += 1;
            progress.succeeded += u32::from(success);
            plan_done = progress.is_complete().then_some(progress.id);
        }
        let report = Some(self.state.completed.len() - 1);
        self.state.delivering = Some(Delivery { report, plan: plan_done });
        self.deliver(observer).await
    }

    /// Fires `task_complete` and `plan_complete` for the end being delivered. Each is marked
    /// delivered once its hooks have all run: a run dropped in the middle of them leaves it to
    /// the next run, which fires it again from its first hook.
    async fn deliver<O: Observer>(&mut self, observer: &O) -> Result<(), Error> {
        let Some(Delivery { report, plan }) = self.state.delivering else {
            return Ok(());
        };
        let mut result = Ok(());
        if let Some(index) = report {
            let report = &self.state.completed[index];
            emit(observer, || SessionEvent::TaskCompleted { report: report.clone() });
            result = settle(self.hooks.task_complete(report, &self.state, observer).await);
            self.state.delivering = Some(Delivery { report: None, plan });
        }
        if let Some(plan) = plan {
            let progress = &self.state.plans[&plan];
            emit(observer, || SessionEvent::PlanCompleted { plan: progress.clone() });
            let completed = settle(self.hooks.plan_complete(progress, &self.state, observer).await);
            result = result.and(completed);
        }
        self.state.delivering = None;
        result
    }

    /// `all_tasks_complete`: whether it enqueued follow-up work.
    async fn follow_up<O: Observer>(&mut self, observer: &O) -> Result<bool, Error> {
        const EVENT: EventKind = EventKind::AllTasksComplete;
        match self.hooks.all_tasks_complete(&self.state, observer).await {
            Flow::Continue => Ok(false),
            Flow::Enqueue { hook, follow_up } => {
                if self.state.follow_ups >= self.max_follow_ups {
                    return Err(Error::FollowUpLimit { hook, limit: self.max_follow_ups });
                }
                self.state.follow_ups += 1;
                let ids: Vec<TaskId> = follow_up
                    .tasks
                    .into_iter()
                    .map(|task| self.state.queue_task(None, task))
                    .collect();
                let more = !ids.is_empty();
                emit(observer, || SessionEvent::FollowUpEnqueued { tasks: ids });
                Ok(more)
            }
            Flow::Halt { hook, halt } => Err(crate::agent::halted(EVENT, hook, halt)),
            Flow::Failed { hook, failure } => Err(failure.error(EVENT, hook)),
        }
    }
}

impl<R, S> std::fmt::Debug for Session<R, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session").field("state", &self.state).finish_non_exhaustive()
    }
}

/// The task running, and its turn once it has one.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Running {
    pub(crate) task: QueuedTask,
    pub(crate) turn: Option<TurnRef>,
}

/// A task's end being reported: its report (by index in the ended tasks) until `task_complete`
/// has run, and its plan if it completed one, until `plan_complete` has.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub(crate) struct Delivery {
    report: Option<usize>,
    plan: Option<PlanId>,
}

/// How a task ended, before its report is made.
struct Ended {
    status: TaskStatus,
    answer: Option<AssistantMessage>,
    reason: Option<String>,
    turn: Option<TurnRef>,
    turns: u32,
}

impl Ended {
    fn succeeded(answer: AssistantMessage, turn: TurnRef) -> Self {
        Ended {
            status: TaskStatus::Success,
            answer: Some(answer),
            reason: None,
            turn: Some(turn),
            turns: 0,
        }
    }

    fn cancelled(reason: String, turn: Option<TurnRef>) -> Self {
        Ended { status: TaskStatus::Cancelled, answer: None, reason: Some(reason), turn, turns: 0 }
    }

    /// A turn's failure: `rejected` for a hook's refusal, `max_turns` for the step limit,
    /// `error` otherwise.
    fn failed(error: &Error, turn: Option<TurnRef>) -> Self {
        let status = match error {
            Error::Rejected { .. } | Error::Halted { .. } => TaskStatus::Rejected,
            Error::StepLimit { .. } => TaskStatus::MaxTurns,
            _ => TaskStatus::Error,
        };
        Ended { status, answer: None, reason: Some(error.to_string()), turn, turns: 0 }
    }
}

/// Whether a turn's error is a session hook's halt or failure (at `turn_start`): it ends the
/// session, not only the task.
fn ends_the_session(error: &Error) -> bool {
    match error {
        Error::Halted { event, .. }
        | Error::HookFailed { event, .. }
        | Error::HookPanicked { event, .. }
        | Error::HookTimedOut { event, .. } => event.is_session(),
        _ => false,
    }
}

/// A session event's flow whose contract has only HALT: `Ok` to go on, or the error that ends
/// the session.
fn settle<E>(flow: Flow<E>) -> Result<(), Error>
where
    E: Event<Stop = Forbidden, Retry = Forbidden, Reject = Forbidden, Escalate = Forbidden>,
    E: Event<Enqueue = Forbidden>,
{
    match flow {
        Flow::Continue => Ok(()),
        Flow::Halt { hook, halt } => Err(crate::agent::halted(E::KIND, hook, halt)),
        Flow::Failed { hook, failure } => Err(failure.error(E::KIND, hook)),
        Flow::Stop { value, .. } => match value {},
        Flow::Retry { feedback, .. } => match feedback {},
        Flow::Reject { rejection, .. } => match rejection {},
        Flow::Escalate { escalation, .. } => match escalation {},
        Flow::Enqueue { follow_up, .. } => match follow_up {},
    }
}

/// Reports a session event to the observer; a silent observer costs nothing, not even the
/// event's making.
#[inline]
fn emit<O: Observer>(observer: &O, event: impl FnOnce() -> SessionEvent) {
    if !O::SILENT {
        observer.observe(&Observation::Session(&event()));
    }
}
