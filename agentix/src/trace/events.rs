//! What happens inside a span, as its events: each hook's decision, the approver's answers, an
//! answer withdrawn, a session's events. What may quote content — a reason, a refusal, the
//! feedback sent back — only when content is captured.

use tracing::Span;

use super::{TARGET, captures_content};
use crate::approval::record::Approval;
use crate::observe::{Decision, Observation};

/// Whether `observation` is one [`observed`] makes an event of: a constant where the
/// observation is made, so that an event fired costs no check.
#[inline(always)]
pub(crate) fn worth_an_event(observation: &Observation<'_>) -> bool {
    matches!(
        observation,
        Observation::Hook { .. }
            | Observation::Approval { .. }
            | Observation::Question { .. }
            | Observation::Withdrawn { .. }
            | Observation::Session(_)
    )
}

/// An observation worth an event on the span it happened under. Out of line: the hook's
/// chain it is reported from stays small enough to inline.
#[cold]
#[inline(never)]
pub(crate) fn observed(span: &Span, observation: &Observation<'_>) {
    match observation {
        Observation::Hook { event, hook, decision } => {
            let (word, reason) = decided(decision);
            let reason = reason.filter(|_| captures_content());
            tracing::info!(
                target: TARGET,
                parent: span,
                {
                    "agentix.event" = %event,
                    "agentix.hook" = *hook,
                    "agentix.decision" = word,
                    "agentix.reason" = reason,
                },
                "agentix.hook"
            );
        }
        Observation::Approval { hook, call, approval } => {
            tracing::info!(
                target: TARGET,
                parent: span,
                {
                    "agentix.hook" = *hook,
                    "gen_ai.tool.name" = call.name.as_str(),
                    "gen_ai.tool.call.id" = call.id.as_str(),
                    "agentix.approval" = approved(approval),
                },
                "agentix.approval"
            );
        }
        Observation::Question { call, question, approval } => {
            tracing::info!(
                target: TARGET,
                parent: span,
                {
                    "agentix.asked_by" = question.asked_by.as_str(),
                    "gen_ai.tool.name" = call.name.as_str(),
                    "gen_ai.tool.call.id" = call.id.as_str(),
                    "agentix.approval" = approved(approval),
                },
                "agentix.question"
            );
        }
        Observation::Withdrawn { event, hook } => {
            tracing::info!(
                target: TARGET,
                parent: span,
                {
                    "agentix.event" = %event,
                    "agentix.hook" = *hook,
                },
                "agentix.withdrawn"
            );
        }
        Observation::Session(event) => {
            tracing::info!(
                target: TARGET,
                parent: span,
                { "agentix.session.event" = %event },
                "agentix.session"
            );
        }
        _ => {}
    }
}

/// The approver's answer as one word.
fn approved(approval: &Approval) -> &'static str {
    match approval {
        Approval::Approve => "approve",
        Approval::Reject(_) => "reject",
        Approval::Edit(_) => "edit",
        Approval::Suspend => "suspend",
    }
}

/// A decision as one word, and the reason or feedback it carries.
fn decided<'a>(decision: &Decision<'a>) -> (&'static str, Option<&'a str>) {
    match *decision {
        Decision::Continue => ("continue", None),
        Decision::Stop => ("stop", None),
        Decision::Retry { feedback } => ("retry", feedback),
        Decision::Reject { reason } => ("reject", Some(reason)),
        Decision::Escalate { reason } => ("escalate", Some(reason)),
        Decision::Enqueue { .. } => ("enqueue", None),
        Decision::Halt { reason } => ("halt", Some(reason)),
        Decision::Tripped { reason } => ("tripped", Some(reason)),
        Decision::Parts { .. } => ("parts", None),
        Decision::Returned { ok: true } => ("returned", None),
        Decision::Returned { ok: false } => ("returned_error", None),
        Decision::Skipped => ("skipped", None),
        Decision::TimedOut { .. } => ("timed_out", None),
        Decision::Panicked { message } => ("panicked", Some(message)),
    }
}
