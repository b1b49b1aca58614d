//! A step's tool calls while they run, kept so that however the turn ends — an error, a drop, a
//! timeout — the step joins the log with every call answered and every finished call's result.

use std::mem;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::approval::{PendingApproval, Suspension};
use crate::conversation::Entry;
use crate::message::{AssistantMessage, Part, ToolCall, ToolFailure, ToolResult};
use crate::pipeline::node::Keep;
use crate::support::lock;
use crate::turn::Turn;

/// Where a step in flight goes when the loop's future is dropped (or unwinds) before the step
/// is appended: the turn, which outlives the loop's future, appends it from there. Boxed: it
/// is filled only on that path, and the open turn stays small on every other.
pub(super) type StepSlot = Mutex<Option<Box<PendingStep>>>;

/// A step not yet in the log: the assistant message (its calls as the hooks left them), the
/// results of its first calls in order, and what is known of each call after them.
pub(super) struct PendingStep {
    message: AssistantMessage,
    results: Vec<ToolResult>,
    rest: Vec<Unfinished>,
}

/// A call after a step's answered first ones, as the step was left: its result if it has one
/// (or what its tool returned, if it returned), and whether its tool was reached.
#[derive(Default)]
struct Unfinished {
    result: Option<ToolResult>,
    reached: bool,
}

impl PendingStep {
    /// Appends the step to the log, each call answered; `reason` answers the calls that did not
    /// finish.
    pub(super) fn append(self, turn: &mut Turn, reason: &str) {
        let PendingStep { message, mut results, rest } = self;
        answer_the_rest(&message, &mut results, rest, reason);
        append_step(turn, message, results);
    }
}

