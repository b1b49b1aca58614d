//! A session's data: its tasks and plans, what its queue holds, what it reports when they
//! end, and what happened in it. Data only: the session's run is in [`session`](crate::session).

use std::collections::{BTreeMap, VecDeque};
use std::fmt;
use std::num::NonZeroU64;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};

use crate::conversation::TurnRef;
use crate::error::Error;
use crate::message::AssistantMessage;

/// An id the session counts from 1: never zero, so an entry's optional task tag costs the log
/// no more room than the ids themselves.
macro_rules! session_id {
    ($(#[$doc:meta])* $name:ident, $word:literal) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(NonZeroU64);

        impl $name {
            /// The id's number.
            pub fn get(self) -> u64 {
                self.0.get()
            }

            /// The `n`th id (from 1); `None` for 0.
            pub fn new(n: u64) -> Option<Self> {
                NonZeroU64::new(n).map($name)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, concat!($word, " {}"), self.0)
            }
        }
    };
}

session_id! {
    /// Identifies a task within its session, assigned when it is queued: 1, 2, 3…
    TaskId, "task"
}

session_id! {
    /// Identifies a plan within its session, assigned when it is accepted: 1, 2, 3…
    PlanId, "plan"
}

/// One unit of work: a prompt the agent answers in one turn, taking as many steps as it
/// needs up to `max_steps`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Task {
    /// A label for traces and reports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the agent is asked: the user message that opens the task's turn.
    pub prompt: String,
    /// Steps the task may start (each a model call and its tool calls); `None`:
    /// the conversation's `max_steps`. The application may set it above that; the model's
    /// `submit_plan` tool cannot set it. Read as `max_turns` too, an older word.
    #[serde(default, alias = "max_turns", skip_serializing_if = "Option::is_none")]
    pub max_steps: Option<u32>,
}

impl Task {
    /// A task asking `prompt`.
    pub fn new(prompt: impl Into<String>) -> Self {
        Task { title: None, prompt: prompt.into(), max_steps: None }
    }

    /// This task, labelled.
    pub fn titled(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// This task, allowed `max_steps` steps.
    pub fn max_steps(mut self, max_steps: u32) -> Self {
        self.max_steps = Some(max_steps);
        self
    }
}

impl From<&str> for Task {
    fn from(prompt: &str) -> Self {
        Task::new(prompt)
    }
}

impl From<String> for Task {
    fn from(prompt: String) -> Self {
        Task::new(prompt)
    }
}

/// A task in a session's queue: the work, and where it belongs. The value of `task_start`,
/// whose hooks may edit the work but not its identity.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueuedTask {
    id: TaskId,
    plan: Option<PlanId>,
    /// The work.
    pub task: Task,
}

impl QueuedTask {
    pub(crate) fn new(id: TaskId, plan: Option<PlanId>, task: Task) -> Self {
        QueuedTask { id, plan, task }
    }

    /// The task's id.
    pub fn id(&self) -> TaskId {
        self.id
    }

    /// The plan it belongs to; `None` for a task queued on its own.
    pub fn plan(&self) -> Option<PlanId> {
        self.plan
    }

    /// Its tag in the log.
    pub fn tag(&self) -> TaskTag {
        TaskTag { task: self.id, plan: self.plan }
    }
}

/// What a log entry carries of the task it was written for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TaskTag {
    /// The task.
    pub task: TaskId,
    /// Its plan, if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<PlanId>,
}

/// A group of tasks proposed together: by the model through the `submit_plan` tool, or by the
/// application. The value of `plan_submit`, whose hooks may rewrite it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    /// A label for traces and reports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The tasks, in the order they run.
    pub tasks: Vec<Task>,
    /// Whether the plan replaces every task still queued (those are reported `cancelled`)
    /// rather than joining the end of the queue.
    #[serde(default)]
    pub clear_existing: bool,
}

impl Plan {
    /// A plan of `tasks`.
    pub fn new<I>(tasks: I) -> Self
    where
        I: IntoIterator,
        I::Item: Into<Task>,
    {
        Plan {
            title: None,
            tasks: tasks.into_iter().map(Into::into).collect(),
            clear_existing: false,
        }
    }

