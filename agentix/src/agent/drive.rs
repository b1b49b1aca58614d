//! The turn's loop: `pre`, then steps until a final answer, then `before_final`.

use crate::Outcome;
use crate::approval::{Approval, Approver, Suspension};
use crate::conversation::Entry;
use crate::error::{Component, Error};
use crate::event::{BeforeFinal, EventKind, Pre};
use crate::message::AssistantMessage;
use crate::model::{Model, Usage};
use crate::observe::{Observation, Observer, Watched};
use crate::pipeline::{Answering, Flow, Pipeline, node::Chain};
use crate::support::{caught, panic_message};
use crate::tool::ToolSet;
use crate::transform::StreamTransformer;
use crate::turn::Turn;
use crate::verdict::Feedback;

use super::TurnGate;
use super::chains::handles;
use super::effects::Effects;
use super::render::check_injections;
use super::step::StepSlot;
use super::tool_call::{Answer, Resumed};
use super::{Agent, commit_step, fire, halted};
use crate::durable::{JournalError, JournalStep};

impl<M: Model, T: ToolSet, P: Pipeline, A: Approver, X: StreamTransformer> Agent<M, T, P, A, X> {
    pub(super) async fn drive<O: Observer, G: TurnGate, K: Effects>(
        &self,
        turn: &mut Turn,
        slot: &StepSlot,
        observer: &Watched<'_, O>,
        gate: &G,
        effects: &K,
        resume: Option<Box<Resume>>,
    ) -> Outcome {
        let limit = turn.max_steps();
        // A suspended turn goes on from its waiting call (`pre` ran before it was suspended):
        // the first step's tools run with what they had, and the answer to that call.
        let mut resume = resume;
        if K::JOURNALS {
            opened_as_recorded(effects, turn, resume.as_deref()).await?;
        }
        if resume.is_none() {
            // The opening: `pre`, then its content in the turn and its durable output committed.
            fire(observer, turn, EventKind::Pre);
            let flow = run_chain!(self, turn, observer, Pre, pre / pre_in_place());
            self.opened(turn, flow)?;
            if K::COMMITS {
                commit_step(effects, turn).await?;
            }
            // Each step starts here or after the previous step's tools: checked against the
            // limit, then its `step_start` hooks. A retry calls the model again within its step.
            if limit == 0 {
                return Err(Error::StepLimit { limit });
            }
            if G::GATES {
                self.step_start(turn, observer, gate).await?;
            }
        }
        let mut retry: Option<Retry> = None;
        'steps: loop {
            // The step's model call, to a message calling tools; a final answer returns.
            let (message, resumed) = 'model: {
                if let Some(resumed) = resume.take() {
                    let Resume { suspension, approval } = *resumed;
                    let Suspension { pending, also_waiting, message, results, .. } = suspension;
                    let answer =
                        Box::new(Answer { call: pending.call.id, hook: pending.hook, approval });
                    let resumed = Resumed { results, answer, waiting: also_waiting };
                    break 'model (message, Some(Box::new(resumed)));
                }
                // An observer that panicked ends the turn before the next model call.
                observer.failed()?;
                // The turn was handed to another agent: its answer is the step's message, in
                // place of the model's.
                let handed = if T::HANDS_OFF { turn.take_handoff() } else { None };
                let mut message = match handed {
                    Some(answer) => {
                        turn.record_usage(Usage::default(), None);
                        answer
                    }
                    // A handed answer sent back (a RETRY) goes to this agent's model: within
                    // the step limit, which let the handed answer through.
                    None if T::HANDS_OFF && turn.step >= limit => {
                        return Err(Error::StepLimit { limit });
                    }
                    None => self.model_message(turn, retry.as_ref(), observer, effects).await?,
                };

                fire(observer, turn, EventKind::AfterModel);
                let mut answer = match run_chain!(
                    self,
                    turn,
                    observer,
                    AfterModel,
                    after_model / after_model_in_place(&mut message)
                ) {
                    Flow::Continue if message.calls_tools() => break 'model (message, None),
                    Flow::Continue => message,
                    Flow::Stop { hook, value } => final_answer(EventKind::AfterModel, hook, value)?,
                    Flow::Retry { hook, feedback } => {
                        let withdrawn = Observation::Withdrawn {
                            event: EventKind::AfterModel,
                            hook: Some(hook),
                        };
                        observer.observe(&withdrawn);
                        retry =
                            Some(Retry::new(turn, EventKind::AfterModel, hook, message, feedback)?);
                        continue 'steps;
                    }
                    Flow::Halt { hook, halt } => {
                        return Err(halted(EventKind::AfterModel, hook, halt));
                    }
                    Flow::Failed { hook, failure } => {
                        return Err(failure.error(EventKind::AfterModel, hook));
                    }
                };

                // The final answer: `before_final`, then the answer in the log and committed.
                fire(observer, turn, EventKind::BeforeFinal);
                let flow = run_chain!(
                    self,
                    turn,
                    observer,
                    BeforeFinal,
                    before_final / before_final_in_place(&mut answer)
                );
                if let Some(again) = self.settled(turn, observer, flow, &mut answer)? {
                    retry = Some(again);
                    continue 'steps;
                }
                turn.append(Entry::Assistant { turn: turn.turn_ref(), message: answer.clone() });
                if K::COMMITS {
                    commit_step(effects, turn).await?;
                }
                return Ok(answer);
            };
            self.run_tools(message, resumed, turn, slot, observer, effects).await?;
            // The step's tools are done and the step is in the log: it is committed, counted
            // against the limit, and the next step's `step_start` hooks run.
            if K::COMMITS {
                commit_step(effects, turn).await?;
            }
            turn.step += 1;
            // An answer handed back needs no model call: the limit does not stop it.
            if turn.step >= limit && !(T::HANDS_OFF && turn.handed_off()) {
                return Err(Error::StepLimit { limit });
            }
            // A step that only takes an answer handed back makes no model call to gate.
            if G::GATES && !(T::HANDS_OFF && turn.handed_off()) {
                observer.failed()?;
                self.step_start(turn, observer, gate).await?;
            }
            retry = None;
        }
    }
}

