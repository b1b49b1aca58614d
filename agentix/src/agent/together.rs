//! A step's calls run together: the hooks decide every call in call order before any runs,
//! the calls they let through run at once (up to `Config::tool_concurrency`, a sequential
//! tool's alone), and the hooks settle each result in call order, whatever order the calls
//! finished in. The calls run in the step's own future — polled together, never spawned — so
//! they borrow the turn as any hook does, and stop when the turn is dropped.

use std::pin::pin;
use std::task::Poll;

use futures::StreamExt;

use super::effects::Effects;
use super::step::{StepInFlight, Together, nth_call};
use super::tool_call::{Answer, Decided};
use super::{Agent, fire};
use crate::approval::{Approval, Approver, PendingApproval};
use crate::error::Error;
use crate::event::EventKind;
use crate::hook::NextTool;
use crate::message::{ToolCall, ToolFailure, ToolResult};
use crate::model::Model;
use crate::observe::{Observation, Observer};
use crate::pipeline::{Pipeline, node::Keep};
use crate::support::lock;
use crate::tool::ToolSet;
use crate::tool::at_hand::AtHand;
use crate::transform::StreamTransformer;
use crate::turn::Turn;

impl<M: Model, T: ToolSet, P: Pipeline, A: Approver, X: StreamTransformer> Agent<M, T, P, A, X> {
    /// Runs the step's calls from its first unanswered one on, together, into `step`'s slots
    /// for them. `answer` decides the call a resumed step waited at; `waiting` are the
    /// suspended step's calls that still wait (not asked about again). Returns the calls that
    /// wait for a person once the others are done: the step is then suspended.
    pub(super) async fn run_together<O: Observer, D: Effects>(
        &self,
        step: &mut StepInFlight<'_, P::Kept>,
        mut answer: Option<Box<Answer>>,
        still_waiting: Vec<PendingApproval>,
        turn: &mut Turn,
        observer: &O,
        effects: &D,
    ) -> Result<Vec<PendingApproval>, Error> {
        step.run_together();
        let from = step.results.len();
        let mut waiting = Vec::new();
        let mut admitted = Vec::with_capacity(step.calls - from);

        // Decided in call order, each by the hooks as they stand after the ones before.
        for index in from..step.calls {
            let StepInFlight { message, together, .. } = &mut *step;
            let slot = together[index - from].result_mut();
            if slot.is_some() {
                continue;
            }
            let call = nth_call(message, index);
            if let Some(pending) = still_waiting.iter().find(|pending| pending.call.id == call.id) {
                waiting.push(pending.clone());
                continue;
            }
            let answers = answer.as_ref().is_some_and(|answer| answer.call == call.id);
            let answered = if answers { answer.take() } else { None };
            match self.decide(call, turn, observer, answered, effects).await? {
                Decided::Run => admitted.push(index),
                Decided::Refused { by, reason } => {
                    let refused = ToolResult::failure(call, ToolFailure::Rejected { by, reason });
                    *together[index - from].result_mut() = Some(refused);
                }
                Decided::Waiting(pending) => waiting.push(*pending),
            }
        }
        if T::HAS_ORIGINS {
            turn.tool_origin = None;
        }

        let concurrency = effects.tool_concurrency(turn.config().tool_concurrency).max(1);
        self.run_admitted(step, &admitted, from, concurrency, turn, observer, effects).await;
        if let Some(aborted) = turn.aborted.get() {
            return Err(aborted.error());
        }

        // Settled in call order.
        for (settled, &index) in admitted.iter().enumerate() {
            let StepInFlight { message, together, .. } = &mut *step;
            let call = nth_call(message, index);
            let Some(result) = together[index - from].result_mut() else { continue };
            if T::HAS_ORIGINS {
                turn.tool_origin = self.tools.origin(&call.name);
            }
            if let Err(error) = self.settle(call, result, turn, observer).await {
                // The calls after it ran, but their hooks never settled what they returned
                // (an `after_tool` hook that redacts, say): the log does not keep it.
                for &later in &admitted[settled + 1..] {
                    let call = nth_call(&mut step.message, later);
                    let slot = step.together[later - from].result_mut();
                    if slot.is_some() {
                        let reason = error.to_string();
                        *slot = Some(ToolResult::failure(call, ToolFailure::Withheld { reason }));
                    }
                }
                return Err(error);
            }
        }

        // What a sub-agent said in a call of this step (kept, or an answer handed back) lives
        // only as long as the step runs: a step that holds it does not stop to wait. (The
        // approver is asked before any call runs, so only here can a step hold it.)
        if !waiting.is_empty() && turn.holds_delegated() {
            for pending in waiting.drain(..) {
                let index = step.message.tool_calls().position(|call| call.id == pending.call.id);
                let Some(index) = index.filter(|index| *index >= from) else { continue };
                let reason = "another call of this step ran an agent whose answer or \
                              conversation the step keeps; it cannot stop to wait for a person"
                    .to_owned();
                let by = format!("the approver, on escalation by {}", pending.hook);
                let approval = Approval::Reject(reason.clone());
                let hook = &pending.hook;
                observer.observe(&Observation::Approval {
                    hook,
                    call: &pending.call,
                    approval: &approval,
                });
                let refused =
                    ToolResult::failure(&pending.call, ToolFailure::Rejected { by, reason });
                *step.together[index - from].result_mut() = Some(refused);
            }
        }
        Ok(waiting)
    }

