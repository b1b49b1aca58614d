//! Rendering a step's request: the log, compacted to the budget, and what the turn adds.

use crate::approval::Approver;
use crate::support::caught;
use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::effects::Effects;
use crate::context::{DynSummarizer, MESSAGE_OVERHEAD, TokenCounter, Units};
use crate::conversation::Entry;
use crate::durable::JournalStep;
use crate::error::{Component, Error};
use crate::message::{Message, Part, Role};
use crate::model::{Model, ModelRequest};
use crate::pipeline::Pipeline;
use crate::tool::ToolSet;
use crate::transform::StreamTransformer;
use crate::turn::{StepTools, Turn};
use crate::verdict::Feedback;

use super::drive::Retry;
use super::{Agent, component_panicked};

impl<M: Model, T: ToolSet, P: Pipeline, A: Approver, X: StreamTransformer> Agent<M, T, P, A, X> {
    /// Renders the request for this step: `[system, history…, user message, durable output,
    /// injections, this turn's steps…, retry feedback]`. The prefix before the injections
    /// depends only on the log, never on what hooks inject this turn, so the provider's prompt
    /// cache holds across turns. Compaction drops the oldest earlier turns, then the oldest
    /// steps, whole, until the request fits `context_budget - injection_reserve`; with a
    /// summarizer, what it drops is replaced by a summary.
    pub(super) async fn render<D: Effects>(
        &self,
        turn: &mut Turn,
        retry: Option<&Retry>,
        effects: &D,
    ) -> Result<ModelRequest, Error> {
        let counter = &*self.settings.counter;
        let config = turn.config().clone();
        check_injections(turn, counter, config.injection_reserve)?;

        let mut feedback = Vec::new();
        if let Some(Retry { rejected, feedback: Feedback { text: Some(text) } }) = retry {
            // Its tool calls never ran: replaying them unanswered would be an invalid request.
            let said: Vec<Part> = rejected
                .content
                .iter()
                .filter(|part| !matches!(part, Part::ToolCall(_)))
                .cloned()
                .collect();
            if !said.is_empty() {
                feedback.push(Message { role: Role::Assistant, content: said });
            }
            feedback.push(Message::user(text.clone()));
        }
        let base = self.fixed_tokens(turn);
        let fixed =
            base + feedback.iter().map(|message| counter.count_message(message)).sum::<usize>();
        let target = config.compaction_target();

        // The log's tokens come from the ledger, each entry counted once; only what the
        // request keeps is rendered.
        let units = Units::of(turn.log(), turn.user_entry());
        turn.count_log(&self.settings.counter);
        // The plan of the request with the log from `floor` on, beside `fixed` tokens.
        let plan_from = |floor: usize, fixed: usize| {
            units.plan(turn.log(), turn.ledger(), floor, fixed, target)
        };
        // The log's latest summary stands in for the entries before its `through`.
        let (logged_floor, logged_summary) = match turn.ledger().summary() {
            Some(at) => match &turn.log()[at] {
                Entry::Summary { through, text, .. } => (*through, Some(text.clone())),
                _ => unreachable!("the ledger keeps the index of a summary"),
            },
            None => (0, None),
        };
        let summary_tokens = |summary: &Option<String>| {
            summary.as_deref().map_or(0, |text| counter.count_message(&summary_message(text)))
        };
        let (mut floor, mut summary) = (logged_floor, logged_summary);
        if let Some(summarizer) = &self.settings.summarizer {
            // What joins the log is decided on the log alone — not on this step's retry
            // feedback, which never joins it — and only for a request that can fit at all.
            // What the plan drops beyond the summary is folded into it; a summary takes room
            // too: while it makes more turns go, those are folded in as well. The floor only
            // rises, so this ends, and each message is summarized once.
            let least = plan_from(units.opening.start, fixed).1;
            let logged = |summary: &Option<String>| base + summary_tokens(summary);
            let mut plan = plan_from(floor, logged(&summary)).0;
            while least <= target && plan.history_from > floor {
                let dropped = floor..plan.history_from;
                let text =
                    summarize(turn, summarizer.as_ref(), summary.as_deref(), dropped, effects)
                        .await?;
                (floor, summary) = (plan.history_from, Some(text));
                plan = plan_from(floor, logged(&summary)).0;
            }
        }
        // The request: from the floor, with the summary (retry feedback may drop more turns,
        // for this request only).
        let (mut plan, mut total) = plan_from(floor, fixed + summary_tokens(&summary));
        if total > target && summary.is_some() {
            // Better the history without a summary than no request at all; nothing new joins
            // the log for it.
            (floor, summary) = (logged_floor, None);
            (plan, total) = plan_from(floor, fixed);
        }
        if total > target {
            return Err(Error::ContextOverflow { budget: target, size: total });
        }
        // A new summary joins the log only with the request that carries it.
        if floor > logged_floor
            && let Some(text) = &summary
        {
            let entry =
                Entry::Summary { turn: turn.turn_ref(), through: floor, text: text.clone() };
            turn.append(entry);
        }

        let log = turn.log();
        let rendered = |range: Range<usize>| log[range].iter().filter_map(Entry::to_message);
        // The earlier turns kept, the stable prefix the provider may cache, and the user
        // message; then everything the turn injected, durable or not, in the order it was
        // injected (the durable part is also in the log, for later turns); then the steps kept.
        let mut messages: Vec<Message> =
            summary.as_deref().map(summary_message).into_iter().collect();
        messages.extend(rendered(plan.history_from..units.opening.start));
        let history = messages.len();
        messages.extend(rendered(units.opening.clone()));
        if !turn.injections().is_empty() {
            let injected = turn.injections().iter().map(|injection| injection.part.clone());
            messages.push(Message { role: Role::User, content: injected.collect() });
        }
        messages.extend(rendered(plan.steps_from..log.len()));
        messages.extend(feedback);
        Ok(self.request(turn, messages, history))
    }

