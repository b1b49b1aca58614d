//! Sessions, plans and tasks: the lifecycle above the turn.
//!
//! A [`Session`] owns one conversation and a queue of tasks. [`run`](Session::run) runs them in
//! order, each as one turn of its agent whose user message is the task's prompt; the turn takes
//! as many steps (a model call and its tool calls) as it needs, up to the task's `max_steps`:
//! `step_start` fires before each, and `Turn::step_index` counts them (`#[hook(turn_start)]` and
//! a task's `max_turns`, older words for a step, are read as these). Tasks come one at a time
//! ([`enqueue`](Session::enqueue)) or in plans ([`submit_plan`](Session::submit_plan), or the
//! model's [`SubmitPlan`] tool), and every task ends exactly once, with a [`TaskStatus`].
//!
//! The session's events, in order: `session_start` → per task (`task_start` → the turn, whose
//! `step_start` fires before each step, ahead of its `before_model` → `plan_submit` for each
//! plan the turn submitted → `task_complete` → `plan_complete` when it ended its plan's last
//! task) → `all_tasks_complete` when the queue is empty (ENQUEUE runs more) → `session_end`.
//!
//! How a task ends: a final answer is `success`; a `task_start` or `step_start` REJECT, an
//! escalation the approver turned down, or a turn hook's HALT is `rejected`; running out of
//! `max_steps` is `max_turns`; any other failure of the turn is `error`, and the session goes on
//! to the next task. A session hook's HALT (or its error, panic or timeout: session hooks fail
//! closed) ends the session: the task running and every task still queued end `cancelled`, each
//! reported to `task_complete`, and `session_end` fires; `run` returns the hook's error.
//!
//! Cancellation: dropping [`run`](Session::run)'s future (or its stream) at any await point
//! leaves the log valid (a turn dropped midway records that it was cancelled) and every task
//! ended, queued, or running; what changes the queue and the plans' counts never awaits midway.
//! The next `run` goes on from where the dropped one stopped, in the order it would have gone:
//! the ends whose hooks had not all run, then the plans the running task's turn submitted, then
//! that task's end — as its turn ended, or `cancelled` if the drop cut the turn short. Hooks are
//! async, so nothing is reported from `drop`. An event is done once all its hooks have returned: one whose hooks a
//! drop interrupted (`session_start`, `plan_submit`, `task_complete`, `plan_complete`,
//! `all_tasks_complete`, `session_end`) fires again at the next run, from its first hook — so a
//! hook sees each event exactly once when no run is dropped inside that event's hooks, and at
//! least once when one is.

mod builder;
mod chain;
pub(crate) mod hooks;
mod run;
mod runner;
mod submit_plan;

use std::sync::Arc;

pub(crate) use crate::task::{Delivery, Ended, Running, TaskContext};
pub use crate::task::{
    FollowUp, Plan, PlanId, PlanProgress, PlanReport, QueuedTask, SessionEvent, SessionState, Task,
    TaskId, TaskReport, TaskStatus, TaskTag,
};
pub use builder::SessionBuilder;
pub use chain::{RegisterSession, SessionChain, Then};
pub use hooks::{
    OnAllTasksComplete, OnPlanComplete, OnPlanSubmit, OnSessionEnd, OnSessionStart, OnStepStart,
    OnTaskComplete, OnTaskStart, SessionHook,
};
pub use run::SessionRun;
pub use submit_plan::{ProposedPlan, ProposedTask, SubmitPlan, SubmitPlanError};

pub(crate) use submit_plan::PlanInbox;

use crate::agent::AnyAgent;
use crate::agent::effects::Effects;
use crate::conversation::{Conversation, TurnRef};
use crate::error::Component;
use crate::error::Error;
use crate::event::{Event, EventKind, Forbidden};
use crate::message::{AssistantMessage, Message};
use crate::observe::{Forwarded, Observation, Observer, Watched};
use crate::pipeline::Flow;
use crate::support::caught;
use crate::trace::{self, Within};
use run::StartsSession;

use runner::Gate;

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
/// session.enqueue("The capital of France?")?;
/// session.enqueue("The capital of Italy?")?;
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
    /// The session's name, for traces (`gen_ai.workflow.name`).
    name: Option<Arc<str>>,
    /// The span of the run in progress (`invoke_workflow`), when it is traced.
    span: Option<tracing::Span>,
    /// The spans of the accepted plans not yet complete, which their tasks' turns run under.
    plan_spans: std::collections::BTreeMap<PlanId, tracing::Span>,
}