impl<M: Model, T: ToolSet, P: Pipeline, A: Approver, X: StreamTransformer> Agent<M, T, P, A, X> {
    /// The step's model call: its request rendered, `before_model` (a STOP answers in the
    /// model's place), the call; the message it answered with, or the turn's error.
    async fn model_message<O: Observer, K: Effects>(
        &self,
        turn: &mut Turn,
        retry: Option<&Retry>,
        observer: &Watched<'_, O>,
        effects: &K,
    ) -> Result<AssistantMessage, Error> {
        // What panics in rendering but the summarizer (whose panic it names) is the token
        // counter: the turn's guard names it.
        turn.running_component = Some(Component::TokenCounter);
        if T::CHANGES {
            // Boxed: a fixed tool set's turn carries no room for it.
            Box::pin(self.read_tools(turn, effects)).await?;
        }
        let mut request = match self.plain_request(turn, retry) {
            Some(request) => request,
            None => self.render(turn, retry, effects).await?,
        };
        turn.running_component = None;
        fire(observer, turn, EventKind::BeforeModel);
        let message = match run_chain!(
            self,
            turn,
            observer,
            BeforeModel,
            before_model / before_model_in_place(&mut request)
        ) {
            // The first step's call, with tripwires beside it: an agent without any compiles
            // this out.
            Flow::Continue
                if handles(self.hooks.chain(), EventKind::Tripwire)
                    && turn.step == 0
                    && retry.is_none() =>
            {
                let guarded = self.call_beside_tripwires(&request, turn, observer, effects);
                let (response, spent) = Box::pin(guarded).await?;
                turn.record_usage(spent, response.as_ref().ok().map(|answer| answer.usage));
                response?.message
            }
            Flow::Continue => {
                let (response, spent) = self.call_model(&request, turn, observer, effects).await;
                turn.record_usage(spent, response.as_ref().ok().map(|answer| answer.usage));
                response?.message
            }
            Flow::Stop { hook, value } => {
                turn.record_usage(Usage::default(), None);
                stopped_with(hook, value)?
            }
            Flow::Halt { hook, halt } => {
                return Err(halted(EventKind::BeforeModel, hook, halt));
            }
            Flow::Failed { hook, failure } => {
                return Err(failure.error(EventKind::BeforeModel, hook));
            }
        };
        Ok(message)
    }

