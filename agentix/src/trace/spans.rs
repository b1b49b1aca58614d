//! The spans and events themselves. Each span declares every attribute it may carry (those known
//! later as `Empty`, recorded when known); `otel.name`, `otel.kind`, `otel.status_code` and
//! `otel.status_description` are the fields `tracing-opentelemetry` turns into the span's name,
//! kind and status. Counts are recorded signed: unsigned ones would be exported as text.

use std::time::Instant;

use tracing::Span;
use tracing::field::Empty;

use super::{TARGET, captures_content, content, kinds};
use crate::Outcome;
use crate::approval::record::Approval;
use crate::conversation::TurnRef;
use crate::error::Error;
use crate::message::{Message, ToolCall, ToolResult};
use crate::model::{ModelError, ModelRequest, ModelResponse, Usage};
use crate::observe::{Decision, Observation};
use crate::task::{PlanId, PlanProgress, SessionEvent};

/// The span of a turn: `invoke_agent {agent}`, a child of the span current where the turn
/// runs (a tool call's, for a sub-agent's turn; a plan's, for a session's task).
pub(crate) fn turn_span(
    agent: Option<&str>,
    provider: &str,
    model: Option<&str>,
    conversation: Option<&str>,
    turn: TurnRef,
    opening: Option<&Message>,
) -> Span {
    let span = tracing::info_span!(
        target: TARGET,
        "invoke_agent",
        "otel.name" = %Named("invoke_agent", agent),
        "otel.kind" = "internal",
        "otel.status_code" = Empty,
        "otel.status_description" = Empty,
        "gen_ai.operation.name" = "invoke_agent",
        "gen_ai.agent.name" = agent,
        "gen_ai.provider.name" = provider,
        "gen_ai.request.model" = model,
        "gen_ai.conversation.id" = conversation,
        "agentix.turn" = int(turn.0),
        "agentix.resumed" = opening.is_none(),
        "agentix.awaiting_approval" = Empty,
        "gen_ai.usage.input_tokens" = Empty,
        "gen_ai.usage.output_tokens" = Empty,
        "gen_ai.usage.cache_read.input_tokens" = Empty,
        "gen_ai.usage.cache_creation.input_tokens" = Empty,
        "error.type" = Empty,
        "gen_ai.input.messages" = Empty,
        "gen_ai.output.messages" = Empty,
    );
    if let Some(message) = opening
        && !span.is_disabled()
        && captures_content()
    {
        span.record("gen_ai.input.messages", content::messages(std::slice::from_ref(message)));
    }
    span
}

/// Records how the turn ended — or stopped to wait for an approval — and what it cost.
pub(crate) fn turn_ended(span: &Span, outcome: &Outcome, usage: Usage) {
    if span.is_disabled() {
        return;
    }
    record_usage(span, usage);
    match outcome {
        Ok(answer) if captures_content() => {
            span.record("gen_ai.output.messages", content::answer(answer));
        }
        Ok(_) => {}
        // Not a failure: the turn goes on when it is resumed, in a span of its own.
        Err(Error::AwaitingApproval { .. }) => {
            span.record("agentix.awaiting_approval", true);
        }
        Err(error) => failed(span, kinds::error(error), error),
    }
}

/// Records that the turn was dropped before it ended (the log says so too).
pub(crate) fn turn_cancelled(span: &Span, reason: &str) {
    failed(span, "cancelled", &reason);
}

/// The span of one call of the model, under the turn's: `chat {model}`. `attempt` counts the
/// step's calls (a `wrap_model` hook's retries, or a retry the answer's hooks asked for).
#[allow(clippy::too_many_arguments)]
pub(crate) fn chat_span(
    parent: &Span,
    provider: &str,
    model: Option<&str>,
    request: &ModelRequest,
    conversation: Option<&str>,
    streams: bool,
    step: u32,
    attempt: u32,
) -> Span {
    let params = &request.params;
    let output = if params.output.is_some() { "json" } else { "text" };
    let span = tracing::info_span!(
        target: TARGET,
        parent: parent,
        "chat",
        "otel.name" = %Named("chat", model),
        "otel.kind" = "client",
        "otel.status_code" = Empty,
        "otel.status_description" = Empty,
        "gen_ai.operation.name" = "chat",
        "gen_ai.provider.name" = provider,
        "gen_ai.request.model" = model,
        "gen_ai.conversation.id" = conversation,
        "gen_ai.request.stream" = streams,
        "gen_ai.request.temperature" = params.temperature.map(f64::from),
        "gen_ai.request.max_tokens" = params.max_tokens.map(i64::from),
        "gen_ai.output.type" = output,
        "agentix.step" = i64::from(step),
        "agentix.attempt" = i64::from(attempt),
        "server.address" = Empty,
        "server.port" = Empty,
        "gen_ai.response.id" = Empty,
        "gen_ai.response.model" = Empty,
        "gen_ai.response.finish_reasons" = Empty,
        "gen_ai.response.time_to_first_chunk" = Empty,
        "gen_ai.usage.input_tokens" = Empty,
        "gen_ai.usage.output_tokens" = Empty,
        "gen_ai.usage.cache_read.input_tokens" = Empty,
        "gen_ai.usage.cache_creation.input_tokens" = Empty,
        "error.type" = Empty,
        "gen_ai.system_instructions" = Empty,
        "gen_ai.input.messages" = Empty,
        "gen_ai.output.messages" = Empty,
        "gen_ai.tool.definitions" = Empty,
    );
    if !span.is_disabled() && captures_content() {
        if let Some(system) = &request.system {
            span.record("gen_ai.system_instructions", content::system(system));
        }
        span.record("gen_ai.input.messages", content::messages(&request.messages));
        if !request.tools.is_empty() {
            span.record("gen_ai.tool.definitions", content::tools(&request.tools));
        }
    }
    span
}

