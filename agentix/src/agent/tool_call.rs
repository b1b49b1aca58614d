//! Running a step's tool calls: `before_tool`, the `wrap_tool` onion, `after_tool` or
//! `tool_error`, and committing the step.

use std::mem;

use crate::approval::{Approval, Approver};
use crate::conversation::Entry;
use crate::error::Error;
use crate::event::EventKind;
use crate::hook::NextTool;
use crate::message::{AssistantMessage, Part, ToolCall, ToolFailure, ToolResult};
use crate::model::Model;
use crate::observe::{Observation, Observer};
use crate::pipeline::{Chain, Flow, Pipeline, not_run};
use crate::tool::ToolSet;
use crate::transform::StreamTransformer;
use crate::turn::Turn;
use crate::verdict::Halt;
use crate::{caught, panic_message};

use super::{Agent, fire, halted, panicked};

impl<M: Model, T: ToolSet, P: Pipeline, A: Approver, X: StreamTransformer> Agent<M, T, P, A, X> {
    /// Runs the step's tool calls in order and commits the step — the assistant message with one
    /// result per call — even when the turn ends midway, so the log never holds an unanswered call.
    /// `before_tool` hooks (and an approver) edit each call in place: the log records each call
    /// as they left it, so every result answers the call written beside it.
    pub(super) async fn run_tools<O: Observer>(
        &self,
        mut message: AssistantMessage,
        turn: &mut Turn,
        observer: &O,
    ) -> Result<(), Error> {
        let mut results = Vec::with_capacity(message.tool_calls().count());
        let mut interruption = None;
        let calls = message.content.iter_mut().filter_map(|part| match part {
            Part::ToolCall(call) => Some(call),
            _ => None,
        });
        for call in calls {
            if let Err(error) = self.run_tool_call(call, &mut results, turn, observer).await {
                interruption = Some(error);
                break;
            }
        }
        if let Some(error) = &interruption {
            for call in message.tool_calls().skip(results.len()) {
                results.push(ToolResult::failure(
                    call,
                    ToolFailure::NotRun { reason: error.to_string() },
                ));
            }
        }
        let turn_ref = turn.turn_ref();
        turn.append(Entry::Assistant { turn: turn_ref, message });
        turn.append(Entry::ToolResults { turn: turn_ref, results });
        interruption.map_or(Ok(()), Err)
    }

    /// Runs one call and pushes its result onto `results` (where the `after_tool` and
    /// `tool_error` hooks then edit it: the result is not moved again). An error ends the turn;
    /// the call has a result if the tool ran.
    pub(super) async fn run_tool_call<O: Observer>(
        &self,
        call: &mut ToolCall,
        results: &mut Vec<ToolResult>,
        turn: &mut Turn,
        observer: &O,
    ) -> Result<(), Error> {
        fire(observer, turn, EventKind::BeforeTool);
        let refusal = match run_guarded_chain!(
            self,
            turn,
            observer,
            BeforeTool,
            before_tool / before_tool_in_place(call)
        ) {
            Flow::Continue => None,
            Flow::Reject { hook, rejection } => Some((hook.to_owned(), rejection.reason)),
            Flow::Escalate { hook, escalation } => {
                let review = caught(|| self.approver.review(call, &escalation, turn)).await;
                let approval = review.unwrap_or_else(|payload| {
                    Approval::Reject(format!(
                        "the approver panicked: {}",
                        panic_message(payload.as_ref())
                    ))
                });
                observer.observe(&Observation::Approval { hook, call, approval: &approval });
                match approval {
                    Approval::Approve => None,
                    Approval::Edit(edited) => {
                        let id = mem::take(&mut call.id);
                        *call = ToolCall { id, ..edited };
                        None
                    }
                    Approval::Reject(reason) => {
                        Some((format!("the approver, on escalation by {hook}"), reason))
                    }
                }
            }
            Flow::Halt { hook, halt } => return Err(halted(EventKind::BeforeTool, hook, halt)),
            Flow::Panicked { hook, message } => {
                return Err(panicked(EventKind::BeforeTool, hook, message));
            }
        };
        if let Some((by, reason)) = refusal {
            results.push(ToolResult::failure(call, ToolFailure::Rejected { by, reason }));
            return Ok(());
        }

        fire(observer, turn, EventKind::WrapTool);
        let tool = CallTool { tools: &self.tools, names: &self.tool_names, turn };
        let result = self.hooks.tool_onion(turn, observer, tool).call(call).await;
        if let Some(aborted) = turn.aborted.get() {
            return Err(panicked(aborted.event, aborted.hook, aborted.message.clone()));
        }
        results.push(result);
        let Some(result) = results.last_mut() else { unreachable!("a result was just pushed") };

        let (event, end) = if result.is_error() {
            fire(observer, turn, EventKind::ToolError);
            let flow = run_guarded_chain!(
                self,
                turn,
                observer,
                ToolError,
                tool_error / tool_error_in_place(result)
            );
            (EventKind::ToolError, flow.into_end())
        } else {
            fire(observer, turn, EventKind::AfterTool);
            let flow = run_guarded_chain!(
                self,
                turn,
                observer,
                AfterTool,
                after_tool / after_tool_in_place(result)
            );
            (EventKind::AfterTool, flow.into_end())
        };
        answer_the_call(call, result);
        observer.observe(&Observation::ToolFinished { result });
        match end {
            None => Ok(()),
            Some(End::Halt { hook, halt }) => Err(halted(event, hook, halt)),
            Some(End::Panicked { hook, message }) => Err(panicked(event, hook, message)),
        }
    }
}

/// The result answers the call that ran, whatever id and name a `wrap_tool`, `after_tool` or
/// `tool_error` hook gave it: the log pairs every call with its result by id.
fn answer_the_call(call: &ToolCall, result: &mut ToolResult) {
    if result.call_id != call.id {
        result.call_id.clone_from(&call.id);
    }
    if result.name != call.name {
        result.name.clone_from(&call.name);
    }
}

/// How a chain of hooks that can only continue or end the turn ended it.
enum End {
    Halt { hook: &'static str, halt: Halt },
    Panicked { hook: &'static str, message: String },
}

trait IntoEnd {
    fn into_end(self) -> Option<End>;
}

macro_rules! into_end {
    ($($event:ident),*) => {$(
        impl IntoEnd for Flow<crate::event::$event> {
            fn into_end(self) -> Option<End> {
                match self {
                    Flow::Continue => None,
                    Flow::Halt { hook, halt } => Some(End::Halt { hook, halt }),
                    Flow::Panicked { hook, message } => Some(End::Panicked { hook, message }),
                }
            }
        }
    )*};
}

into_end!(AfterTool, ToolError);

/// The innermost `next` of the `wrap_tool` chain: the tool set.
struct CallTool<'a, T> {
    tools: &'a T,
    names: &'a [String],
    turn: &'a Turn,
}

impl<T: ToolSet> NextTool for CallTool<'_, T> {
    async fn call(&self, call: &ToolCall) -> ToolResult {
        if self.turn.aborted.get().is_some() {
            return not_run(call);
        }
        match caught(|| self.tools.call(call, self.turn)).await {
            Ok(Some(result)) => result,
            Ok(None) => ToolResult::failure(
                call,
                ToolFailure::UnknownTool { available: self.names.to_vec() },
            ),
            Err(payload) => {
                let message = panic_message(payload.as_ref());
                ToolResult::failure(call, ToolFailure::Panicked { message })
            }
        }
    }
}
