//! A step's tool calls while they run, kept so that however the turn ends — an error, a drop, a
//! timeout — the step joins the log with every call answered and every finished call's result.

use std::mem;
use std::sync::Mutex;

use crate::approval::{PendingApproval, Suspension};
use crate::conversation::Entry;
use crate::lock;
use crate::message::{AssistantMessage, Part, ToolCall, ToolFailure, ToolResult};
use crate::pipeline::Keep;
use crate::turn::Turn;

/// Where a step in flight goes when the loop's future is dropped (or unwinds) before the step
/// is committed: the turn, which outlives the loop's future, commits it from there. Boxed: it
/// is filled only on that path, and the open turn stays small on every other.
pub(super) type StepSlot = Mutex<Option<Box<PendingStep>>>;

/// A step not yet in the log: the assistant message (its calls as the hooks left them), the
/// results so far, the call whose tool was started, and what that tool returned if it did.
pub(super) struct PendingStep {
    message: AssistantMessage,
    results: Vec<ToolResult>,
    started: Option<usize>,
    ran: Option<ToolResult>,
}

impl PendingStep {
    /// Appends the step to the log, each call answered; `reason` answers the calls that did not
    /// finish.
    pub(super) fn commit(self, turn: &mut Turn, reason: &str) {
        let PendingStep { message, mut results, started, ran } = self;
        answer_the_rest(&message, &mut results, started, ran, reason);
        append_step(turn, message, results);
    }
}

/// Answers the calls after the finished ones: the started call with what its tool returned (or
/// as interrupted, if it had not returned), the ones after it as not run.
#[cold]
fn answer_the_rest(
    message: &AssistantMessage,
    results: &mut Vec<ToolResult>,
    started: Option<usize>,
    mut ran: Option<ToolResult>,
    reason: &str,
) {
    for (index, call) in message.tool_calls().enumerate().skip(results.len()) {
        let reason = reason.to_owned();
        let result = if started == Some(index) {
            ran.take()
                .unwrap_or_else(|| ToolResult::failure(call, ToolFailure::Interrupted { reason }))
        } else {
            ToolResult::failure(call, ToolFailure::NotRun { reason })
        };
        results.push(answering(call, result));
    }
}

fn append_step(turn: &mut Turn, message: AssistantMessage, results: Vec<ToolResult>) {
    let turn_ref = turn.turn_ref();
    turn.append(Entry::Assistant { turn: turn_ref, message });
    turn.append(Entry::ToolResults { turn: turn_ref, results });
    // What sub-agents that keep their conversations said in the step's calls.
    for entry in turn.take_kept() {
        turn.append(entry);
    }
}

/// `result`, answering `call` whatever id and name it had: the log pairs every call with its
/// result by id.
pub(super) fn answering(call: &ToolCall, mut result: ToolResult) -> ToolResult {
    answer_the_call(call, &mut result);
    result
}

/// The result answers the call that ran, whatever id and name a `wrap_tool`, `after_tool` or
/// `tool_error` hook gave it.
pub(super) fn answer_the_call(call: &ToolCall, result: &mut ToolResult) {
    if result.call_id != call.id {
        result.call_id.clone_from(&call.id);
    }
    if result.name != call.name {
        result.name.clone_from(&call.name);
    }
}

/// The `index`-th tool call of `message`.
pub(super) fn nth_call(message: &mut AssistantMessage, index: usize) -> &mut ToolCall {
    message
        .content
        .iter_mut()
        .filter_map(|part| match part {
            Part::ToolCall(call) => Some(call),
            _ => None,
        })
        .nth(index)
        .expect("the step has this many calls")
}

/// A step while its calls run, in the loop's future. Committed, it joins the log; dropped
/// first, it hands itself to the turn's [`StepSlot`].
pub(super) struct StepInFlight<'s, K: Keep> {
    slot: &'s StepSlot,
    pub(super) message: AssistantMessage,
    pub(super) results: Vec<ToolResult>,
    pub(super) started: Option<usize>,
    /// The started call's latest result from the tool set, while `wrap_tool` hooks could hold
    /// it (nothing, when there are none).
    pub(super) ran: K,
    pub(super) calls: usize,
    committed: bool,
}

impl<'s, K: Keep> StepInFlight<'s, K> {
    /// The step of `message`, whose first calls `results` answer (none, but in a resumed step).
    pub(super) fn new(
        slot: &'s StepSlot,
        message: AssistantMessage,
        results: Vec<ToolResult>,
        calls: usize,
    ) -> Self {
        StepInFlight {
            slot,
            message,
            results,
            started: None,
            ran: K::default(),
            calls,
            committed: false,
        }
    }

    /// Appends the step to the log; `reason` answers the calls that did not run (all ran, when
    /// the step ended well).
    pub(super) fn commit(mut self, turn: &mut Turn, reason: &str) {
        self.committed = true;
        let message = mem::take(&mut self.message);
        let mut results = mem::take(&mut self.results);
        if results.len() < self.calls {
            answer_the_rest(&message, &mut results, self.started, self.ran.take(), reason);
        }
        append_step(turn, message, results);
    }

    /// Leaves the step in the log as it stands, its next call waiting for `pending`'s answer.
    #[cold]
    pub(super) fn suspend(mut self, turn: &mut Turn, pending: PendingApproval) {
        self.committed = true;
        let suspension = Suspension {
            pending,
            message: mem::take(&mut self.message),
            results: mem::take(&mut self.results),
            state: turn.state(),
        };
        turn.append(Entry::Suspended { turn: turn.turn_ref(), suspension: Box::new(suspension) });
    }
}

impl<K: Keep> Drop for StepInFlight<'_, K> {
    fn drop(&mut self) {
        if !self.committed {
            let pending = PendingStep {
                message: mem::take(&mut self.message),
                results: mem::take(&mut self.results),
                started: self.started,
                ran: self.ran.take(),
            };
            *lock(self.slot) = Some(Box::new(pending));
        }
    }
}
