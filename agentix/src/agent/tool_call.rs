//! Running a step's tool calls: `before_tool`, the `wrap_tool` onion, `after_tool` or
//! `tool_error`, and committing the step.

use std::mem;
use std::time::Duration;

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use futures::future::Either;

use super::effects::{Effects, ErasedEffects};
use crate::approval::{Approval, Approver, PendingApproval, Question};
use crate::durable::{JournalDyn, JournalStep};
use crate::error::Error;
use crate::event::EventKind;
use crate::hook::NextTool;
use crate::message::{AssistantMessage, ToolCall, ToolFailure, ToolResult};
use crate::model::Model;
use crate::observe::{Observation, Observer};
use crate::pipeline::{
    Flow, HookFailure, Pipeline,
    node::{Chain, Keep},
    not_run,
};
use crate::support::{caught, panic_message};
use crate::tool::{Tool, ToolProgress, ToolRunner, ToolSet};
use crate::trace::{self, Spanned, TurnTrace};
use crate::transform::StreamTransformer;
use crate::turn::{InHand, Turn};
use crate::verdict::{Escalation, Halt};

use super::step::{StepInFlight, StepSlot, answer_the_call, answering, nth_call, reach};
use super::{Agent, fire, halted};

impl<M: Model, T: ToolSet, P: Pipeline, A: Approver, X: StreamTransformer> Agent<M, T, P, A, X> {
    /// Runs the step's tool calls and commits the step — the assistant message with one result
    /// per call — even when the turn ends midway, so the log never holds an unanswered call.
    /// `before_tool` hooks (and an approver) edit each call in place: the log records each call
    /// as they left it, so every result answers the call written beside it. While the calls
    /// run, the step is held by a guard that hands it to `slot` if the turn is dropped first.
    ///
    /// A step of one call decides, runs and settles it. A step of more runs them together
    /// (`run_together`): decided in call order, run at once, settled in call order.
    ///
    /// A suspended step goes on here too: `resumed` holds the results its calls had, and the
    /// answer to the call that waited. If the approver suspends a call, the step stays in the
    /// log as it stands, to resume.
    pub(super) async fn run_tools<O: Observer, D: Effects>(
        &self,
        message: AssistantMessage,
        resumed: Option<Box<Resumed>>,
        turn: &mut Turn,
        slot: &StepSlot,
        observer: &O,
        effects: &D,
    ) -> Result<(), Error> {
        let calls = message.tool_calls().count();
        let mut step = StepInFlight::<P::Kept>::new(slot, message, calls);
        let (answer, waiting) = match resumed {
            None => (None, Vec::new()),
            Some(resumed) => {
                let Resumed { results, answer, waiting } = *resumed;
                step.answered(results);
                (Some(answer), waiting)
            }
        };
        let ran = if step.together.is_empty() && calls - step.results.len() == 1 {
            let index = step.results.len();
            self.run_tool_call(index, &mut step, turn, observer, answer, effects).await
        } else {
            self.run_together(&mut step, answer, waiting, turn, observer, effects).await
        };
        if T::HAS_ORIGINS {
            turn.tool_origin = None;
        }
        match ran {
            Ok(waiting) if waiting.is_empty() => {
                step.append(turn, "");
                Ok(())
            }
            Ok(waiting) => {
                let pending = Box::new(waiting[0].clone());
                step.suspend(turn, waiting);
                Err(Error::AwaitingApproval { turn: turn.turn_ref(), pending })
            }
            Err(error) => {
                step.append(turn, &error.to_string());
                Err(error)
            }
        }
    }

