//! How a session runs a task's turn on an agent: the task's context on the turn, and its
//! `turn_start` hooks inside the turn's loop.

use std::future::{Future, ready};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use serde::{Deserialize, Serialize};

use crate::Outcome;
use crate::agent::Agent;
use crate::approval::Approver;
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
    /// Model calls the session made before this task's.
    pub(crate) turns_before: u64,
    /// The task's `max_turns`, in place of the conversation's `max_steps`.
    pub(crate) max_turns: Option<u32>,
}

/// What runs before each of a task's model calls: a session's `turn_start` hooks. A turn run
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

/// A session's gate for one task: its `turn_start` hooks, and a count of the task's steps.
pub(crate) struct Gate<'s, S> {
    pub(crate) hooks: &'s S,
    pub(crate) state: &'s SessionState,
    pub(crate) steps: AtomicU32,
}

impl<S: SessionChain> TurnGate for Gate<'_, S> {
    async fn turn_start<O: Observer>(&self, turn: &mut Turn, observer: &O) -> Flow<TurnStart> {
        self.steps.fetch_add(1, Ordering::Relaxed);
        if !S::EVENTS.contains(EventKind::TurnStart) {
            return Flow::Continue;
        }
        observer.observe(&crate::observe::Observation::Event {
            turn: turn.turn_ref(),
            step: turn.step(),
            event: EventKind::TurnStart,
        });
        self.hooks.turn_start(turn, self.state, observer).await
    }
}

/// An agent a [`Session`](super::Session) runs its tasks on: an [`Agent`], or a reference or
/// `Arc` to one.
pub trait TaskRunner: Send + Sync {
    /// Runs one task's turn: `message` opens it, `gate` runs before each model call.
    #[doc(hidden)]
    fn run_task<'a, O: Observer, G: TurnGate>(
        &'a self,
        conversation: &'a mut Conversation,
        message: Message,
        observer: &'a O,
        gate: &'a G,
        task: TaskContext,
    ) -> impl Future<Output = Outcome> + Send + 'a;
}

impl<M: Model, T: ToolSet, P: Pipeline, A: Approver, X: StreamTransformer> TaskRunner
    for Agent<M, T, P, A, X>
{
    fn run_task<'a, O: Observer, G: TurnGate>(
        &'a self,
        conversation: &'a mut Conversation,
        message: Message,
        observer: &'a O,
        gate: &'a G,
        task: TaskContext,
    ) -> impl Future<Output = Outcome> + Send + 'a {
        self.observed(conversation, message, observer, gate, Some(Box::new(task)))
    }
}

impl<R: TaskRunner + ?Sized> TaskRunner for &R {
    fn run_task<'a, O: Observer, G: TurnGate>(
        &'a self,
        conversation: &'a mut Conversation,
        message: Message,
        observer: &'a O,
        gate: &'a G,
        task: TaskContext,
    ) -> impl Future<Output = Outcome> + Send + 'a {
        (**self).run_task(conversation, message, observer, gate, task)
    }
}

impl<R: TaskRunner + ?Sized> TaskRunner for Arc<R> {
    fn run_task<'a, O: Observer, G: TurnGate>(
        &'a self,
        conversation: &'a mut Conversation,
        message: Message,
        observer: &'a O,
        gate: &'a G,
        task: TaskContext,
    ) -> impl Future<Output = Outcome> + Send + 'a {
        (**self).run_task(conversation, message, observer, gate, task)
    }
}
