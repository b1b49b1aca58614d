//! What an escalated call's review leaves: the approver's answer, the call that waits, the
//! step a suspended turn stood at. Data: the log keeps them.

use serde::{Deserialize, Serialize};

use crate::message::{AssistantMessage, Injection, ToolCall, ToolResult};
use crate::model::request::Usage;

/// The approver's answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Approval {
    /// Run the call as it is.
    Approve,
    /// Do not run it; the model reads the reason.
    Reject(String),
    /// Run this call instead, under the id of the call it replaces; the log records it as the
    /// call.
    Edit(ToolCall),
    /// Nobody can answer now — a person will, maybe from another process after a restart: the
    /// turn stops at this call. The log ends with the step as it stood
    /// ([`Entry::Suspended`](crate::Entry::Suspended)), the run returns
    /// [`Error::AwaitingApproval`](crate::Error::AwaitingApproval), and
    /// [`Agent::resume`](crate::Agent::resume) goes on from the call with the person's answer.
    /// `post` runs once, when the resumed turn ends. A session's task cannot wait across runs:
    /// there, this answer rejects the call (observers hear the approver's `Suspend`, then the
    /// call's rejection).
    Suspend,
}

impl Approval {
    /// This answer, given by `who` (a user's id, an operator's): the log records them beside it.
    ///
    /// ```
    /// use agentix::approval::{Answer, Approval};
    ///
    /// let answer: Answer = Approval::Approve.by("alice");
    /// assert_eq!(answer.by.as_deref(), Some("alice"));
    /// ```
    pub fn by(self, who: impl Into<String>) -> Answer {
        Answer { approval: self, by: Some(who.into()) }
    }
}

/// A person's answer to the call a suspended turn waits on, and who gave it: what
/// [`Agent::resume`](crate::Agent::resume) goes on with. The log records both
/// ([`Entry::Resumed`](crate::Entry::Resumed)), so that who approved the refund stays known. An
/// [`Approval`] alone is an answer from nobody named.
#[derive(Clone, Debug, PartialEq)]
pub struct Answer {
    /// The answer.
    pub approval: Approval,
    /// Who gave it, if the caller knows: a served agent passes the subject that decided.
    pub by: Option<String>,
}

impl From<Approval> for Answer {
    fn from(approval: Approval) -> Answer {
        Answer { approval, by: None }
    }
}

/// A tool call that waits for a person's answer, in a suspended turn.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PendingApproval {
    /// The call, as the `before_tool` hooks left it: what runs if it is approved.
    pub call: ToolCall,
    /// The `before_tool` hook that escalated it.
    pub hook: String,
    /// Why it escalated.
    pub reason: String,
}

/// What a running tool asks of a person (an MCP server's elicitation), escalated to the
/// approver ([`Approver::review_question`](crate::approval::Approver::review_question)) while the call
/// waits.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Question {
    /// Who asks: the tool's source, as errors and observers name it.
    pub asked_by: String,
    /// The question, for a person.
    pub message: String,
    /// The JSON schema the answer must match (an object's).
    pub schema: serde_json::Value,
}

/// A turn stopped at a tool call waiting for approval: the step as it stood, and what the turn
/// had counted, so that resuming it goes on exactly there — no model call made again, no
/// finished tool call run again.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Suspension {
    /// The call that waits: the one a resumption answers.
    pub pending: PendingApproval,
    /// The step's other calls that wait for a person, in call order: a resumption that
    /// answers `pending` suspends the turn again at the first of them, without asking the
    /// approver again, until each has its own answer.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub also_waiting: Vec<PendingApproval>,
    /// The step's assistant message, its calls as the `before_tool` hooks left them.
    pub message: AssistantMessage,
    /// The results of the step's calls that have one — refused, or run beside the waiting
    /// ones — in call order. A resumption does not run these again.
    pub results: Vec<ToolResult>,
    /// The turn's counters and injections.
    #[serde(flatten)]
    pub(crate) state: TurnState,
}

/// What a turn had counted when it was suspended.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct TurnState {
    pub(crate) step: u32,
    pub(crate) retries: u32,
    #[serde(default)]
    pub(crate) injections: Vec<Injection>,
    #[serde(default)]
    pub(crate) usage: Usage,
    #[serde(default)]
    pub(crate) last_usage: Option<Usage>,
    #[serde(default)]
    pub(crate) committed: usize,
}