/// Answers the calls after the first ones `results` holds, with what `rest` knows of them: a
/// result, or, for a call that reached its tool without one, interrupted; any other, not run.
#[cold]
fn answer_the_rest(
    message: &AssistantMessage,
    results: &mut Vec<ToolResult>,
    rest: Vec<Unfinished>,
    reason: &str,
) {
    let mut rest = rest.into_iter();
    for call in message.tool_calls().skip(results.len()) {
        let Unfinished { result, reached } = rest.next().unwrap_or_default();
        let reason = reason.to_owned();
        let result = result.unwrap_or_else(|| {
            if reached {
                ToolResult::failure(call, ToolFailure::Interrupted { reason })
            } else {
                ToolResult::failure(call, ToolFailure::NotRun { reason })
            }
        });
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

/// One of the calls a step runs together, from its first unanswered call on: shared by the
/// calls' futures while they run, each writing its own.
pub(super) struct Together<K> {
    /// Its result, once it has one: refused while the hooks decided, or returned.
    pub(super) result: Mutex<Option<ToolResult>>,
    /// Whether its tool was reached: a call cut after it was is interrupted, one cut before
    /// did not run.
    pub(super) reached: AtomicBool,
    /// Its latest result from the tool set, while `wrap_tool` hooks could hold it.
    pub(super) ran: K,
}

impl<K: Keep> Together<K> {
    fn new() -> Self {
        Together { result: Mutex::new(None), reached: AtomicBool::new(false), ran: K::default() }
    }

    /// Its result, for the settling phase, which has the step to itself.
    pub(super) fn result_mut(&mut self) -> &mut Option<ToolResult> {
        self.result.get_mut().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn unfinished(mut self) -> Unfinished {
        let reached = *self.reached.get_mut();
        let result =
            self.result_mut().take().or_else(|| if reached { self.ran.take() } else { None });
        Unfinished { result, reached }
    }
}

/// A step while its calls run, in the loop's future. Committed, it joins the log; dropped
/// first, it hands itself to the turn's [`StepSlot`].
///
/// A step's first calls are answered in order in `results`. The call after them, run alone, is
/// `reached` once its tool is, what its tool returned kept in `ran`; calls run together are
/// each in `together`, from the first unanswered one on.
pub(super) struct StepInFlight<'s, K: Keep> {
    slot: &'s StepSlot,
    pub(super) message: AssistantMessage,
    pub(super) results: Vec<ToolResult>,
    /// Whether the call run alone reached its tool: cut after, it is interrupted; before, it
    /// did not run.
    pub(super) reached: AtomicBool,
    /// The call run alone's latest result from the tool set, while `wrap_tool` hooks could hold
    /// it (nothing, when there are none).
    pub(super) ran: K,
    pub(super) together: Vec<Together<K>>,
    pub(super) calls: usize,
    appended: bool,
}

impl<'s, K: Keep> StepInFlight<'s, K> {
    /// The step of `message`, none of whose calls is answered yet.
    pub(super) fn new(slot: &'s StepSlot, message: AssistantMessage, calls: usize) -> Self {
        StepInFlight {
            slot,
            message,
            results: Vec::with_capacity(calls),
            reached: AtomicBool::new(false),
            ran: K::default(),
            together: Vec::new(),
            calls,
            appended: false,
        }
    }

    /// Takes a suspended step's results: those of its first calls in order stay in `results`,
    /// those after a call without one go to the calls run together.
    pub(super) fn answered(&mut self, finished: Vec<ToolResult>) {
        let mut finished = finished.into_iter().peekable();
        let ids: Vec<String> = self.message.tool_calls().map(|call| call.id.clone()).collect();
        for id in &ids {
            match finished.peek() {
                Some(result) if self.together.is_empty() && result.call_id == *id => {
                    self.results.extend(finished.next());
                }
                _ => {
                    let mut call = Together::new();
                    if finished.peek().is_some_and(|result| result.call_id == *id) {
                        *call.result_mut() = finished.next();
                    }
                    self.together.push(call);
                }
            }
        }
        // The last call of the first ones left without a result runs alone, or together with
        // the ones after it: a resumed step runs the calls left as any step does.
        if self.together.iter_mut().all(|call| call.result_mut().is_none()) {
            self.together.clear();
        }
    }

    /// Makes the slots of the calls that run together: every call from the first unanswered
    /// one on, unless a resumed step made them.
    pub(super) fn run_together(&mut self) {
        if self.together.is_empty() {
            self.together = (self.results.len()..self.calls).map(|_| Together::new()).collect();
        }
    }

    /// What is known of each call after the answered first ones.
    fn rest(&mut self) -> Vec<Unfinished> {
        if !self.together.is_empty() {
            return mem::take(&mut self.together).into_iter().map(Together::unfinished).collect();
        }
        // The call run alone: the one after the answered ones.
        vec![Unfinished { result: self.ran.take(), reached: *self.reached.get_mut() }]
    }

    /// Appends the step to the log; `reason` answers the calls that did not run (all ran, when
    /// the step ended well).
    pub(super) fn append(mut self, turn: &mut Turn, reason: &str) {
        self.appended = true;
        let message = mem::take(&mut self.message);
        let mut results = mem::take(&mut self.results);
        if results.len() < self.calls {
            let rest = self.rest();
            answer_the_rest(&message, &mut results, rest, reason);
        }
        append_step(turn, message, results);
    }

    /// Leaves the step in the log as it stands, `waiting` — its calls that wait for a
    /// person, in call order — waiting for their answers; the others answered.
    #[cold]
    pub(super) fn suspend(mut self, turn: &mut Turn, mut waiting: Vec<PendingApproval>) {
        self.appended = true;
        let mut results = mem::take(&mut self.results);
        for mut call in mem::take(&mut self.together) {
            results.extend(call.result_mut().take());
        }
        let pending = waiting.remove(0);
        let suspension = Suspension {
            pending,
            also_waiting: waiting,
            message: mem::take(&mut self.message),
            results,
            state: turn.state(),
        };
        turn.append(Entry::Suspended { turn: turn.turn_ref(), suspension: Box::new(suspension) });
    }
}

impl<K: Keep> Drop for StepInFlight<'_, K> {
    fn drop(&mut self) {
        if !self.appended {
            let rest = self.rest();
            let pending = PendingStep {
                message: mem::take(&mut self.message),
                results: mem::take(&mut self.results),
                rest,
            };
            *lock(self.slot) = Some(Box::new(pending));
        }
    }
}

/// Marks a call as having reached its tool.
pub(super) fn reach(call: &AtomicBool) {
    call.store(true, Ordering::Release);
}