impl<R: AnyAgent, S: SessionChain> Session<R, S> {
    /// Queues a task on its own (no plan); it runs after the tasks queued before it. A
    /// session that has ended (or is ending: a run dropped during `session_end`) takes no more
    /// work: [`Error::SessionEnded`], and the task is not queued.
    pub fn enqueue(&mut self, task: impl Into<Task>) -> Result<TaskId, Error> {
        self.still_open()?;
        Ok(self.state.queue_task(None, task.into()))
    }

    /// Submits a plan, as the model's `submit_plan` tool does: the next [`run`](Session::run)
    /// reviews it with the `plan_submit` hooks when it starts, then queues its tasks. A session
    /// that has ended takes none: [`Error::SessionEnded`].
    pub fn submit_plan(&mut self, plan: Plan) -> Result<(), Error> {
        self.still_open()?;
        self.inbox.submit(plan);
        Ok(())
    }

    /// Whether the session takes more work: not once it stopped or ended.
    fn still_open(&self) -> Result<(), Error> {
        if self.state.ending || self.state.stopped.is_some() {
            Err(Error::SessionEnded)
        } else {
            Ok(())
        }
    }

    /// The session's queue, plans and ended tasks.
    pub fn state(&self) -> &SessionState {
        &self.state
    }

    /// The conversation, every task's turn in it.
    pub fn conversation(&self) -> &Conversation {
        &self.conversation
    }

    /// The conversation, for a new session or a plain turn. Plans the session had not reviewed
    /// go with it; the `submit_plan` tool's calls in a later plain turn fail, saying there is no
    /// session.
    pub fn into_conversation(mut self) -> Conversation {
        self.conversation.scope_mut().remove_resource::<Arc<PlanInbox>>();
        self.conversation
    }

    /// Runs the queued tasks in order until the queue is empty and `all_tasks_complete` adds
    /// nothing, then ends the session (`session_end`): `.await` it for the tasks that ended in
    /// this run, or the error of the session hook that ended it — or first
    /// [`stream`](SessionRun::stream), [`observe`](SessionRun::observe) or
    /// [`commit`](SessionRun::commit) it. A session that ended runs no more:
    /// [`Error::SessionEnded`].
    pub fn run(&mut self) -> SessionRun<'_, R, S, (), (), impl StartsSession<'_, R, S, (), ()>> {
        run::start(self)
    }

    pub(super) async fn observed<O: Observer, E: Effects>(
        &mut self,
        observer: &O,
        effects: E,
    ) -> Result<Vec<TaskReport>, Error> {
        // A run dropped midway ends its span `cancelled` (its `RunSpan`'s drop).
        let run = trace::workflow_span(self.name.as_deref(), self.conversation.id());
        let run = run.map(trace::RunSpan::new);
        let span = run.as_ref().map(trace::RunSpan::span);
        self.span = span.cloned();
        // The plans a dropped run left open go on under this run's span.
        self.plan_spans.clear();
        if let Some(parent) = span {
            for plan in self.state.plans.values().filter(|plan| !plan.is_complete()) {
                let plan_span =
                    trace::plan_span(parent, plan.id, plan.title.as_deref(), plan.total);
                self.plan_spans.insert(plan.id, plan_span);
            }
        }
        let watched = Watched::new(observer, span);
        let result = Within::new(span, self.run_tasks(&watched, &effects)).await;
        if let Some(run) = &run {
            trace::workflow_ended(run, &result);
        }
        // A stopped session's plans end with its run.
        self.span = None;
        self.plan_spans.clear();
        if O::STREAMS || !O::SILENT {
            let result = result.clone();
            watched.observe(&Observation::Session(&SessionEvent::RunEnded { result }));
        }
        result
    }

