//! Approval of escalated tool calls, at once or — suspended — from another process later.

use std::future::{Future, ready};

use crate::message::ToolCall;
use crate::turn::Turn;
use crate::verdict::Escalation;

pub(crate) mod record;

pub(crate) use record::TurnState;
pub use record::{Answer, Approval, PendingApproval, Question, Suspension};

/// Decides escalated tool calls: a person, a policy engine, a second model.
pub trait Approver: Send + Sync {
    /// Reviews one call that a `before_tool` hook escalated.
    fn review(
        &self,
        call: &ToolCall,
        escalation: &Escalation,
        turn: &Turn,
    ) -> impl Future<Output = Approval> + Send;

    /// Reviews a session task's next model call that a `step_start` hook escalated: approve it,
    /// or reject it (the task ends `rejected`). The default rejects: an approver written for
    /// tool calls approves nothing else.
    fn review_step(
        &self,
        escalation: &Escalation,
        turn: &Turn,
    ) -> impl Future<Output = Approval> + Send {
        let _ = turn;
        ready(Approval::Reject(format!(
            "escalated ({}), and the approver reviews tool calls only",
            escalation.reason
        )))
    }

    /// Reviews what the tool of the running `call` asks of a person (an MCP server's
    /// elicitation). `Edit` answers it, the edited call's arguments being the answer (an object
    /// matching `question.schema`); `Approve` accepts with nothing to add; `Reject` declines;
    /// `Suspend` cancels (a running call cannot wait across runs). The default declines: an
    /// approver written for tool calls answers nothing else.
    fn review_question(
        &self,
        call: &ToolCall,
        question: &Question,
        turn: &Turn,
    ) -> impl Future<Output = Approval> + Send {
        let _ = (call, turn);
        ready(Approval::Reject(format!(
            "{} asked \"{}\", and the approver answers no questions",
            question.asked_by, question.message
        )))
    }
}

/// The approver of an agent that has none: it rejects every escalation, so an escalated call
/// never runs unreviewed.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoApprover;

impl Approver for NoApprover {
    async fn review(&self, _call: &ToolCall, escalation: &Escalation, _turn: &Turn) -> Approval {
        Approval::Reject(format!(
            "escalated ({}), and no approver is configured",
            escalation.reason
        ))
    }
}

/// An async closure over owned copies of the call and the escalation.
impl<F, Fut> Approver for F
where
    F: Fn(ToolCall, Escalation) -> Fut + Send + Sync,
    Fut: Future<Output = Approval> + Send,
{
    fn review(
        &self,
        call: &ToolCall,
        escalation: &Escalation,
        _turn: &Turn,
    ) -> impl Future<Output = Approval> + Send {
        self(call.clone(), escalation.clone())
    }
}