    /// The request of most steps, rendered without planning: when the step adds nothing to the
    /// log's messages (no injections, no retry feedback) and the log fits. `None` leaves the
    /// request to [`render`](Agent::render).
    pub(super) fn plain_request(
        &self,
        turn: &mut Turn,
        retry: Option<&Retry>,
    ) -> Option<ModelRequest> {
        if retry.is_some_and(|retry| retry.feedback.text.is_some()) || !turn.injections().is_empty()
        {
            return None;
        }
        let room = turn.config().compaction_target().checked_sub(self.fixed_tokens(turn))?;
        let (messages, history) = turn.render_within(room, &self.settings.counter)?;
        Some(self.request(turn, messages, history))
    }

    /// What the system prompt and the step's tool specs take of its request.
    #[inline(always)]
    fn fixed_tokens(&self, turn: &Turn) -> usize {
        if T::CHANGES
            && let Some(tools) = &turn.step_tools
        {
            return self.system_tokens + tools.tokens;
        }
        self.fixed_tokens
    }

    /// A request of `messages`, the first `history` of them earlier turns.
    pub(super) fn request(
        &self,
        turn: &Turn,
        messages: Vec<Message>,
        history: usize,
    ) -> ModelRequest {
        let tools = if T::CHANGES
            && let Some(tools) = &turn.step_tools
        {
            tools.specs.clone()
        } else {
            self.tool_specs.clone()
        };
        ModelRequest {
            system: self.settings.system.clone(),
            messages,
            tools,
            model: self.settings.model_name.clone(),
            params: self.settings.params.clone(),
            history,
        }
    }
}

