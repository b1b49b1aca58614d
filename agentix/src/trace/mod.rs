//! Traces: the spans and events a turn reports through [`tracing`], named and attributed as
//! OpenTelemetry's GenAI semantic conventions name them, so that any subscriber — a log, or
//! `tracing-opentelemetry` to Jaeger, Tempo, Honeycomb, Datadog or Langfuse — sees the turn as
//! it runs. `agentix-otel` derives the conventions' metrics from them.
//!
//! | span (target `agentix`, level INFO) | OpenTelemetry name | covers |
//! |---|---|---|
//! | `invoke_workflow` | `invoke_workflow {session}` | a session's run |
//! | `plan` | `plan {title}` | an accepted plan, to its last task's end |
//! | `invoke_agent` | `invoke_agent {agent}` | a turn (a resumption is a turn span of its own) |
//! | `chat` | `chat {model}` | one call of the model, each retry of a `wrap_model` hook its own |
//! | `execute_tool` | `execute_tool {tool}` | one call of a tool, each retry of a `wrap_tool` hook its own |
//!
//! Hooks' decisions, the approver's answers and withdrawn answers are events on the turn's
//! span (`agentix.event`, `agentix.hook`, `agentix.decision`); a session's hooks' and events on
//! its run's. A call a journal replays was not made again: it has no span; one cut short (a
//! trip, a timeout, a dropped turn) ends `cancelled`. Messages, arguments, results — and error
//! messages and hooks' reasons, which may quote them — are recorded only when
//! [`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`](CAPTURE_CONTENT) is `true`.
//!
//! Nobody listening costs nothing but a check: with no subscriber, or one that leaves the
//! `agentix` target's INFO out, the turn's span is disabled and nothing under it is built.

mod content;
mod events;
mod kinds;
mod provider;
mod spans;
mod within;

pub use provider::{ProviderDetails, in_model_call, record_provider_details};

pub(crate) use events::{observed, worth_an_event};
pub(crate) use spans::{
    RunSpan, TurnTrace, chat_ended, chat_span, first_chunk, plan_ended, plan_span, tool_ended,
    tool_span, turn_cancelled, turn_ended, turn_span, workflow_ended, workflow_span,
};
pub(crate) use within::{Spanned, Within};

/// The target of every span and event agentix reports: filter on it
/// (`agentix=info`).
pub const TARGET: &str = "agentix";

/// The environment variable that lets spans carry content — the messages sent and answered,
/// a tool call's arguments and result — when it is `true` (the GenAI conventions' own switch).
/// Read once, at the first turn that is traced.
pub const CAPTURE_CONTENT: &str = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT";

/// Whether anyone listens to agentix's spans: a subscriber that takes the `agentix` target at
/// INFO. Without one a turn opens no span, and nothing under it is traced.
#[inline]
pub(crate) fn listening() -> bool {
    tracing::enabled!(target: TARGET, tracing::Level::INFO)
}

/// Whether spans carry content: [`CAPTURE_CONTENT`] is `true` (any case).
pub fn captures_content() -> bool {
    static CAPTURES: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *CAPTURES.get_or_init(|| {
        std::env::var(CAPTURE_CONTENT).is_ok_and(|value| value.eq_ignore_ascii_case("true"))
    })
}