    async fn run_tasks<O: Observer, E: Effects>(
        &mut self,
        observer: &Watched<'_, O>,
        effects: &E,
    ) -> Result<Vec<TaskReport>, Error> {
        if self.state.ended {
            // A run dropped (or failed) at committing the end commits it now.
            if !self.state.end_committed {
                self.commit_session(effects).await?;
                self.state.end_committed = true;
            }
            return Err(Error::SessionEnded);
        }
        if !self.state.ending {
            self.run_queue(observer, effects).await;
            self.state.ending = true;
        }
        emit(observer, &self.span, || SessionEvent::Ended);
        let end = settle(self.hooks.session_end(&self.state, observer).await);
        self.state.ended = true;
        let committed = self.commit_session(effects).await;
        self.state.end_committed = committed.is_ok();
        let end = end.and(committed);
        match (&self.state.stopped, end.and(observer.failed())) {
            (Some(error), _) => Err(error.clone()),
            (None, Err(error)) => Err(error),
            (None, Ok(())) => {
                // The tasks that ended since a run last returned: a dropped run returns none.
                let ended = self.state.completed[self.state.returned..].to_vec();
                self.state.returned = self.state.completed.len();
                Ok(ended)
            }
        }
    }

    /// Everything before `session_end`: `session_start`, what a dropped run left, the queue
    /// until it is empty and `all_tasks_complete` adds nothing, or until a session hook stops
    /// the session, whose tasks left then end `cancelled`.
    async fn run_queue<O: Observer, E: Effects>(&mut self, observer: &Watched<'_, O>, effects: &E) {
        if !self.state.started {
            emit(observer, &self.span, || SessionEvent::Started);
            let started = settle(self.hooks.session_start(&self.state, observer).await);
            self.state.started = true;
            self.stop_on(started);
        }
        // What a dropped run left midway goes on from where it stopped, in the order it would
        // have come: the ends whose hooks had not all run, then the task that was running (the
        // plans its turn submitted, then its end), or else the plans submitted since.
        self.deliver(observer).await;
        if self.state.running.is_some() {
            self.finish_running(observer).await;
        } else {
            self.review_plans(observer).await;
        }
        self.commit_and_stop_on(effects).await;
        // An observer that panicked ends the session, as it ends a turn: it hears nothing more.
        while self.state.stopped.is_none() && observer.failed().is_ok() {
            match self.state.queue.pop_front() {
                Some(task) => self.run_task(task, observer, effects).await,
                None if self.follow_up(observer).await => {}
                None => break,
            }
            self.commit_and_stop_on(effects).await;
        }
        self.stop_on(observer.failed());
        if let Some(error) = self.state.stopped.clone() {
            let reason = format!("the session ended before the task ran: {error}");
            while let Some(task) = self.state.queue.pop_front() {
                self.end_task(task, Ended::cancelled(reason.clone(), None));
            }
            // Plans the model submitted that no review will see.
            while let Some(plan) = self.inbox.first() {
                self.inbox.reviewed();
                let reason = format!("the session ended before the plan was reviewed: {error}");
                emit(observer, &self.span, || SessionEvent::PlanDropped {
                    title: plan.title.clone(),
                    reason,
                });
            }
            // The session has its cause: a hook's halt as it winds down is not another.
            self.deliver(observer).await;
            // The store sees the tasks cancelled before `session_end` runs.
            self.commit_and_stop_on(effects).await;
        }
    }

    /// Commits the session's state, if the run commits; a failed commit stops the session.
    async fn commit_and_stop_on<E: Effects>(&mut self, effects: &E) {
        let committed = self.commit_session(effects).await;
        self.stop_on(committed);
    }