    /// Runs the step's one call left, the `index`-th, and pushes its result onto the step's
    /// results (where the `after_tool` and `tool_error` hooks then edit it: the result is not
    /// moved again). An error ends the turn; the call has a result if the tool ran. The call
    /// waits for a person if the approver suspends it: it is returned, unanswered.
    async fn run_tool_call<O: Observer, D: Effects>(
        &self,
        index: usize,
        step: &mut StepInFlight<'_, P::Kept>,
        turn: &mut Turn,
        observer: &O,
        answered: Option<Box<Answer>>,
        effects: &D,
    ) -> Result<Vec<PendingApproval>, Error> {
        let StepInFlight { message, results, reached, ran, .. } = step;
        let call = nth_call(message, index);
        match self.decide(call, turn, observer, answered, effects).await? {
            Decided::Run => {}
            Decided::Refused { by, reason } => {
                results.push(ToolResult::failure(call, ToolFailure::Rejected { by, reason }));
                return Ok(Vec::new());
            }
            Decided::Waiting(pending) => return Ok(vec![*pending]),
        }
        // A `before_tool` hook may have renamed the call: its origin is the new name's.
        if T::HAS_ORIGINS {
            turn.tool_origin = self.tools.origin(&call.name);
        }

        fire(observer, turn, EventKind::WrapTool);
        // Wrap hooks may hold the tool's result after `next` returns: what ran is kept aside.
        let tool = self.next_tool(turn, &*ran, reached, observer, effects);
        let result = self.hooks.tool_onion(turn, observer, tool).call(call).await;
        let ran = ran.take();
        if let Some(aborted) = turn.aborted.get() {
            // The call ran if the tool set returned: it is logged with what it returned. With
            // no `wrap_tool` hook, that is what the onion returned.
            let result = if <P::Kept as Keep>::KEEPS { ran } else { Some(result) };
            let result = result.unwrap_or_else(|| {
                ToolResult::failure(call, ToolFailure::NotRun { reason: aborted.reason() })
            });
            results.push(answering(call, result));
            return Err(aborted.error());
        }
        results.push(result);
        let Some(result) = results.last_mut() else { unreachable!("a result was just pushed") };
        self.settle(call, result, turn, observer).await?;
        Ok(Vec::new())
    }

    /// What `before_tool` — or, for a call escalated before its turn was suspended, the
    /// answer to it (`answered`) — decides of `call`, which it may edit in place.
    pub(super) async fn decide<O: Observer, D: Effects>(
        &self,
        call: &mut ToolCall,
        turn: &mut Turn,
        observer: &O,
        answered: Option<Box<Answer>>,
        effects: &D,
    ) -> Result<Decided, Error> {
        if T::HAS_ORIGINS {
            turn.tool_origin = self.tools.origin(&call.name);
        }
        let Some(answer) = answered else {
            if <P::Chain as Chain>::PER_TOOL {
                turn.tool_in_hand =
                    self.tools.tool_id(&call.name).map_or(InHand::ByName, InHand::Tool);
            }
            fire(observer, turn, EventKind::BeforeTool);
            let ended = run_guarded_chain!(
                self,
                turn,
                observer,
                BeforeTool,
                before_tool / before_tool_in_place(call)
            );
            let Some(flow) = ended else { return Ok(Decided::Run) };
            // Moved out of its box: a pattern behind a pointer cannot leave out the variants
            // the event cannot have.
            let flow = *flow;
            return Ok(match flow {
                Flow::Continue => Decided::Run,
                Flow::Reject { hook, rejection } => {
                    Decided::Refused { by: hook.to_owned(), reason: rejection.reason }
                }
                Flow::Escalate { hook, escalation } => {
                    self.escalated(call, hook, escalation, turn, observer, effects).await?
                }
                // A guard that fails refuses the call: fail closed, and the turn goes on.
                Flow::Halt { hook, halt } if halt.failed => Decided::Refused {
                    by: hook.to_owned(),
                    reason: format!(
                        "the before_tool hook `{hook}` failed, so the call is refused: {}",
                        halt.reason
                    ),
                },
                Flow::Halt { hook, halt } => {
                    return Err(halted(EventKind::BeforeTool, hook, halt));
                }
                Flow::Failed { hook, failure } => Decided::Refused {
                    by: hook.to_owned(),
                    reason: format!(
                        "{}, so the call is refused",
                        failure.describe(EventKind::BeforeTool, hook)
                    ),
                },
            });
        };
        let Answer { hook, approval, .. } = *answer;
        observer.observe(&Observation::Approval { hook: &hook, call, approval: &approval });
        Ok(approved(call, &hook, approval))
    }

