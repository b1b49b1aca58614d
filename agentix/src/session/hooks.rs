//! The session's hooks: the [`SessionHook`] trait, one trait per session event (in
//! [`on`](crate::on)), and the static chain a session runs them through.

use std::future::{Future, ready};
use std::time::Duration;

use crate::event::{self, EventKind, EventSet};
use crate::hook::short_type_name;
use crate::turn::Turn;
use crate::verdict::Verdict;

use crate::task::{Plan, PlanReport, QueuedTask, SessionState, TaskReport};

/// The session's events on one type, one method per event: a struct that follows a session
/// from start to end. Each method's default continues, so an implementation overrides the
/// events it cares about. A hook on one event is usually a `#[hook]` function (which implements
/// that event's trait of [`on`](crate::on)).
///
/// Each method gets the event's value and the session's state (its queue, plans and ended
/// tasks), and returns a [`Verdict`] whose type is the event's contract.
///
/// ```
/// use agentix::event::{TaskComplete, TaskStart};
/// use agentix::session::{QueuedTask, SessionHook, SessionState, TaskReport};
/// use agentix::Verdict;
///
/// /// Refuses tasks past a budget, and counts how they end.
/// struct Budget { max_tasks: usize }
///
/// impl SessionHook for Budget {
///     async fn task_start(&self, task: &mut QueuedTask, session: &SessionState) -> Verdict<TaskStart> {
///         if session.completed().len() >= self.max_tasks {
///             Verdict::reject(format!("over budget: {} is not run", task.id()))
///         } else {
///             Verdict::Continue
///         }
///     }
///
///     async fn task_complete(&self, report: &TaskReport, _session: &SessionState) -> Verdict<TaskComplete> {
///         println!("{}: {}", report.task.id(), report.status);
///         Verdict::Continue
///     }
/// }
/// ```
pub trait SessionHook: Send + Sync {
    /// The events this hook handles: a session calls it at these only.
    const EVENTS: EventSet = SESSION_EVENTS;

    /// How long one call of any of the hook's methods may take; past it the hook failed, and
    /// the session ends with [`Error::HookTimedOut`](crate::Error::HookTimedOut). `None`: no
    /// limit, and no timer.
    const TIMEOUT: Option<Duration> = None;

    /// The hook's name in errors and traces. Defaults to the type's name.
    fn name(&self) -> &'static str {
        short_type_name::<Self>()
    }

    /// `session_start`: once, before the session's first task.
    fn session_start(
        &self,
        session: &SessionState,
    ) -> impl Future<Output = Verdict<event::SessionStart>> + Send {
        let _ = session;
        ready(Verdict::Continue)
    }

    /// `task_start`: before each task's turn; edit the task, or REJECT it.
    fn task_start(
        &self,
        task: &mut QueuedTask,
        session: &SessionState,
    ) -> impl Future<Output = Verdict<event::TaskStart>> + Send {
        let _ = (task, session);
        ready(Verdict::Continue)
    }

    /// `step_start`: before each of a task's steps (its model call; a RETRY within the step does
    /// not fire it again); REJECT or ESCALATE stops the task
    /// before the call.
    fn step_start(
        &self,
        turn: &mut Turn,
        session: &SessionState,
    ) -> impl Future<Output = Verdict<event::StepStart>> + Send {
        let _ = (turn, session);
        ready(Verdict::Continue)
    }

    /// `plan_submit`: before a submitted plan's tasks are queued; edit it, or REJECT it.
    fn plan_submit(
        &self,
        plan: &mut Plan,
        session: &SessionState,
    ) -> impl Future<Output = Verdict<event::PlanSubmit>> + Send {
        let _ = (plan, session);
        ready(Verdict::Continue)
    }

    /// `task_complete`: once per task, with how it ended.
    fn task_complete(
        &self,
        report: &TaskReport,
        session: &SessionState,
    ) -> impl Future<Output = Verdict<event::TaskComplete>> + Send {
        let _ = (report, session);
        ready(Verdict::Continue)
    }

    /// `plan_complete`: once per plan, when every task of it ended.
    fn plan_complete(
        &self,
        plan: &PlanReport,
        session: &SessionState,
    ) -> impl Future<Output = Verdict<event::PlanComplete>> + Send {
        let _ = (plan, session);
        ready(Verdict::Continue)
    }

    /// `all_tasks_complete`: when the queue is empty; ENQUEUE adds follow-up tasks.
    fn all_tasks_complete(
        &self,
        session: &SessionState,
    ) -> impl Future<Output = Verdict<event::AllTasksComplete>> + Send {
        let _ = session;
        ready(Verdict::Continue)
    }

    /// `session_end`: once, when the session ends.
    fn session_end(
        &self,
        session: &SessionState,
    ) -> impl Future<Output = Verdict<event::SessionEnd>> + Send {
        let _ = session;
        ready(Verdict::Continue)
    }
}

