//! The `error.type` of what failed: a short, stable name per kind of failure, as the
//! conventions ask (low cardinality: never the message) — a provider's HTTP status as its code.

use std::borrow::Cow;

use crate::error::Error;
use crate::message::ToolFailure;
use crate::model::ModelError;

/// A model call's failure.
pub(super) fn model_error(error: &ModelError) -> Cow<'static, str> {
    Cow::Borrowed(match error {
        ModelError::ScriptExhausted { .. } => "script_exhausted",
        ModelError::Transport(_) => "transport",
        ModelError::Provider { status, .. } => return Cow::Owned(status.to_string()),
        ModelError::InvalidResponse { .. } => "invalid_response",
        ModelError::Refused { .. } => "refused",
        ModelError::TimedOut { .. } => "timeout",
        ModelError::DuplicateCallId { .. } => "duplicate_call_id",
        ModelError::Aborted => "aborted",
        ModelError::Other(_) => "_OTHER",
    })
}

/// A tool call's failure.
pub(super) fn tool_failure(failure: &ToolFailure) -> Cow<'static, str> {
    Cow::Borrowed(match failure {
        ToolFailure::UnknownTool { .. } => "unknown_tool",
        ToolFailure::InvalidArguments { .. } => "invalid_arguments",
        ToolFailure::Failed { .. } => "tool_error",
        ToolFailure::Panicked { .. } => "panicked",
        ToolFailure::TimedOut { .. } => "timeout",
        ToolFailure::Rejected { .. } => "rejected",
        ToolFailure::NotRun { .. } => "not_run",
        ToolFailure::Interrupted { .. } => "interrupted",
        ToolFailure::Withheld { .. } => "withheld",
    })
}

/// A turn's or a session's failure.
pub(super) fn error(error: &Error) -> Cow<'static, str> {
    Cow::Borrowed(match error {
        Error::Halted { .. } => "halted",
        Error::Tripped { .. } => "tripped",
        Error::Rejected { .. } => "rejected",
        Error::FollowUpLimit { .. } => "follow_up_limit",
        Error::AwaitingApproval { .. } => "awaiting_approval",
        Error::Journal(_) => "journal",
        Error::CannotResume { .. } => "cannot_resume",
        Error::SessionEnded => "session_ended",
        Error::HookFailed { .. } => "hook_failed",
        Error::HookPanicked { .. } => "hook_panicked",
        Error::HookTimedOut { .. } => "hook_timeout",
        Error::TurnTimedOut { .. } => "timeout",
        Error::RetryLimit { .. } => "retry_limit",
        Error::InvalidAnswer { .. } => "invalid_answer",
        Error::StepLimit { .. } => "step_limit",
        Error::FinalCallsTools { .. } => "final_calls_tools",
        Error::InjectionOverflow { .. } => "injection_overflow",
        Error::ContextOverflow { .. } => "context_overflow",
        Error::Model(error) => return model_error(error),
        Error::Commit(_) => "commit",
        Error::ComponentPanicked { .. } => "component_panicked",
        Error::InvalidMessage { .. } => "invalid_message",
        Error::EmptyAnswer => "empty_answer",
    })
}
