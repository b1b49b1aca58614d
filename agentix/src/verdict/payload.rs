//! What a verdict carries: the feedback of a RETRY, the reason of a REJECT, an ESCALATE or a
//! HALT. Data: the log and the errors hold them.

use std::fmt;

use serde::{Deserialize, Serialize};

/// What a RETRY tells the model about its rejected message.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Feedback {
    /// Sent to the model, after its rejected message, as a user message; `None` sends nothing.
    pub text: Option<String>,
}

impl Feedback {
    /// Feedback with text.
    pub fn new(text: impl Into<String>) -> Self {
        Feedback { text: Some(text.into()) }
    }
}

/// Why a `before_tool` hook refused a call.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rejection {
    /// The model reads this as the call's result.
    pub reason: String,
}

/// Why a `before_tool` hook wants the approver to look at a call.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Escalation {
    /// Shown to the approver.
    pub reason: String,
}

/// Why a hook ended the turn.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Halt {
    /// The reason, for the caller and the log.
    pub reason: String,
    /// Whether the hook failed (returned an error) rather than decided to halt.
    pub failed: bool,
}

impl Halt {
    /// A deliberate halt.
    pub fn new(reason: impl Into<String>) -> Self {
        Halt { reason: reason.into(), failed: false }
    }

    /// A halt because the hook failed.
    pub fn failure(error: impl fmt::Display) -> Self {
        Halt { reason: error.to_string(), failed: true }
    }
}