    /// The innermost `next` of the `wrap_tool` onion, for one call: the tool set, the call's
    /// result kept in `ran` as it returns.
    pub(super) fn next_tool<'a, O: Observer, D: Effects>(
        &'a self,
        turn: &'a Turn,
        ran: &'a P::Kept,
        reached: &'a AtomicBool,
        observer: &'a O,
        effects: &'a D,
    ) -> impl NextTool + 'a {
        CallTool {
            tools: &self.tools,
            names: &self.tool_names,
            turn,
            ran,
            reached,
            effects,
            attempts: AtomicU32::new(0),
            traced: AtomicU32::new(0),
            hooks: InCall {
                chain: self.hooks.chain(),
                observer,
                approver: &self.approver,
                tool_timeout: turn.config().tool_timeout,
                effects,
            },
        }
    }

    /// Runs the `after_tool` or `tool_error` hooks on the result of `call`, which then answers
    /// `call` whatever the hooks did to its id, and tells the observers the call finished.
    pub(super) async fn settle<O: Observer>(
        &self,
        call: &ToolCall,
        result: &mut ToolResult,
        turn: &mut Turn,
        observer: &O,
    ) -> Result<(), Error> {
        // What a hook that ended the chain left: kept boxed — one word — past the calls below.
        let (event, ended) = if result.is_error() {
            fire(observer, turn, EventKind::ToolError);
            let ended = run_guarded_chain!(
                self,
                turn,
                observer,
                ToolError,
                tool_error / tool_error_in_place(result)
            );
            (EventKind::ToolError, ended.map(|flow| Box::new(flow.into_end())))
        } else {
            fire(observer, turn, EventKind::AfterTool);
            let ended = run_guarded_chain!(
                self,
                turn,
                observer,
                AfterTool,
                after_tool / after_tool_in_place(result)
            );
            (EventKind::AfterTool, ended.map(|flow| Box::new(flow.into_end())))
        };
        answer_the_call(call, result);
        observer.observe(&Observation::ToolFinished { result });
        match ended.and_then(|end| *end) {
            None => Ok(()),
            Some(End::Halt { hook, halt }) => Err(halted(event, hook, halt)),
            Some(End::Failed { hook, failure }) => Err(failure.error(event, hook)),
        }
    }
}

impl<M: Model, T: ToolSet, P: Pipeline, A: Approver, X: StreamTransformer> Agent<M, T, P, A, X> {
    /// The approver's answer to a call `hook` escalated — through the journal, if the turn has
    /// one (a replay does not ask again) — and what it does to the call: `Some` refuses it, by
    /// whom and why. A suspension ends the turn, but in a session's task.
    async fn escalated<O: Observer, D: Effects>(
        &self,
        call: &mut ToolCall,
        hook: &'static str,
        escalation: Escalation,
        turn: &Turn,
        observer: &O,
        effects: &D,
    ) -> Result<Decided, Error> {
        let review = async {
            // A sub-agent's escalations go to its parent's approver.
            if D::DELEGATES_REVIEW {
                return effects.review(call, &escalation).await;
            }
            let review = caught(|| self.approver.review(call, &escalation, turn));
            review.await.unwrap_or_else(|payload| {
                Approval::Reject(format!(
                    "the approver panicked: {}",
                    panic_message(payload.as_ref())
                ))
            })
        };
        let approval = if D::JOURNALS {
            let step = JournalStep::Approval {
                turn: turn.turn_ref(),
                step: turn.step(),
                name: &call.name,
                call: &call.id,
            };
            let waiting = PendingApproval {
                call: call.clone(),
                hook: hook.to_owned(),
                reason: escalation.reason.clone(),
            };
            let review = effects.approval(step, &waiting, Box::pin(review));
            review.await.map_err(Error::Journal)?
        } else {
            review.await
        };
        observer.observe(&Observation::Approval { hook, call, approval: &approval });
        if approval == Approval::Suspend && !turn.runs_task() {
            let pending = PendingApproval {
                call: call.clone(),
                hook: hook.to_owned(),
                reason: escalation.reason,
            };
            return Ok(Decided::Waiting(Box::new(pending)));
        }
        Ok(approved(call, hook, approval))
    }
}

/// The answer to a call escalated before its turn was suspended: the call, and the hook that
/// escalated it.
pub(super) struct Answer {
    pub(super) call: String,
    pub(super) hook: String,
    pub(super) approval: Approval,
}

/// What a suspended step resumes with: the results its calls had, the answer to the call that
/// waited, and the step's other calls that still wait.
pub(super) struct Resumed {
    pub(super) results: Vec<ToolResult>,
    pub(super) answer: Box<Answer>,
    pub(super) waiting: Vec<PendingApproval>,
}