    /// Runs the admitted calls (their indices, in call order) at most `concurrency` at a time,
    /// each sequential tool's call alone; each call's result goes to its slot as it returns.
    /// Stops starting calls, and drops those running, once the turn is aborted.
    #[allow(clippy::too_many_arguments)]
    async fn run_admitted<O: Observer, D: Effects>(
        &self,
        step: &StepInFlight<'_, P::Kept>,
        admitted: &[usize],
        from: usize,
        concurrency: usize,
        turn: &Turn,
        observer: &O,
        effects: &D,
    ) {
        let calls: Vec<&ToolCall> = step.message.tool_calls().collect();
        let alone = |index: usize| T::HAS_SEQUENTIAL && self.tools.sequential(&calls[index].name);
        let run = |index: usize| {
            let slot = &step.together[index - from];
            self.run_one(calls[index], slot, turn, observer, effects)
        };
        let mut at = 0;
        while at < admitted.len() && turn.aborted.get().is_none() {
            if concurrency == 1 || alone(admitted[at]) {
                run(admitted[at]).await;
                at += 1;
                continue;
            }
            // The calls up to the next one that runs alone run together.
            let end = admitted[at..]
                .iter()
                .position(|&index| alone(index))
                .map_or(admitted.len(), |offset| at + offset);
            let batch = admitted[at..end].iter().copied();
            if end - at <= concurrency {
                // All at once: one allocation for the batch, each call polled in place.
                until_aborted(turn, futures::future::join_all(batch.map(run))).await;
            } else {
                let running = futures::stream::iter(batch).map(run).buffer_unordered(concurrency);
                until_aborted(turn, running.collect::<()>()).await;
            }
            at = end;
        }
    }

    /// Runs one call through the `wrap_tool` onion into its slot.
    async fn run_one<O: Observer, D: Effects>(
        &self,
        call: &ToolCall,
        slot: &Together<P::Kept>,
        turn: &Turn,
        observer: &O,
        effects: &D,
    ) {
        fire(observer, turn, EventKind::WrapTool);
        let tool = self.next_tool(turn, &slot.ran, &slot.reached, observer, effects);
        let onion = self.hooks.tool_onion(turn, observer, tool);
        let result = if T::HAS_ORIGINS {
            // Its origin, to the hooks and the tool of this call alone.
            let at_hand = AtHand::new(turn, None, self.tools.origin(&call.name));
            at_hand.scope(onion.call(call)).await
        } else {
            onion.call(call).await
        };
        // A call the turn's abort cut is answered by what its tool returned, if it did: with no
        // `wrap_tool` hook that is the onion's result, else what was kept (the step reads it).
        if turn.aborted.get().is_none() || !<P::Kept as Keep>::KEEPS {
            *lock(&slot.result) = Some(result);
        }
    }
}

/// Runs `calls` until they are done, or until the turn is aborted (a hook panicked in one of
/// them): the others are then dropped where they stand, and the step answers them by what
/// their tools returned, if they did.
async fn until_aborted<F: Future>(turn: &Turn, calls: F) {
    let mut calls = pin!(calls);
    std::future::poll_fn(|cx| {
        if calls.as_mut().poll(cx).is_ready() || turn.aborted.get().is_some() {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    })
    .await;
}