    /// This plan, labelled.
    pub fn titled(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// This plan, replacing the tasks still queued.
    pub fn clearing_existing(mut self) -> Self {
        self.clear_existing = true;
        self
    }
}

/// How a task ended. Every task ends exactly once, in one of these.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum TaskStatus {
    /// Its turn reached a final answer.
    Success,
    /// A hook refused it: a `task_start` or `step_start` REJECT, an escalation the approver
    /// turned down, or a turn hook's HALT.
    Rejected,
    /// It used its `max_steps` steps without a final answer (stored as `max_turns`, the word
    /// the log's format fixed).
    #[serde(rename = "max_turns")]
    MaxSteps,
    /// Its turn failed: the model, a tool set, a hook's error, panic or timeout.
    Error,
    /// It did not end on its own: the session was halted, its `run` was dropped while the task
    /// was running, or a plan with `clear_existing` replaced it in the queue.
    Cancelled,
}

impl fmt::Display for TaskStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TaskStatus::Success => "success",
            TaskStatus::Rejected => "rejected",
            TaskStatus::MaxSteps => "max_turns",
            TaskStatus::Error => "error",
            TaskStatus::Cancelled => "cancelled",
        })
    }
}

/// A task that ended: the value of `task_complete`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TaskReport {
    /// The task, as it ran (after `task_start` hooks' edits).
    pub task: QueuedTask,
    /// How it ended.
    pub status: TaskStatus,
    /// Its final answer, when it succeeded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<AssistantMessage>,
    /// Why it did not succeed, when it did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The turn it ran in; `None` if it never ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<TurnRef>,
    /// Steps it started: each a model call, and its tool calls — a step a
    /// `step_start` hook stopped counts, a retry within a step does not.
    pub steps: u32,
}

/// A plan's progress, counted as its tasks end.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanProgress {
    /// The plan.
    pub id: PlanId,
    /// Its label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Tasks it holds.
    pub total: u32,
    /// Tasks of it that ended, whatever their status.
    pub completed: u32,
    /// Of those, how many ended in success.
    pub succeeded: u32,
}

impl PlanProgress {
    /// Tasks of it not yet ended.
    pub fn pending(&self) -> u32 {
        self.total - self.completed
    }

    /// Whether every task of it ended.
    pub fn is_complete(&self) -> bool {
        self.completed == self.total
    }
}

/// A plan whose tasks all ended: the value of `plan_complete`.
pub type PlanReport = PlanProgress;

/// Tasks an `all_tasks_complete` hook enqueues: the payload of its ENQUEUE.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FollowUp {
    /// The tasks, in the order they run.
    pub tasks: Vec<Task>,
}

impl FollowUp {
    /// How many tasks.
    pub fn count(&self) -> usize {
        self.tasks.len()
    }
}

/// What a session's hooks read of it: its queue, its plans, the tasks that ended.
#[derive(Clone, Debug, Default)]
pub struct SessionState {
    pub(crate) queue: VecDeque<QueuedTask>,
    pub(crate) plans: BTreeMap<PlanId, PlanProgress>,
    pub(crate) completed: Vec<TaskReport>,
    /// How many of `completed` a run has returned: the next returns the rest.
    pub(crate) returned: usize,
    /// The task running, from its `task_start` until its `task_complete` begins.
    pub(crate) running: Option<Running>,
    /// Steps the session's tasks started, in all: counted as each starts, so a run dropped
    /// midway loses none.
    pub(crate) steps: StepCount,
    pub(crate) next_task: u64,
    pub(crate) follow_ups: u32,
    /// Whether `session_start`'s hooks ran to their end.
    pub(crate) started: bool,
    /// Ends whose `task_complete` (or plan's `plan_complete`) hooks have not all run yet, in
    /// order: a dropped run's are delivered by the next.
    pub(crate) pending: VecDeque<Delivery>,
    /// Why the session stopped, once a session hook stopped it: what is left winds down.
    pub(crate) stopped: Option<crate::Error>,
    /// Whether `session_end` is firing: a dropped run's next run fires only it.
    pub(crate) ending: bool,
    /// Whether `session_end`'s hooks ran to their end.
    pub(crate) ended: bool,
    /// Whether the committer (if the run commits) has committed the session's end.
    pub(crate) end_committed: bool,
}

impl SessionState {
    /// The tasks waiting, in the order they will run.
    pub fn queue(&self) -> impl ExactSizeIterator<Item = &QueuedTask> {
        self.queue.iter()
    }

    /// The task running, if one is.
    pub fn running(&self) -> Option<&QueuedTask> {
        self.running.as_ref().map(|running| &running.task)
    }