    /// What `pre` decided, settled: its content checked against the injection reserve and its
    /// durable output in the log, or the turn's error.
    #[inline(always)]
    fn opened(&self, turn: &mut Turn, flow: Flow<Pre>) -> Result<(), Error> {
        match flow {
            Flow::Continue => {
                let reserve = turn.config().injection_reserve;
                turn.running_component = Some(Component::TokenCounter);
                check_injections(turn, &*self.settings.counter, reserve)?;
                turn.running_component = None;
                turn.log_durable(EventKind::Pre);
                Ok(())
            }
            Flow::Halt { hook, halt } => Err(halted(EventKind::Pre, hook, halt)),
            Flow::Failed { hook, failure } => Err(failure.error(EventKind::Pre, hook)),
        }
    }

    /// What `before_final` decided about `answer`, settled: the final answer checked (a RETRY,
    /// its provisional answer withdrawn, is returned to run the step again), or the turn's error.
    #[inline(always)]
    fn settled<O: Observer>(
        &self,
        turn: &mut Turn,
        observer: &Watched<'_, O>,
        flow: Flow<BeforeFinal>,
        answer: &mut AssistantMessage,
    ) -> Result<Option<Retry>, Error> {
        match flow {
            Flow::Continue => {}
            Flow::Stop { hook, value } => {
                *answer = final_answer(EventKind::BeforeFinal, hook, value)?
            }
            Flow::Retry { hook, feedback } => {
                observer.observe(&Observation::Withdrawn {
                    event: EventKind::BeforeFinal,
                    hook: Some(hook),
                });
                let rejected = std::mem::take(answer);
                let retry = Retry::new(turn, EventKind::BeforeFinal, hook, rejected, feedback)?;
                return Ok(Some(retry));
            }
            Flow::Halt { hook, halt } => return Err(halted(EventKind::BeforeFinal, hook, halt)),
            Flow::Failed { hook, failure } => {
                return Err(failure.error(EventKind::BeforeFinal, hook));
            }
        }
        // A hook edited tool calls into the answer: committing it would leave them unanswered.
        // (Without `before_final` hooks, the answer is as `after_model` left it: checked.)
        if handles(self.hooks.chain(), EventKind::BeforeFinal) {
            *answer =
                final_answer(EventKind::BeforeFinal, "before_final chain", std::mem::take(answer))?;
        }
        if <P::Answering as Answering>::CHECKS
            && let Err(why) = self.hooks.answering().check(answer)
        {
            return self.refused_answer(turn, observer, answer, why).map(Some);
        }
        if answer.is_empty() && !turn.config().allow_empty_answers {
            return Err(Error::EmptyAnswer);
        }
        Ok(None)
    }

    /// A final answer that did not read as the agent's output type (or that a validator
    /// refused): sent back to the model with `why`, as a RETRY is — or, past the
    /// conversation's `max_retries`, the turn's error, with the answer as the model wrote it.
    #[cold]
    fn refused_answer<O: Observer>(
        &self,
        turn: &mut Turn,
        observer: &Watched<'_, O>,
        answer: &mut AssistantMessage,
        why: String,
    ) -> Result<Retry, Error> {
        if turn.retries >= turn.config().max_retries {
            let raw = answer.joined_text().into_owned();
            return Err(Error::InvalidAnswer { raw, error: why });
        }
        let hook = ANSWER_CHECK;
        observer
            .observe(&Observation::Withdrawn { event: EventKind::BeforeFinal, hook: Some(hook) });
        let feedback = Feedback::new(format!(
            "That answer was refused: {why}. Answer again with JSON only, matching the schema."
        ));
        let rejected = std::mem::take(answer);
        Retry::new(turn, EventKind::BeforeFinal, hook, rejected, feedback)
    }

