//! How a session runs a task's turn on an agent: the task's context on the turn, and its
//! `turn_start` hooks inside the turn's loop.

use std::future::{Future, ready};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::Outcome;
use crate::agent::Agent;
use crate::approval::Approver;
use crate::commit::Commit;
use crate::conversation::Conversation;
use crate::event::{EventKind, TurnStart};
use crate::message::Message;
use crate::model::Model;
use crate::observe::Observer;
use crate::pipeline::{Flow, Pipeline};
use crate::tool::ToolSet;
use crate::transform::StreamTransformer;
use crate::turn::Turn;

use super::hooks::SessionChain;
use super::task::{SessionState, TaskTag};

/// What a turn knows of the session's task it runs.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskContext {
    pub(crate) tag: TaskTag,
    /// Steps the session's tasks started before this task's first.
    pub(crate) steps_before: u64,
    /// The task's `max_turns`, in place of the conversation's `max_steps`.
    pub(crate) max_turns: Option<u32>,
}

/// What runs before each of a task's steps: a session's `turn_start` hooks. A turn run
/// on its own has `()`, which costs nothing.
#[doc(hidden)]
pub trait TurnGate: Sync {
    /// Whether there is anything to run: the loop skips the call at compile time otherwise.
    const GATES: bool = true;

    /// Runs the `turn_start` hooks.
    fn turn_start<O: Observer>(
        &self,
        turn: &mut Turn,
        observer: &O,
    ) -> impl Future<Output = Flow<TurnStart>> + Send;
}

impl TurnGate for () {
    const GATES: bool = false;

    #[inline(always)]
    fn turn_start<O: Observer>(
        &self,
        _turn: &mut Turn,
        _observer: &O,
    ) -> impl Future<Output = Flow<TurnStart>> + Send {
        ready(Flow::Continue)
    }
}

/// A session's gate for one task: its `turn_start` hooks, and the session's count of steps.
pub(crate) struct Gate<'s, S> {
    pub(crate) hooks: &'s S,
    pub(crate) state: &'s SessionState,
}

impl<S: SessionChain> TurnGate for Gate<'_, S> {
    async fn turn_start<O: Observer>(&self, turn: &mut Turn, observer: &O) -> Flow<TurnStart> {
        self.state.steps.add_one();
        observer.observe(&crate::observe::Observation::Event {
            turn: turn.turn_ref(),
            step: turn.step(),
            event: EventKind::TurnStart,
        });
        if !S::EVENTS.contains(EventKind::TurnStart) {
            return Flow::Continue;
        }
        self.hooks.turn_start(turn, self.state, observer).await
    }
}

mod sealed {
    pub trait Sealed {}
}

impl<M, T, P, A, X> sealed::Sealed for Agent<M, T, P, A, X> {}
impl<R: sealed::Sealed + ?Sized> sealed::Sealed for &R {}
impl<R: sealed::Sealed + ?Sized> sealed::Sealed for Arc<R> {}
impl sealed::Sealed for crate::agent::BoxedAgent {}

/// An agent a [`Session`](super::Session) runs its tasks on: an [`Agent`], a
/// [`BoxedAgent`](crate::BoxedAgent), or a reference or `Arc` to one. Sealed: the session
/// reaches into the turn's loop through it.
pub trait TaskRunner: sealed::Sealed + Send + Sync {
    /// Runs one task's turn: `message` opens it, `gate` runs before each step, `committer`
    /// commits each step.
    #[doc(hidden)]
    fn run_task<'a, O: Observer, G: TurnGate, K: Commit>(
        &'a self,
        conversation: &'a mut Conversation,
        message: Message,
        observer: &'a O,
        gate: &'a G,
        task: TaskContext,
        committer: &'a K,
    ) -> impl Future<Output = Outcome> + Send + 'a;
}

impl<M: Model, T: ToolSet, P: Pipeline, A: Approver, X: StreamTransformer> TaskRunner
    for Agent<M, T, P, A, X>
{
    fn run_task<'a, O: Observer, G: TurnGate, K: Commit>(
        &'a self,
        conversation: &'a mut Conversation,
        message: Message,
        observer: &'a O,
        gate: &'a G,
        task: TaskContext,
        committer: &'a K,
    ) -> impl Future<Output = Outcome> + Send + 'a {
        self.observed(conversation, message, observer, gate, Some(Box::new(task)), committer)
    }
}

/// A reference or an `Arc` runs tasks as what it points to.
macro_rules! forwarded {
    ($($pointer:ty),*) => {$(
        impl<R: TaskRunner + ?Sized> TaskRunner for $pointer {
            fn run_task<'a, O: Observer, G: TurnGate, K: Commit>(
                &'a self,
                conversation: &'a mut Conversation,
                message: Message,
                observer: &'a O,
                gate: &'a G,
                task: TaskContext,
                committer: &'a K,
            ) -> impl Future<Output = Outcome> + Send + 'a {
                (**self).run_task(conversation, message, observer, gate, task, committer)
            }
        }
    )*};
}

forwarded!(&R, Arc<R>);