    /// Every plan accepted so far, with its progress.
    pub fn plans(&self) -> impl ExactSizeIterator<Item = &PlanProgress> {
        self.plans.values()
    }

    /// One plan's progress.
    pub fn plan(&self, id: PlanId) -> Option<&PlanProgress> {
        self.plans.get(&id)
    }

    /// The tasks that ended, in the order they ended.
    pub fn completed(&self) -> &[TaskReport] {
        &self.completed
    }

    /// Steps the session's tasks started, in all: the next one's `step_index`.
    pub fn steps(&self) -> u64 {
        self.steps.get()
    }

    /// How many times `all_tasks_complete` hooks enqueued follow-up work.
    pub fn follow_ups(&self) -> u32 {
        self.follow_ups
    }

    /// Why the session stopped early: the session hook's halt or failure that ended it.
    pub fn stopped(&self) -> Option<&crate::Error> {
        self.stopped.as_ref()
    }

    /// Whether `session_end` has fired: the session runs no more.
    pub fn has_ended(&self) -> bool {
        self.ended
    }

    pub(crate) fn queue_task(&mut self, plan: Option<PlanId>, task: Task) -> TaskId {
        self.next_task += 1;
        let id = TaskId::new(self.next_task).expect("ids are counted from 1");
        self.queue.push_back(QueuedTask::new(id, plan, task));
        id
    }
}

/// A count of steps the session's `step_start` gate adds to while the session's state is lent
/// to hooks.
#[derive(Debug, Default)]
pub(crate) struct StepCount(AtomicU64);

impl StepCount {
    pub(crate) fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }

    pub(crate) fn add_one(&self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

impl Clone for StepCount {
    fn clone(&self) -> Self {
        StepCount(AtomicU64::new(self.get()))
    }
}

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
        /// Its title, if it had one.
        title: Option<String>,
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
    /// A plan the model submitted was dropped unreviewed: the session stopped first.
    PlanDropped {
        /// Its title, if it had one.
        title: Option<String>,
        /// Why.
        reason: String,
    },
    /// The session ended: `session_end` fires next.
    Ended,
    /// A run ended: the tasks that ended in it, or why it stopped. A stream's last item.
    RunEnded {
        /// What [`Session::run`](crate::session::Session::run) returns.
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
            SessionEvent::PlanRejected { title: Some(title), hook, reason } => {
                write!(f, "plan {title:?} rejected by `{hook}`: {reason}")
            }
            SessionEvent::PlanRejected { title: None, hook, reason } => {
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
            SessionEvent::PlanDropped { title: Some(title), reason } => {
                write!(f, "plan {title:?} dropped: {reason}")
            }
            SessionEvent::PlanDropped { title: None, reason } => {
                write!(f, "plan dropped: {reason}")
            }
            SessionEvent::Ended => f.write_str("session ended"),
            SessionEvent::RunEnded { result: Ok(reports) } => {
                write!(f, "run ended: {} task(s) ended", reports.len())
            }
            SessionEvent::RunEnded { result: Err(error) } => write!(f, "run stopped: {error}"),
        }
    }
}

/// What a turn knows of the session's task it runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskContext {
    pub(crate) tag: TaskTag,
    /// Steps the session's tasks started before this task's first.
    pub(crate) steps_before: u64,
    /// The task's `max_steps`, in place of the conversation's `max_steps`.
    pub(crate) max_steps: Option<u32>,
}

/// The task running: from its `task_start` until its end is recorded.
#[derive(Clone, Debug)]
pub(crate) struct Running {
    pub(crate) task: QueuedTask,
    /// Its turn, once it has one.
    pub(crate) turn: Option<TurnRef>,
    /// The session's steps before the task's first.
    pub(crate) steps_before: u64,
    /// How it ended, once it has: kept until its end is recorded, so a run dropped between
    /// its turn's end and its report still reports what happened.
    pub(crate) ended: Option<Ended>,
}

/// A task's end being reported: its report (by index in the ended tasks) until `task_complete`
/// has run, and its plan if it completed one, until `plan_complete` has.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Delivery {
    pub(crate) report: Option<usize>,
    pub(crate) plan: Option<PlanId>,
}

/// How a task ended, before its report is made.
#[derive(Clone, Debug)]
pub(crate) struct Ended {
    pub(crate) status: TaskStatus,
    pub(crate) answer: Option<AssistantMessage>,
    pub(crate) reason: Option<String>,
    pub(crate) turn: Option<TurnRef>,
    pub(crate) steps: u32,
}
