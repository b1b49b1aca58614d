//! How a session runs a task's turn on an agent: the task's context on the turn, and its
//! `step_start` hooks inside the turn's loop.

use crate::agent::TurnGate;
use crate::event::{EventKind, StepStart};
use crate::observe::Observer;
use crate::pipeline::Flow;
use crate::turn::Turn;

use super::chain::SessionChain;
use crate::task::SessionState;

/// A session's gate for one task: its `step_start` hooks, and the session's count of steps.
pub(crate) struct Gate<'s, S> {
    pub(crate) hooks: &'s S,
    pub(crate) state: &'s SessionState,
}

impl<S: SessionChain> TurnGate for Gate<'_, S> {
    async fn step_start<O: Observer>(&self, turn: &mut Turn, observer: &O) -> Flow<StepStart> {
        self.state.steps.add_one();
        observer.observe(&crate::observe::Observation::Event {
            turn: turn.turn_ref(),
            step: turn.step(),
            event: EventKind::StepStart,
        });
        if !S::EVENTS.contains(EventKind::StepStart) {
            return Flow::Continue;
        }
        self.hooks.step_start(turn, self.state, observer).await
    }
}
