//! A step's tool calls while they run, kept so that however the turn ends — an error, a drop, a
//! timeout — the step joins the log with every call answered and every finished call's result.

use std::mem;
use std::sync::Mutex;

use crate::conversation::Entry;
use crate::lock;
use crate::message::{AssistantMessage, Part, ToolCall, ToolFailure, ToolResult};
use crate::turn::Turn;

/// Where a step in flight goes when the loop's future is dropped before the step is committed:
/// the turn, which outlives the loop's future, commits it from there.
pub(super) type StepSlot = Mutex<Option<PendingStep>>;

/// A step not yet in the log: the assistant message (its calls as the hooks left them), the
/// results so far, and the running call's result if its tool returned.
#[derive(Default)]
pub(super) struct PendingStep {
    message: AssistantMessage,
    results: Vec<ToolResult>,
    /// The call whose tool was started, if one is running.
    started: Option<usize>,
    ran: Option<ToolResult>,
}

impl PendingStep {
    /// Appends the step to the log, each call answered: the results that finished, then the
    /// running call's result if its tool returned (or `Interrupted` if it had started), then
    /// `NotRun` for the calls after it, with `reason`.
    pub(super) fn commit(self, turn: &mut Turn, reason: &str) {
        let PendingStep { message, mut results, started, mut ran } = self;
        for (index, call) in message.tool_calls().enumerate().skip(results.len()) {
            let reason = reason.to_owned();
            let result = if started == Some(index) {
                ran.take().unwrap_or_else(|| {
                    ToolResult::failure(call, ToolFailure::Interrupted { reason })
                })
            } else {
                ToolResult::failure(call, ToolFailure::NotRun { reason })
            };
            results.push(answering(call, result));
        }
        let turn_ref = turn.turn_ref();
        turn.append(Entry::Assistant { turn: turn_ref, message });
        turn.append(Entry::ToolResults { turn: turn_ref, results });
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

/// A step while its calls run, in the loop's future. Committed, it joins the log; dropped
/// first, it hands itself to the turn's [`StepSlot`].
pub(super) struct StepInFlight<'s> {
    slot: &'s StepSlot,
    pub(super) message: AssistantMessage,
    pub(super) results: Vec<ToolResult>,
    pub(super) started: Option<usize>,
    /// The running call's latest result from the tool set, kept while `wrap_tool` hooks could
    /// hold it (the call ran, whatever they do after `next` returns). Behind a lock: the
    /// innermost `next` of the onion writes it through a shared reference.
    pub(super) ran: Mutex<Option<ToolResult>>,
    committed: bool,
}

impl<'s> StepInFlight<'s> {
    pub(super) fn new(slot: &'s StepSlot, message: AssistantMessage) -> Self {
        let results = Vec::with_capacity(message.tool_calls().count());
        StepInFlight {
            slot,
            message,
            results,
            started: None,
            ran: Mutex::new(None),
            committed: false,
        }
    }

    /// The `index`-th tool call.
    pub(super) fn call(message: &mut AssistantMessage, index: usize) -> &mut ToolCall {
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

    /// Appends the step to the log; `reason` answers the calls that did not run.
    pub(super) fn commit(mut self, turn: &mut Turn, reason: &str) {
        self.committed = true;
        self.take().commit(turn, reason);
    }

    fn take(&mut self) -> PendingStep {
        PendingStep {
            message: mem::take(&mut self.message),
            results: mem::take(&mut self.results),
            started: self.started,
            ran: self.ran.get_mut().unwrap_or_else(|poisoned| poisoned.into_inner()).take(),
        }
    }
}

impl Drop for StepInFlight<'_> {
    fn drop(&mut self) {
        if !self.committed {
            let pending = self.take();
            *lock(self.slot) = Some(pending);
        }
    }
}