    /// A session's `step_start` hooks, before a task's step: REJECT, a turned-down ESCALATE,
    /// HALT and a hook's failure end the turn before its model call.
    async fn step_start<O: Observer, G: TurnGate>(
        &self,
        turn: &mut Turn,
        observer: &Watched<'_, O>,
        gate: &G,
    ) -> Result<(), Error> {
        const EVENT: EventKind = EventKind::StepStart;
        match gate.step_start(turn, observer).await {
            Flow::Continue => Ok(()),
            Flow::Reject { hook, rejection } => {
                Err(Error::Rejected { event: EVENT, hook, reason: rejection.reason })
            }
            Flow::Escalate { hook, escalation } => {
                let review = caught(|| self.approver.review_step(&escalation, turn)).await;
                let approval = review.unwrap_or_else(|payload| {
                    Approval::Reject(format!(
                        "the approver panicked: {}",
                        panic_message(payload.as_ref())
                    ))
                });
                match approval {
                    Approval::Approve => Ok(()),
                    Approval::Reject(reason) => Err(Error::Rejected { event: EVENT, hook, reason }),
                    Approval::Edit(_) | Approval::Suspend => Err(Error::Rejected {
                        event: EVENT,
                        hook,
                        reason: "the approver answered with an edited tool call or a suspension; \
                                 a task's next model call can only be approved or rejected"
                            .to_owned(),
                    }),
                }
            }
            Flow::Halt { hook, halt } => Err(halted(EVENT, hook, halt)),
            Flow::Failed { hook, failure } => Err(failure.error(EVENT, hook)),
        }
    }
}

/// The message a `before_model` STOP put in the model's place, if the loop can log it.
fn stopped_with(hook: &'static str, message: AssistantMessage) -> Result<AssistantMessage, Error> {
    match message.duplicate_call_id() {
        None => Ok(message),
        Some(id) => Err(Error::HookFailed {
            event: EventKind::BeforeModel,
            hook,
            message: format!("it stopped with two tool calls under the id `{id}`"),
        }),
    }
}

fn final_answer(
    event: EventKind,
    hook: &'static str,
    answer: AssistantMessage,
) -> Result<AssistantMessage, Error> {
    if answer.calls_tools() { Err(Error::FinalCallsTools { event, hook }) } else { Ok(answer) }
}

/// A journaled turn's opening — its user message, or the answer it resumed with — as the
/// journal recorded it: replaying for another message, or with another answer, diverges here.
#[cold]
async fn opened_as_recorded<K: Effects>(
    effects: &K,
    turn: &Turn,
    resume: Option<&Resume>,
) -> Result<(), Error> {
    let (step, value) = match resume {
        None => (
            JournalStep::Opened { turn: turn.turn_ref() },
            serde_json::to_value(turn.user_message()),
        ),
        Some(resume) => (
            JournalStep::Resumed {
                turn: turn.turn_ref(),
                call: &resume.suspension.pending.call.id,
            },
            serde_json::to_value(&resume.approval),
        ),
    };
    let value = value.unwrap_or_default();
    let recorded = effects.rarely(step, Box::pin(std::future::ready(value.clone())));
    let recorded = recorded.await.map_err(Error::Journal)?;
    if recorded != value {
        return Err(Error::Journal(JournalError::Diverged {
            recorded: format!("{step} with {recorded}"),
            asked: format!("{step} with {value}"),
        }));
    }
    Ok(())
}

/// What a suspended turn resumes with: the step as it stood, and the answer to its waiting call.
pub(super) struct Resume {
    pub(super) suspension: Suspension,
    pub(super) approval: Approval,
}

/// A RETRY being acted on: the next request shows the model its rejected message and the
/// feedback. Neither joins the log.
pub(super) struct Retry {
    pub(super) rejected: AssistantMessage,
    pub(super) feedback: Feedback,
}

/// Who sends a final answer back when it does not read as the agent's output type, as the
/// observers and the retry's record name it.
pub(super) const ANSWER_CHECK: &str = "the answer's check";

impl Retry {
    fn new(
        turn: &mut Turn,
        event: EventKind,
        hook: &'static str,
        rejected: AssistantMessage,
        feedback: Feedback,
    ) -> Result<Self, Error> {
        let limit = turn.config().max_retries;
        if turn.retries >= limit {
            return Err(Error::RetryLimit { event, hook, limit });
        }
        turn.retries += 1;
        Ok(Retry { rejected, feedback })
    }
}