/// What the hooks (and an approver) decided of a call before it runs.
pub(super) enum Decided {
    /// It runs, as they left it.
    Run,
    /// It does not: refused by whom, and why.
    Refused { by: String, reason: String },
    /// It waits for a person's answer: the turn is suspended when the step's other calls are
    /// done.
    Waiting(Box<PendingApproval>),
}

/// What the approver's answer does to an escalated call: lets it run (edited, if the answer
/// says so), or refuses it — by whom, and why.
fn approved(call: &mut ToolCall, hook: &str, approval: Approval) -> Decided {
    let by = || format!("the approver, on escalation by {hook}");
    match approval {
        Approval::Approve => Decided::Run,
        Approval::Edit(edited) => {
            let id = mem::take(&mut call.id);
            *call = ToolCall { id, ..edited };
            Decided::Run
        }
        Approval::Reject(reason) => Decided::Refused { by: by(), reason },
        Approval::Suspend => Decided::Refused {
            by: by(),
            reason: "the approver suspended the call to wait for a person, and a session's task \
                     cannot wait across runs: refused"
                .to_owned(),
        },
    }
}

/// How a chain of hooks that can only continue or end the turn ended it.
enum End {
    Halt { hook: &'static str, halt: Halt },
    Failed { hook: &'static str, failure: HookFailure },
}

trait IntoEnd {
    fn into_end(self) -> Option<End>;
}

macro_rules! into_end {
    ($($event:ident),*) => {$(
        impl IntoEnd for Box<Flow<crate::event::$event>> {
            fn into_end(self) -> Option<End> {
                let flow = *self;
                match flow {
                    Flow::Continue => None,
                    Flow::Halt { hook, halt } => Some(End::Halt { hook, halt }),
                    Flow::Failed { hook, failure } => Some(End::Failed { hook, failure }),
                }
            }
        }
    )*};
}

into_end!(AfterTool, ToolError);

/// The journal a sub-agent's steps go through, inside the turn's.
#[cold]
fn nesting_journal<D: Effects>(effects: &D) -> Option<&dyn JournalDyn> {
    match effects.erased() {
        ErasedEffects::Journaled(journal, _) => Some(journal),
        _ => None,
    }
}

/// The innermost `next` of the `wrap_tool` chain: the tool set.
struct CallTool<'a, T, K, C, O, D, A> {
    tools: &'a T,
    names: &'a [String],
    turn: &'a Turn,
    /// Where each result the tool set returns is kept, while wrap hooks could lose it.
    ran: &'a K,
    /// Set when the tool set is called: a call cut before it was reached did not run.
    reached: &'a AtomicBool,
    /// Journals the call, if the turn has a journal.
    effects: &'a D,
    /// Attempts made through this `next`, for the journal's names.
    attempts: AtomicU32,
    /// Attempts traced through this `next`, for their spans' `agentix.attempt`.
    traced: AtomicU32,
    /// The per-tool `after_tool` and `tool_error` hooks, which the tool set runs.
    hooks: InCall<'a, C, O, A, D>,
}

/// The chain's per-tool `after_tool` and `tool_error` hooks, run inside a tool call, the
/// bound on the tool's own call, and who hears what the tool says while it runs.
struct InCall<'a, C, O, A, D> {
    chain: &'a C,
    observer: &'a O,
    approver: &'a A,
    tool_timeout: Option<Duration>,
    /// The turn's effects: a sub-agent's steps are journaled through its journal, what the
    /// sub-agent spends and asks goes on to the turn's own parent if it has one.
    effects: &'a D,
}

