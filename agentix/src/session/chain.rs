//! How a session's hooks compose: registration by role, and the static chain their events run
//! through (as the agent's `pipeline` composes a turn's hooks).

use std::future::{Future, ready};
use std::time::Duration;

use crate::event::{self, EventKind, EventSet};
use crate::observe::{Observation, Observer};
use crate::pipeline::{Flow, HookFailure, node::Factory};
use crate::support::{caught, panic_message};
use crate::turn::Turn;
use crate::verdict::Verdict;

use crate::task::{Plan, PlanReport, QueuedTask, SessionState, TaskReport};

use super::hooks::*;

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

impl<H: SessionHook> RegisterSession<crate::pipeline::node::AllEvents> for H {
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

/// A hook of one session event registers as its node.
macro_rules! register_by_event {
    ($($trait:ident / $node:ident),* $(,)?) => {$(
        impl<H: super::hooks::$trait> RegisterSession<event::$trait> for H {
            type Hook = $node<H>;

            fn session_hook(self) -> $node<H> {
                $node(self)
            }
        }
    )*};
}

register_by_event!(
    SessionStart / OnSessionStart,
    TaskStart / OnTaskStart,
    StepStart / OnStepStart,
    PlanSubmit / OnPlanSubmit,
    TaskComplete / OnTaskComplete,
    PlanComplete / OnPlanComplete,
    AllTasksComplete / OnAllTasksComplete,
    SessionEnd / OnSessionEnd,
);

impl<H: crate::__private::StandIn> RegisterSession<crate::pipeline::node::AsStandIn> for H {
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
