//! The session's hooks: the [`SessionHook`] trait, one trait per session event (in
//! [`on`](crate::on)), and the static chain a session runs them through.

use std::future::{Future, ready};
use std::time::Duration;

use crate::event::{self, EventKind, EventSet};
use crate::hook::short_type_name;
use crate::observe::{Observation, Observer};
use crate::pipeline::{Factory, Flow, HookFailure};
use crate::turn::Turn;
use crate::verdict::Verdict;
use crate::{caught, panic_message};

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

/// The session's eight events, as a set.
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
/// it in a session's chain.
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
        #[doc(hidden)]
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

        impl<H: $trait> RegisterSession<event::$trait> for H {
            type Hook = $node<H>;

            fn session_hook(self) -> $node<H> {
                $node(self)
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

/// Adds a hook to a session: implemented for every [`SessionHook`] and every session event's
/// trait of [`on`](crate::on); `Role` tells which, so none needs an annotation.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a session hook",
    label = "not a hook on a session event",
    note = "a session takes hooks on session_start, task_start, step_start, plan_submit, task_complete, plan_complete, all_tasks_complete and session_end; hooks on a turn's events go on the agent: `Agent::builder(model).hook(...)`"
)]
pub trait RegisterSession<Role> {
    /// The hook as the chain holds it.
    type Hook: SessionHook;

    /// The hook as the chain holds it.
    fn session_hook(self) -> Self::Hook;
}

impl<H: SessionHook> RegisterSession<crate::pipeline::AllEvents> for H {
    type Hook = H;

    fn session_hook(self) -> H {
        self
    }
}

impl<F, H, Role> RegisterSession<Factory<Role>> for F
where
    F: FnOnce() -> H,
    H: RegisterSession<Role>,
{
    type Hook = H::Hook;

    fn session_hook(self) -> H::Hook {
        self().session_hook()
    }
}

impl<H: crate::__private::StandIn> RegisterSession<crate::pipeline::AsStandIn> for H {
    type Hook = NoSessionHook;

    fn session_hook(self) -> NoSessionHook {
        NoSessionHook
    }
}

/// What a `#[hook]` function with an error registers as on a session: nothing (the crate does
/// not compile anyway), so no second error says it is not a hook.
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub struct NoSessionHook;

impl SessionHook for NoSessionHook {
    const EVENTS: EventSet = EventSet::NONE;
}

/// The session's events, as `method: Event (value parameters)`, for `$apply!`.
macro_rules! session_events {
    ($apply:ident) => {
        $apply! {
            session_start: SessionStart (session: &SessionState);
            task_start: TaskStart (task: &mut QueuedTask, session: &SessionState);
            step_start: StepStart (turn: &mut Turn, session: &SessionState);
            plan_submit: PlanSubmit (plan: &mut Plan, session: &SessionState);
            task_complete: TaskComplete (report: &TaskReport, session: &SessionState);
            plan_complete: PlanComplete (plan: &PlanReport, session: &SessionState);
            all_tasks_complete: AllTasksComplete (session: &SessionState);
            session_end: SessionEnd (session: &SessionState);
        }
    };
}

/// The chain's trait: one method per session event, each continuing by default.
macro_rules! chain_trait {
    ($($method:ident: $event:ident ($($arg:ident: $ty:ty),*);)*) => {
        /// The hooks of a session, in the order they were added: `()`, or the earlier hooks
        /// and one more ([`Then`]). Each event runs only the hooks that declare it, chosen at
        /// compile time: an event without hooks costs nothing.
        #[doc(hidden)]
        pub trait SessionChain: Send + Sync {
            /// The events some hook of the chain handles.
            const EVENTS: EventSet;

            $(
                #[doc = concat!("Runs the chain's `", stringify!($method), "` hooks.")]
                fn $method<O: Observer>(
                    &self,
                    $($arg: $ty,)*
                    observer: &O,
                ) -> impl Future<Output = Flow<event::$event>> + Send {
                    let _ = ($($arg,)* observer);
                    ready(Flow::Continue)
                }
            )*
        }
    };
}

session_events!(chain_trait);

impl SessionChain for () {
    const EVENTS: EventSet = EventSet::NONE;
}

/// The earlier hooks, then `H`.
#[doc(hidden)]
#[derive(Debug)]
pub struct Then<Rest, H> {
    pub(crate) rest: Rest,
    pub(crate) hook: H,
}

/// Runs one hook under a panic guard and its timeout, and reports what it decided.
async fn run_one<E: event::Event, F: Future<Output = Verdict<E>>>(
    hook: &'static str,
    timeout: Option<Duration>,
    observer: &impl Observer,
    start: impl FnOnce() -> F,
) -> Flow<E> {
    let flow = match bounded!(timeout, caught(start)) {
        Ok(Ok(verdict)) => Flow::decided(hook, verdict),
        Ok(Err(payload)) => Flow::Failed {
            hook,
            failure: HookFailure::Panicked { message: panic_message(payload.as_ref()) },
        },
        Err(after) => Flow::Failed { hook, failure: HookFailure::TimedOut { after } },
    };
    observer.observe(&Observation::Hook { event: E::KIND, hook, decision: flow.decision() });
    flow
}

/// Each event of [`Then`]: the earlier hooks, then this one if it declares the event.
macro_rules! then_events {
    ($($method:ident: $event:ident ($($arg:ident: $ty:ty),*);)*) => {
        impl<Rest: SessionChain, H: SessionHook> SessionChain for Then<Rest, H> {
            const EVENTS: EventSet = Rest::EVENTS.union(H::EVENTS);

            $(
                async fn $method<O: Observer>(&self, $($arg: $ty,)* observer: &O) -> Flow<event::$event> {
                    if Rest::EVENTS.contains(EventKind::$event) {
                        let flow = self.rest.$method($($arg,)* observer).await;
                        if !flow.is_continue() {
                            return flow;
                        }
                    }
                    if !H::EVENTS.contains(EventKind::$event) {
                        return Flow::Continue;
                    }
                    let hook = &self.hook;
                    run_one(hook.name(), H::TIMEOUT, observer, || hook.$method($($arg),*)).await
                }
            )*
        }
    };
}

session_events!(then_events);