impl<M: Model, T: ToolSet, P: Pipeline, A: Approver, X: StreamTransformer> Agent<M, T, P, A, X> {
    /// Reads the tools this step offers from a set whose list can change: at the step's first
    /// request (its retries keep them), again only if the set's generation moved. Through the
    /// journal, if the turn has one: a replay offers what the step offered when it first ran.
    pub(super) async fn read_tools<D: Effects>(
        &self,
        turn: &mut Turn,
        effects: &D,
    ) -> Result<(), Error> {
        let step = turn.step();
        let kept = turn.step_tools.clone();
        if kept.as_ref().is_some_and(|tools| tools.step == step) {
            return Ok(());
        }
        let generation = self.tools.generation();
        let unchanged = kept.as_ref().is_some_and(|tools| tools.generation == Some(generation));
        // Whether this run read the list, rather than a replay returning it: a replayed list
        // is read again at the next step, not taken for the set's current one.
        let read_live = AtomicBool::new(false);
        let read = async {
            read_live.store(true, Ordering::Relaxed);
            (!unchanged).then(|| {
                let mut specs = Vec::new();
                self.tools.specs(&mut specs);
                specs
            })
        };
        let specs = if D::JOURNALS {
            let journal_step = JournalStep::Tools { turn: turn.turn_ref(), step };
            effects.rarely(journal_step, Box::pin(read)).await.map_err(Error::Journal)?
        } else {
            read.await
        };
        let generation = read_live.load(Ordering::Relaxed).then_some(generation);
        let tools = match (specs, kept) {
            (None, Some(kept)) => StepTools { step, generation, ..StepTools::clone(&kept) },
            (specs, _) => {
                let specs = specs.unwrap_or_else(|| {
                    let mut specs = Vec::new();
                    self.tools.specs(&mut specs);
                    specs
                });
                let counter = &*self.settings.counter;
                let tokens = specs.iter().map(|spec| counter.count_tool(spec)).sum();
                StepTools { step, generation, specs: specs.into(), tokens }
            }
        };
        turn.step_tools = Some(Arc::new(tools));
        Ok(())
    }
}

/// Fails the turn when what hooks injected is over the reserve, naming the hook whose content
/// crossed it: nothing is truncated.
#[inline]
pub(super) fn check_injections(
    turn: &Turn,
    counter: &dyn TokenCounter,
    reserve: usize,
) -> Result<(), Error> {
    if turn.injections().is_empty() {
        return Ok(());
    }
    count_injections(turn, counter, reserve)
}

fn count_injections(turn: &Turn, counter: &dyn TokenCounter, reserve: usize) -> Result<(), Error> {
    let mut size = MESSAGE_OVERHEAD;
    let mut offender = None;
    for injection in turn.injections() {
        size += counter.count_part(&injection.part);
        if size > reserve && offender.is_none() {
            offender = Some(match &injection.hook {
                // A running turn's injections are its hooks', named at compile time.
                std::borrow::Cow::Borrowed(hook) => *hook,
                // Only a turn read back with serde has others, and the agent never runs one.
                std::borrow::Cow::Owned(_) => "(a hook of a deserialized turn)",
            });
        }
    }
    match offender {
        None => Ok(()),
        Some(hook) => Err(Error::InjectionOverflow { hook, reserve, size }),
    }
}

/// The message a summary reaches the model as.
fn summary_message(text: &str) -> Message {
    Message::user(format!("Summary of the earlier conversation: {text}"))
}

/// `earlier`, the summary so far, with the messages of the log's `dropped` entries folded in.
/// A panic in the summarizer ends the turn, naming it.
async fn summarize<D: Effects>(
    turn: &Turn,
    summarizer: &dyn DynSummarizer,
    earlier: Option<&str>,
    dropped: Range<usize>,
    effects: &D,
) -> Result<String, Error> {
    let through = dropped.end;
    let dropped: Vec<Message> = turn.log()[dropped].iter().filter_map(Entry::to_message).collect();
    if D::JOURNALS {
        // Through the journal: a replay does not summarize again.
        let step = JournalStep::Summary { turn: turn.turn_ref(), through };
        let summary = || effects.rarely(step, summarizer.summarize_boxed(earlier, &dropped, turn));
        return match caught(summary).await {
            Ok(summary) => summary.map_err(Error::Journal),
            Err(payload) => Err(component_panicked(Component::Summarizer, payload)),
        };
    }
    caught(|| summarizer.summarize_boxed(earlier, &dropped, turn))
        .await
        .map_err(|payload| component_panicked(Component::Summarizer, payload))
}