    /// Commits the session's state, if the run commits.
    async fn commit_session<E: Effects>(&self, effects: &E) -> Result<(), Error> {
        if !E::COMMITS {
            return Ok(());
        }
        let committed = caught(|| effects.commit_session(&self.state)).await;
        match committed {
            Ok(result) => result.map_err(Error::Commit),
            Err(payload) => Err(Error::ComponentPanicked {
                component: Component::Committer,
                message: crate::support::panic_message(payload.as_ref()),
            }),
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

    /// One task: `task_start`, its turn, the plans it submitted, `task_complete`. A session
    /// hook's halt or failure stops the session.
    async fn run_task<O: Observer, E: Effects>(
        &mut self,
        mut task: QueuedTask,
        observer: &Watched<'_, O>,
        effects: &E,
    ) {
        let (id, plan) = (task.id(), task.plan());
        self.state.running = Some(Running::new(task.clone(), self.state.steps()));
        emit(observer, &self.span, || SessionEvent::TaskStarted { task: task.clone() });
        let flow = self.hooks.task_start(&mut task, &self.state, observer).await;
        // The work as its hooks left it is what runs, and what is reported; its identity is
        // the queue's, whatever a hook wrote over it.
        task = QueuedTask::new(id, plan, task.task);
        let running = self.state.running.as_mut().expect("the task is running");
        running.task = task.clone();
        let refused = match flow {
            Flow::Continue => None,
            Flow::Reject { hook, rejection } => {
                let error =
                    Error::Rejected { event: EventKind::TaskStart, hook, reason: rejection.reason };
                Some((Ended::failed(&error, None), None))
            }
            Flow::Halt { hook, halt } => {
                let error = crate::error::halted(EventKind::TaskStart, hook, halt);
                Some((Ended::cancelled(error.to_string(), None), Some(error)))
            }
            Flow::Failed { hook, failure } => {
                let error = failure.error(EventKind::TaskStart, hook);
                Some((Ended::cancelled(error.to_string(), None), Some(error)))
            }
        };
        if let Some((ended, stop)) = refused {
            running.ended = Some(ended);
            self.stop_on(stop.map_or(Ok(()), Err));
            return self.finish_running(observer).await;
        }
        // The store sees the task running before its turn starts. A conversation waiting for
        // an approval (a turn run on it outside the session suspended) opens no turn: the
        // session stops, rather than fail each task in turn.
        let waiting = self.conversation.pending_approval();
        let waiting = waiting.map(|(turn, pending)| Error::AwaitingApproval {
            turn,
            pending: Box::new(pending.clone()),
        });
        let ready = waiting.map_or(Ok(()), Err);
        if let Err(error) = ready.and(self.commit_session(effects).await) {
            let running = self.state.running.as_mut().expect("the task is running");
            running.ended = Some(Ended::cancelled(error.to_string(), None));
            self.stop_on(Err(error));
            return self.finish_running(observer).await;
        }
        let running = self.state.running.as_mut().expect("the task is running");
        let turn = TurnRef(self.conversation.turns() + 1);
        running.turn = Some(turn);
        if self.conversation.scope().resource::<Arc<PlanInbox>>().is_none() {
            // The conversation's scope was replaced since: the tool looks for the inbox there.
            self.conversation.scope_mut().insert_resource(Arc::clone(&self.inbox));
        }
        let gate = Gate { hooks: &self.hooks, state: &self.state };
        let context = TaskContext {
            tag: task.tag(),
            steps_before: self.state.steps(),
            max_steps: task.task.max_steps,
        };
        let message = Message::user(task.task.prompt);
        let conversation = &mut self.conversation;
        // A plan's task runs under the plan's span; another under the run's.
        let within = plan.and_then(|plan| self.plan_spans.get(&plan));
        // The turn's own observer traces what happens in it: the run's only passes it on.
        let forwarded = Forwarded(observer);
        let run = self.agent.run_task(conversation, message, &forwarded, &gate, context, effects);
        let outcome = Within::new(within, run).await;
        let (ended, stop) = match outcome {
            Ok(answer) => (Ended::succeeded(answer, turn), None),
            Err(error) if ends_the_session(&error) => {
                (Ended::cancelled(error.to_string(), Some(turn)), Some(error))
            }
            Err(error) => (Ended::failed(&error, Some(turn)), None),
        };
        // Kept with the running task, so a run dropped from here on reports it as it ended.
        self.state.running.as_mut().expect("the task is running").ended = Some(ended);
        self.stop_on(stop.map_or(Ok(()), Err));
        self.finish_running(observer).await;
    }

    /// Ends the running task: the plans its turn submitted are reviewed first, then its end is
    /// reported — as its turn ended, or `cancelled` if a dropped run cut it short.
    async fn finish_running<O: Observer>(&mut self, observer: &O) {
        self.review_plans(observer).await;
        let Some(running) = self.state.running.take() else {
            return;
        };
        let mut ended = running.ended.unwrap_or_else(|| {
            let reason = "the session's run was dropped while the task ran".to_owned();
            Ended::cancelled(reason, running.turn)
        });
        ended.steps = u32::try_from(self.state.steps() - running.steps_before).unwrap_or(u32::MAX);
        self.end_task(running.task, ended);
        self.deliver(observer).await;
    }

    /// Reviews the plans waiting with `plan_submit`, and queues those it accepts. A stopped
    /// session reviews none.
    async fn review_plans<O: Observer>(&mut self, observer: &O) {
        while self.state.stopped.is_none()
            && let Some(mut plan) = self.inbox.first()
        {
            let flow = self.hooks.plan_submit(&mut plan, &self.state, observer).await;
            // Reviewed: from here to its tasks' queueing nothing awaits.
            self.inbox.reviewed();
            match flow {
                Flow::Continue => {
                    self.accept(plan, observer);
                    self.deliver(observer).await;
                }
                Flow::Reject { hook, rejection } => {
                    emit(observer, &self.span, || SessionEvent::PlanRejected {
                        title: plan.title.clone(),
                        hook: hook.to_owned(),
                        reason: rejection.reason.clone(),
                    });
                }
                Flow::Halt { hook, halt } => {
                    self.stop_on(Err(crate::error::halted(EventKind::PlanSubmit, hook, halt)));
                }
                Flow::Failed { hook, failure } => {
                    self.stop_on(Err(failure.error(EventKind::PlanSubmit, hook)));
                }
            }
        }
    }

    /// Queues an accepted plan's tasks; with `clear_existing`, the tasks queued before end
    /// `cancelled` first. Their ends are delivered after.
    fn accept<O: Observer>(&mut self, plan: Plan, observer: &O) {
        // Plans are numbered as they are accepted, and every accepted plan is kept.
        let plan_id = PlanId::new(self.state.plans.len() as u64 + 1).expect("ids count from 1");
        if plan.clear_existing {
            let reason = format!("{plan_id} replaced the tasks queued before it");
            while let Some(task) = self.state.queue.pop_front() {
                self.end_task(task, Ended::cancelled(reason.clone(), None));
            }
        }
        let Plan { title, tasks, .. } = plan;
        let total = u32::try_from(tasks.len()).unwrap_or(u32::MAX);
        if let Some(run) = &self.span {
            let span = trace::plan_span(run, plan_id, title.as_deref(), total);
            self.plan_spans.insert(plan_id, span);
        }
        let progress = PlanProgress { id: plan_id, title, total, completed: 0, succeeded: 0 };
        self.state.plans.insert(plan_id, progress);
        let ids: Vec<TaskId> =
            tasks.into_iter().map(|task| self.state.queue_task(Some(plan_id), task)).collect();
        emit(observer, &self.span, || SessionEvent::PlanAccepted {
            plan: plan_id,
            title: self.state.plans[&plan_id].title.clone(),
            tasks: ids.clone(),
        });
        if ids.is_empty() {
            // A plan its hooks emptied has nothing left to wait for.
            self.state.pending.push_back(Delivery { report: None, plan: Some(plan_id) });
        }
    }

    /// Ends a task: its report, its plan's counts, and its `task_complete` (and `plan_complete`
    /// if it was its plan's last) queued for [`deliver`](Self::deliver). Nothing awaits: the
    /// state is whole at every await point.
    fn end_task(&mut self, task: QueuedTask, ended: Ended) {
        let plan = task.plan();
        let success = ended.status == TaskStatus::Success;
        let Ended { status, answer, reason, turn, steps } = ended;
        self.state.completed.push(TaskReport { task, status, answer, reason, turn, steps });
        let mut plan_done = None;
        if let Some(progress) = plan.and_then(|id| self.state.plans.get_mut(&id)) {
            progress.completed += 1;
            progress.succeeded += u32::from(success);
            plan_done = progress.is_complete().then_some(progress.id);
        }
        let report = Some(self.state.completed.len() - 1);
        self.state.pending.push_back(Delivery { report, plan: plan_done });
    }

    /// Fires `task_complete` and `plan_complete` for each end waiting, in order. Each is marked
    /// delivered once its hooks have all run: a run dropped in the middle of them leaves it to
    /// the next run, which fires it again from its first hook (and reports it to the observer
    /// again). A hook's halt or failure stops
    /// the session; the ends after it are delivered all the same.
    async fn deliver<O: Observer>(&mut self, observer: &O) {
        while let Some(&Delivery { report, plan }) = self.state.pending.front() {
            if let Some(index) = report {
                let report = &self.state.completed[index];
                emit(observer, &self.span, || SessionEvent::TaskCompleted {
                    report: report.clone(),
                });
                let result = settle(self.hooks.task_complete(report, &self.state, observer).await);
                self.stop_on(result);
                self.state.pending[0].report = None;
            }
            if let Some(plan) = plan {
                let progress = &self.state.plans[&plan];
                if let Some(span) = self.plan_spans.remove(&plan) {
                    trace::plan_ended(&span, progress);
                }
                emit(observer, &self.span, || SessionEvent::PlanCompleted {
                    plan: progress.clone(),
                });
                let result =
                    settle(self.hooks.plan_complete(progress, &self.state, observer).await);
                self.stop_on(result);
            }
            self.state.pending.pop_front();
        }
    }

    /// `all_tasks_complete`: whether it enqueued follow-up work.
    async fn follow_up<O: Observer>(&mut self, observer: &O) -> bool {
        const EVENT: EventKind = EventKind::AllTasksComplete;
        let error = match self.hooks.all_tasks_complete(&self.state, observer).await {
            Flow::Continue => return false,
            Flow::Enqueue { hook, follow_up } => {
                if self.state.follow_ups >= self.max_follow_ups {
                    Error::FollowUpLimit { hook, limit: self.max_follow_ups }
                } else {
                    self.state.follow_ups += 1;
                    let ids: Vec<TaskId> = follow_up
                        .tasks
                        .into_iter()
                        .map(|task| self.state.queue_task(None, task))
                        .collect();
                    let more = !ids.is_empty();
                    emit(observer, &self.span, || SessionEvent::FollowUpEnqueued { tasks: ids });
                    return more;
                }
            }
            Flow::Halt { hook, halt } => crate::error::halted(EVENT, hook, halt),
            Flow::Failed { hook, failure } => failure.error(EVENT, hook),
        };
        self.stop_on(Err(error));
        false
    }
}

impl<R, S> std::fmt::Debug for Session<R, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session").field("state", &self.state).finish_non_exhaustive()
    }
}