impl<C: Chain, O: Observer, A: Approver, D: Effects> ToolRunner for InCall<'_, C, O, A, D> {
    const STREAMS: bool = O::STREAMS;
    const SILENT: bool = O::SILENT;

    fn journal(&self) -> Option<&dyn JournalDyn> {
        if D::JOURNALS { nesting_journal(self.effects) } else { None }
    }

    fn spent(&self, turn: &Turn, usage: crate::model::Usage) {
        turn.add_delegated(usage);
        self.effects.delegated(usage);
    }

    async fn after_tool<U: Tool + 'static>(&self, output: &mut U::Output, turn: &Turn) {
        if C::OUTPUT_HOOKS {
            self.chain.after_tool_of::<U, O>(output, turn, self.observer).await;
        }
    }

    async fn tool_error<U: Tool + 'static>(&self, error: &mut U::Error, turn: &Turn) {
        if C::OUTPUT_HOOKS {
            self.chain.tool_error_of::<U, O>(error, turn, self.observer).await;
        }
    }

    async fn run_tool<F: Future + Send>(&self, call: F) -> Result<F::Output, Duration> {
        bounded!(self.tool_timeout, call)
    }

    fn progress(&self, call: &ToolCall, progress: &ToolProgress) {
        self.observer.observe(&Observation::ToolProgress { call, progress });
    }

    fn nested(&self, call: &ToolCall, agent: &str, observation: &Observation<'_>) {
        self.observer.observe(&Observation::Nested { agent, call, observation });
    }

    async fn review_nested(
        &self,
        nested: &ToolCall,
        escalation: &Escalation,
        turn: &Turn,
    ) -> Approval {
        // A sub-agent's sub-agent asks the approver at the top.
        if D::DELEGATES_REVIEW {
            return self.effects.review(nested, escalation).await;
        }
        let review = caught(|| self.approver.review(nested, escalation, turn));
        review.await.unwrap_or_else(|payload| {
            Approval::Reject(format!("the approver panicked: {}", panic_message(payload.as_ref())))
        })
    }

    async fn question(&self, call: &ToolCall, question: &Question, turn: &Turn) -> Approval {
        let review = caught(|| self.approver.review_question(call, question, turn));
        let approval = review.await.unwrap_or_else(|payload| {
            Approval::Reject(format!("the approver panicked: {}", panic_message(payload.as_ref())))
        });
        self.observer.observe(&Observation::Question { call, question, approval: &approval });
        approval
    }
}

impl<T: ToolSet, K: Keep, C: Chain, O: Observer, D: Effects, A: Approver> NextTool
    for CallTool<'_, T, K, C, O, D, A>
{
    async fn call(&self, call: &ToolCall) -> ToolResult {
        if self.turn.aborted.get().is_some() {
            return not_run(call);
        }
        reach(self.reached);
        // The tool set bounds the tool's own call (`InCall::run_tool`), not the hooks on it.
        // Through the journal, if the turn has one: a replay returns the result recorded (and
        // opens no span).
        let traced = self.turn.trace.as_deref();
        let run = || {
            let open = traced.map(|turn| move || self.tool_span(turn, call));
            let result = self.tools.call_hooked(call, self.turn, &self.hooks);
            let result = Spanned::new(traced, Some(&call.id), open, result);
            // A sub-agent's call journals its turn's steps inside: it is not one step itself.
            if D::JOURNALS && T::NESTS && self.tools.nests(&call.name) {
                Either::Left(result)
            } else {
                Either::Right(self.effects.tool(&self.attempts, self.turn, call, result))
            }
        };
        let result = match caught(run).await {
            Ok(Some(result)) => result,
            Ok(None) => {
                let available = match &self.turn.step_tools {
                    Some(tools) if T::CHANGES => {
                        tools.specs.iter().map(|spec| spec.name.clone()).collect()
                    }
                    _ => self.names.to_vec(),
                };
                ToolResult::failure(call, ToolFailure::UnknownTool { available })
            }
            Err(payload) => ToolResult::panicked(call, payload.as_ref()),
        };
        if let Some(turn) = traced
            && let Some(span) = turn.end(Some(&call.id))
        {
            trace::tool_ended(&span, &result);
        }
        self.ran.keep(&result);
        result
    }

    fn idempotent(&self, name: &str) -> bool {
        self.tools.idempotent(name)
    }
}

impl<T: ToolSet, K: Keep, C: Chain, O: Observer, D: Effects, A: Approver>
    CallTool<'_, T, K, C, O, D, A>
{
    /// The span of one call of a tool (`execute_tool`), under the turn's: a sub-agent's turn,
    /// and whatever the tool reports, nest under it.
    #[cold]
    fn tool_span(&self, turn: &TurnTrace, call: &ToolCall) -> tracing::Span {
        let attempt = self.traced.fetch_add(1, Ordering::Relaxed) + 1;
        trace::tool_span(turn, call, attempt)
    }
}