/// Records the first chunk of a streamed answer: how long it took to come.
pub(crate) fn first_chunk(span: &Span, started: Instant) {
    span.record("gen_ai.response.time_to_first_chunk", started.elapsed().as_secs_f64());
}

/// Records how a model call ended: its usage, or how it failed.
pub(crate) fn chat_ended(span: &Span, result: &Result<ModelResponse, ModelError>) {
    if span.is_disabled() {
        return;
    }
    match result {
        Ok(response) => {
            record_usage(span, response.usage);
            if captures_content() {
                span.record("gen_ai.output.messages", content::answer(&response.message));
            }
        }
        Err(error) => failed(span, kinds::model_error(error), error),
    }
}

/// The span of one call of a tool, under the turn's: `execute_tool {tool}`. `attempt` counts
/// the call's attempts (a `wrap_tool` hook's retries).
pub(crate) fn tool_span(parent: &Span, call: &ToolCall, attempt: u32) -> Span {
    let span = tracing::info_span!(
        target: TARGET,
        parent: parent,
        "execute_tool",
        "otel.name" = %Named("execute_tool", Some(&call.name)),
        "otel.kind" = "internal",
        "otel.status_code" = Empty,
        "otel.status_description" = Empty,
        "gen_ai.operation.name" = "execute_tool",
        "gen_ai.tool.name" = call.name.as_str(),
        "gen_ai.tool.call.id" = call.id.as_str(),
        "gen_ai.tool.type" = "function",
        "agentix.attempt" = i64::from(attempt),
        "error.type" = Empty,
        "gen_ai.tool.call.arguments" = Empty,
        "gen_ai.tool.call.result" = Empty,
    );
    if !span.is_disabled() && captures_content() {
        span.record("gen_ai.tool.call.arguments", call.arguments.to_string());
    }
    span
}

/// Records how a tool call ended: its result, or how it failed.
pub(crate) fn tool_ended(span: &Span, result: &ToolResult) {
    if span.is_disabled() {
        return;
    }
    match &result.error {
        None if captures_content() => {
            span.record("gen_ai.tool.call.result", result.output.as_str());
        }
        None => {}
        Some(failure) => failed(span, kinds::tool_failure(failure), failure),
    }
}

/// The span of a session's run: `invoke_workflow {session}`.
pub(crate) fn workflow_span(name: Option<&str>, conversation: Option<&str>) -> Option<Span> {
    if !super::listening() {
        return None;
    }
    let span = tracing::info_span!(
        target: TARGET,
        "invoke_workflow",
        "otel.name" = %Named("invoke_workflow", name),
        "otel.kind" = "internal",
        "otel.status_code" = Empty,
        "otel.status_description" = Empty,
        "gen_ai.operation.name" = "invoke_workflow",
        "gen_ai.workflow.name" = name,
        "gen_ai.conversation.id" = conversation,
        "agentix.tasks.ended" = Empty,
        "error.type" = Empty,
    );
    Some(span).filter(|span| !span.is_disabled())
}

/// Records how a session's run ended.
pub(crate) fn workflow_ended(span: &Span, result: &Result<Vec<crate::task::TaskReport>, Error>) {
    if span.is_disabled() {
        return;
    }
    match result {
        Ok(reports) => {
            span.record("agentix.tasks.ended", int(reports.len()));
        }
        Err(error) => failed(span, kinds::error(error), error),
    }
}