impl Running {
    fn new(task: QueuedTask, steps_before: u64) -> Self {
        Running { task, turn: None, steps_before, ended: None }
    }
}

impl Ended {
    fn succeeded(answer: AssistantMessage, turn: TurnRef) -> Self {
        Ended {
            status: TaskStatus::Success,
            answer: Some(answer),
            reason: None,
            turn: Some(turn),
            steps: 0,
        }
    }

    fn cancelled(reason: String, turn: Option<TurnRef>) -> Self {
        Ended { status: TaskStatus::Cancelled, answer: None, reason: Some(reason), turn, steps: 0 }
    }

    /// A turn's failure: `rejected` for a hook's refusal, `max_steps` for the step limit,
    /// `error` otherwise.
    fn failed(error: &Error, turn: Option<TurnRef>) -> Self {
        let status = match error {
            Error::Rejected { .. } | Error::Halted { .. } | Error::Tripped { .. } => {
                TaskStatus::Rejected
            }
            Error::StepLimit { .. } => TaskStatus::MaxSteps,
            _ => TaskStatus::Error,
        };
        Ended { status, answer: None, reason: Some(error.to_string()), turn, steps: 0 }
    }
}

/// Whether a turn's error is a session hook's halt or failure (at `step_start`), or a failed
/// commit: it ends the session, not only the task.
fn ends_the_session(error: &Error) -> bool {
    match error {
        Error::Halted { event, .. }
        | Error::HookFailed { event, .. }
        | Error::HookPanicked { event, .. }
        | Error::HookTimedOut { event, .. } => event.is_session(),
        // The store has moved on (another writer) or failed: the next task's turn would only
        // fail to commit again.
        Error::Commit(_) | Error::ComponentPanicked { component: Component::Committer, .. } => true,
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
        Flow::Halt { hook, halt } => Err(crate::error::halted(E::KIND, hook, halt)),
        Flow::Failed { hook, failure } => Err(failure.error(E::KIND, hook)),
        Flow::Stop { value, .. } => match value {},
        Flow::Retry { feedback, .. } => match feedback {},
        Flow::Reject { rejection, .. } => match rejection {},
        Flow::Escalate { escalation, .. } => match escalation {},
        Flow::Enqueue { follow_up, .. } => match follow_up {},
    }
}

/// Tells the observer of a session's event, and the run's span (`span`; through the observer,
/// a [`Watched`]); with neither listening it costs nothing, not even the event's making.
#[inline]
fn emit<O: Observer>(
    observer: &O,
    span: &Option<tracing::Span>,
    event: impl FnOnce() -> SessionEvent,
) {
    if !O::SILENT || span.is_some() {
        observer.observe(&Observation::Session(&event()));
    }
}