/// The session's events, as a set.
pub(crate) const SESSION_EVENTS: EventSet = {
    let mut set = EventSet::NONE;
    let mut index = 0;
    while index < EventKind::SESSION.len() {
        set = set.with(EventKind::SESSION[index]);
        index += 1;
    }
    set
};

/// Declares each session event's trait of [`on`](crate::on), and the node that runs a hook of
/// it in a session's chain (registered by `chain`).
macro_rules! session_event_traits {
    ($(
        $(#[$doc:meta])*
        $trait:ident / $node:ident: fn $method:ident($($arg:ident: $ty:ty),*);
    )*) => {$(
        $(#[$doc])*
        pub trait $trait: Send + Sync {
            /// How long one call of the hook may take; past it the hook failed, and the session
            /// ends with [`Error::HookTimedOut`](crate::Error::HookTimedOut).
            /// `#[hook(EVENT, timeout = "2s")]` sets it. `None`: no limit, and no timer.
            const TIMEOUT: Option<Duration> = None;

            /// The hook's name in errors and traces. Defaults to the type's name.
            fn name(&self) -> &'static str {
                short_type_name::<Self>()
            }

            /// Runs the hook at its event.
            fn $method(&self, $($arg: $ty),*) -> impl Future<Output = Verdict<event::$trait>> + Send;
        }

        /// A hook of one session event, as a node of a session's chain.
        #[derive(Debug)]
        pub struct $node<H>(pub(crate) H);

        impl<H: $trait> SessionHook for $node<H> {
            const EVENTS: EventSet = EventSet::of(EventKind::$trait);
            const TIMEOUT: Option<Duration> = H::TIMEOUT;

            fn name(&self) -> &'static str {
                self.0.name()
            }

            fn $method(&self, $($arg: $ty),*) -> impl Future<Output = Verdict<event::$trait>> + Send {
                self.0.$method($($arg),*)
            }
        }
    )*};
}

session_event_traits! {
    /// A `session_start` hook: it sees the session before its first task, and may halt it.
    SessionStart / OnSessionStart: fn session_start(session: &SessionState);
    /// A `task_start` hook: it may edit the task about to run, REJECT it, or halt the session.
    TaskStart / OnTaskStart: fn task_start(task: &mut QueuedTask, session: &SessionState);
    /// A `step_start` hook: before each of a task's steps, it may REJECT the task,
    /// ESCALATE to the approver, or halt the session.
    StepStart / OnStepStart: fn step_start(turn: &mut Turn, session: &SessionState);
    /// A `plan_submit` hook: it may rewrite a submitted plan, REJECT it, or halt the session.
    PlanSubmit / OnPlanSubmit: fn plan_submit(plan: &mut Plan, session: &SessionState);
    /// A `task_complete` hook: it sees how each task ended, exactly once per task.
    TaskComplete / OnTaskComplete: fn task_complete(report: &TaskReport, session: &SessionState);
    /// A `plan_complete` hook: it sees each plan once every task of it ended.
    PlanComplete / OnPlanComplete: fn plan_complete(plan: &PlanReport, session: &SessionState);
    /// An `all_tasks_complete` hook: when the queue is empty it may ENQUEUE follow-up tasks.
    AllTasksComplete / OnAllTasksComplete: fn all_tasks_complete(session: &SessionState);
    /// A `session_end` hook: it sees the session once, as it ends.
    SessionEnd / OnSessionEnd: fn session_end(session: &SessionState);
}