/// The span of an accepted plan, under the session's run: `plan {title}` (or `plan {id}`), from its acceptance
/// to its last task's end. Its tasks' turns are its children.
pub(crate) fn plan_span(parent: &Span, plan: PlanId, title: Option<&str>, tasks: u32) -> Span {
    tracing::info_span!(
        target: TARGET,
        parent: parent,
        "plan",
        "otel.name" = %Named("plan", Some(title.map_or_else(|| plan.get().to_string(), str::to_owned))),
        "otel.kind" = "internal",
        "agentix.plan.id" = int(plan.get()),
        "agentix.plan.title" = title,
        "agentix.plan.tasks" = i64::from(tasks),
        "agentix.plan.succeeded" = Empty,
    )
}

/// Records how many of the plan's tasks succeeded.
pub(crate) fn plan_ended(span: &Span, progress: &PlanProgress) {
    if !span.is_disabled() {
        span.record("agentix.plan.succeeded", i64::from(progress.succeeded));
    }
}

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

/// An observation worth an event on the span it happened under: a hook's decision, the
/// approver's answer (to an escalated call, or to what a running tool asked), a withdrawn
/// answer, an event of a session. Out of line: the hook's
/// chain it is reported from stays small enough to inline.
#[cold]
#[inline(never)]
pub(crate) fn observed(span: &Span, observation: &Observation<'_>) {
    match observation {
        Observation::Hook { event, hook, decision } => {
            let (word, reason) = decided(decision);
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
        Observation::Session(event) => session_event(span, event),
        _ => {}
    }
}

fn session_event(span: &Span, event: &SessionEvent) {
    tracing::info!(target: TARGET, parent: span, { "agentix.session.event" = %event }, "agentix.session");
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

fn record_usage(span: &Span, usage: Usage) {
    span.record("gen_ai.usage.input_tokens", i64::from(usage.input_tokens));
    span.record("gen_ai.usage.output_tokens", i64::from(usage.output_tokens));
    span.record("gen_ai.usage.cache_read.input_tokens", i64::from(usage.cache_read_tokens));
    span.record("gen_ai.usage.cache_creation.input_tokens", i64::from(usage.cache_write_tokens));
}

/// A count as a signed integer: `tracing-opentelemetry` exports unsigned ones as text.
fn int(count: impl TryInto<i64>) -> i64 {
    count.try_into().unwrap_or(i64::MAX)
}

fn failed(span: &Span, kind: &'static str, error: &dyn std::fmt::Display) {
    span.record("error.type", kind);
    span.record("otel.status_code", "error");
    span.record("otel.status_description", tracing::field::display(error));
}

/// `operation {name}`, or the operation alone when there is no name.
struct Named<N>(&'static str, Option<N>);

impl<N: std::fmt::Display> std::fmt::Display for Named<N> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.1 {
            Some(name) => write!(f, "{} {name}", self.0),
            None => f.write_str(self.0),
        }
    }
}

/// What only the provider knows of a model call — where it went, the answer's id and model,
/// why it stopped — for the loop's `chat` span. A [`Model`](crate::Model) records it with
/// [`record_provider_details`] while it answers.
#[derive(Clone, Copy, Debug, Default)]
pub struct ProviderDetails<'a> {
    /// The server's host (`server.address`).
    pub server_address: Option<&'a str>,
    /// The server's port (`server.port`).
    pub server_port: Option<u16>,
    /// The answer's id (`gen_ai.response.id`).
    pub response_id: Option<&'a str>,
    /// The model that answered, as the provider names it (`gen_ai.response.model`).
    pub response_model: Option<&'a str>,
    /// Why the model stopped, in the provider's words (`gen_ai.response.finish_reasons`).
    pub finish_reasons: &'a [&'a str],
}

/// Records `details` on the model call in progress: the loop's `chat` span, current while a
/// [`Model`](crate::Model) answers. Outside one — a model called by hand — it does nothing, so
/// a provider never opens a second span for the same call.
pub fn record_provider_details(details: &ProviderDetails<'_>) {
    let span = Span::current();
    if !is_model_call(&span) {
        return;
    }
    let ProviderDetails { server_address, server_port, response_id, response_model, .. } = *details;
    if let Some(address) = server_address {
        span.record("server.address", address);
    }
    if let Some(port) = server_port {
        span.record("server.port", i64::from(port));
    }
    if let Some(id) = response_id {
        span.record("gen_ai.response.id", id);
    }
    if let Some(model) = response_model {
        span.record("gen_ai.response.model", model);
    }
    if !details.finish_reasons.is_empty() {
        let reasons = serde_json::to_string(details.finish_reasons).unwrap_or_default();
        span.record("gen_ai.response.finish_reasons", reasons);
    }
}

/// Whether the span current here is the loop's span of a model call, traced: a
/// [`Model`](crate::Model) asks before it works out details to
/// [record](record_provider_details).
pub fn in_model_call() -> bool {
    is_model_call(&Span::current())
}

fn is_model_call(span: &Span) -> bool {
    !span.is_disabled()
        && span.metadata().is_some_and(|meta| meta.target() == TARGET && meta.name() == "chat")
}
