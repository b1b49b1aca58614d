//! Rendering a step's request: the log, compacted to the budget, and what the turn adds.

use crate::approval::Approver;
use crate::caught;
use crate::context::{MESSAGE_OVERHEAD, Summarizer, TokenCounter, Units};
use crate::conversation::Entry;
use crate::error::{Component, Error};
use crate::message::{Message, Part, Role};
use crate::model::{Model, ModelRequest};
use crate::pipeline::Pipeline;
use crate::tool::ToolSet;
use crate::transform::StreamTransformer;
use crate::turn::Turn;
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
    pub(super) async fn render(
        &self,
        turn: &mut Turn,
        retry: Option<&Retry>,
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
        let fixed = self.fixed_tokens
            + feedback.iter().map(|message| counter.count_message(message)).sum::<usize>();
        let target = config.compaction_target();

        // Each entry rendered once: counted (if not yet this turn), then moved into the request.
        let rendered: Vec<Option<Message>> = turn.log().iter().map(Entry::to_message).collect();
        let units = Units::of(turn.log(), turn.user_entry());
        let mut total = fixed + turn.count_entries(&rendered, &units.durable, counter);
        let mut plan = units.keep_all();
        let mut summary = None;
        if total > target {
            turn.itemize_tokens(&rendered, counter);
            (plan, total) = units.plan(turn.log(), turn.entry_tokens(), fixed, target);
        }
        if let Some(summarizer) = &self.settings.summarizer {
            // A summary takes room too: while it makes more turns go, summarize those as well.
            // The dropped range only grows, so this ends.
            // The fixed tokens `total` was planned with: the previous round's summary counts in
            // it, and gives way to this round's.
            let mut planned_with = fixed;
            while !plan.dropped_history.is_empty() {
                let message =
                    summarize(turn, summarizer.as_ref(), plan.dropped_history.end).await?;
                let with_summary = fixed + counter.count_message(&message);
                let (next, next_total) =
                    units.plan(turn.log(), turn.entry_tokens(), with_summary, target);
                if next.dropped_history.end <= plan.dropped_history.end {
                    total = with_summary + (total - planned_with);
                    summary = Some(message);
                    break;
                }
                (plan, total, planned_with) = (next, next_total, with_summary);
            }
            if total > target && summary.take().is_some() {
                // Better the history without its summary than no request at all.
                (plan, total) = units.plan(turn.log(), turn.entry_tokens(), fixed, target);
            }
        }
        if total > target {
            return Err(Error::ContextOverflow { budget: target, size: total });
        }

        // The kept entries, collected in place of their rendering; then what is not in the log.
        let kept = |entry: usize| {
            (plan.dropped_history.end..units.opening.end).contains(&entry)
                || entry >= plan.dropped_steps.end
        };
        // The earlier turns kept, the stable prefix the provider may cache.
        let history =
            rendered[plan.dropped_history.end..units.opening.start].iter().flatten().count()
                + usize::from(summary.is_some());
        // Injections go right after the user message.
        let injected_at = (!turn.injections().is_empty()).then(|| {
            rendered[plan.dropped_history.end..units.opening.end].iter().flatten().count()
        });
        let mut messages: Vec<Message> = rendered
            .into_iter()
            .enumerate()
            .filter_map(|(entry, message)| message.filter(|_| kept(entry)))
            .collect();
        // Everything the turn injected, durable or not, in the order it was injected; the
        // durable part is also in the log, for later turns.
        if let Some(at) = injected_at {
            let injected = turn.injections().iter().map(|injection| injection.part.clone());
            messages.insert(at, Message { role: Role::User, content: injected.collect() });
        }
        if let Some(summary) = summary {
            messages.insert(0, summary);
        }
        messages.extend(feedback);
        Ok(self.request(messages, history))
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
        let room = turn.config().compaction_target().checked_sub(self.fixed_tokens)?;
        let (messages, history) = turn.render_within(room, &*self.settings.counter)?;
        Some(self.request(messages, history))
    }

    /// A request of `messages`, the first `history` of them earlier turns.
    pub(super) fn request(&self, messages: Vec<Message>, history: usize) -> ModelRequest {
        ModelRequest {
            system: self.settings.system.clone(),
            messages,
            tools: self.tool_specs.clone(),
            model: self.settings.model_name.clone(),
            params: self.settings.params.clone(),
            history,
        }
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

/// The summary of the earlier turns up to log index `end`, from the turn's cache when the same
/// turns were summarized for an earlier step.
/// A panic in the summarizer ends the turn, naming it.
async fn summarize(
    turn: &mut Turn,
    summarizer: &dyn Summarizer,
    end: usize,
) -> Result<Message, Error> {
    if let Some((cached, message)) = &turn.summary
        && *cached == end
    {
        return Ok(message.clone());
    }
    let dropped: Vec<Message> = turn.log()[..end].iter().filter_map(Entry::to_message).collect();
    let text = caught(|| summarizer.summarize(&dropped))
        .await
        .map_err(|payload| component_panicked(Component::Summarizer, payload))?;
    let message = Message::user(format!("Summary of the earlier conversation: {text}"));
    turn.summary = Some((end, message.clone()));
    Ok(message)
}
