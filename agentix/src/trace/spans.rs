//! The spans and events themselves. Each span declares every attribute it may carry (those known
//! later as `Empty`, recorded when known); `otel.name`, `otel.kind`, `otel.status_code` and
//! `otel.status_description` are the fields `tracing-opentelemetry` turns into the span's name,
//! kind and status. Counts are recorded signed: unsigned ones would be exported as text.

use std::borrow::Cow;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use tracing::Span;
use tracing::field::Empty;

use super::{TARGET, captures_content, content, kinds};
use crate::conversation::TurnRef;
use crate::error::Error;
use crate::message::{Message, ToolCall, ToolResult};
use crate::model::{ModelError, ModelRequest, ModelResponse, Usage};
use crate::task::{PlanId, PlanProgress, TaskReport};
use crate::{Outcome, support::lock};

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

/// A traced turn: its span, and what the spans under it count. Shared (an `Arc`), so that a
/// turn that nobody traces carries one pointer for it.
#[derive(Debug)]
pub(crate) struct TurnTrace {
    pub(crate) span: Span,
    /// What the turn had spent when this part of it opened: a resumed turn's earlier part is
    /// its first span's.
    spent_before: Usage,
    /// The step whose model calls were counted last, and how many: each call's
    /// `agentix.attempt`, through a `wrap_model` hook's retries and the answer's hooks'.
    model_attempts: Mutex<(u32, u32)>,
    /// The spans of the calls under way, by call: the model's (`None`: the turn makes one at a
    /// time) and each tool call's (its id). Kept here, not in the calls' futures, so that an
    /// untraced call's future holds no span; one still here when the turn ends was cut short
    /// (a tripwire's trip, the turn's timeout, the turn dropped), and says so.
    calls: Mutex<Vec<(Option<String>, Span)>>,
}

impl TurnTrace {
    pub(crate) fn new(span: Span, spent_before: Usage) -> Self {
        let (model_attempts, calls) = (Mutex::default(), Mutex::default());
        TurnTrace { span, spent_before, model_attempts, calls }
    }

    /// Opens the span of `call` (`None`: the model's), as `make` makes it.
    pub(crate) fn open(&self, call: Option<&str>, make: impl FnOnce() -> Span) {
        let span = make();
        if !span.is_disabled() {
            lock(&self.calls).push((call.map(str::to_owned), span));
        }
    }

    /// The span of `call`, while it is under way.
    pub(crate) fn span_of(&self, call: Option<&str>) -> Option<Span> {
        let calls = lock(&self.calls);
        calls.iter().rev().find(|(open, _)| open.as_deref() == call).map(|(_, span)| span.clone())
    }

    /// Takes the span of `call` off the calls under way, its end about to be recorded.
    pub(crate) fn end(&self, call: Option<&str>) -> Option<Span> {
        let mut calls = lock(&self.calls);
        let at = calls.iter().rposition(|(open, _)| open.as_deref() == call)?;
        Some(calls.remove(at).1)
    }

    /// Ends the calls still under way as cut short.
    fn cut_short(&self) {
        for (_, call) in std::mem::take(&mut *lock(&self.calls)) {
            failed(&call, Cow::Borrowed("cancelled"), &"cut short before it ended");
        }
    }

    /// The number of `step`'s model call about to be traced: 1, then 2 for a retry.
    pub(crate) fn next_model_attempt(&self, step: u32) -> u32 {
        let mut attempts = lock(&self.model_attempts);
        let (counted, count) = &mut *attempts;
        if *counted != step {
            (*counted, *count) = (step, 0);
        }
        *count += 1;
        *count
    }
}

/// Records how the turn ended — or stopped to wait for an approval — and what this part of it
/// cost (`spent`: the turn's usage now).
pub(crate) fn turn_ended(trace: &TurnTrace, outcome: &Outcome, spent: Usage) {
    trace.cut_short();
    let span = &trace.span;
    record_usage(span, since(spent, trace.spent_before));
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

/// Records that the turn was dropped before it ended (the log says so too), and the calls it
/// cut short.
pub(crate) fn turn_cancelled(trace: &TurnTrace, reason: &str) {
    trace.cut_short();
    failed(&trace.span, Cow::Borrowed("cancelled"), &reason);
}

/// The span of one call of the model, under the turn's: `chat {model}`. `attempt` counts the
/// step's calls (a `wrap_model` hook's retries, and a retry the answer's hooks asked for).
#[allow(clippy::too_many_arguments)]
pub(crate) fn chat_span(
    turn: &TurnTrace,
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
        parent: &turn.span,
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
pub(crate) fn tool_span(turn: &TurnTrace, call: &ToolCall, attempt: u32) -> Span {
    let span = tracing::info_span!(
        target: TARGET,
        parent: &turn.span,
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
pub(crate) fn workflow_ended(run: &RunSpan, result: &Result<Vec<TaskReport>, Error>) {
    let span = run.end();
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

/// The span of an accepted plan, under the session's run: `plan {title}` (or `plan {id}`),
/// from its acceptance to its last task's end, or the run's end. Its tasks' turns are its
/// children; a plan a later run goes on with has a span in that run too.
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

/// What a turn spent between `before` and `spent`.
fn since(spent: Usage, before: Usage) -> Usage {
    Usage {
        input_tokens: spent.input_tokens.saturating_sub(before.input_tokens),
        output_tokens: spent.output_tokens.saturating_sub(before.output_tokens),
        cache_read_tokens: spent.cache_read_tokens.saturating_sub(before.cache_read_tokens),
        cache_write_tokens: spent.cache_write_tokens.saturating_sub(before.cache_write_tokens),
    }
}

/// Records a failure: its kind, an error status, and — only when content is captured, as a
/// message may quote it (an answer that did not read, a tool's arguments) — its message.
fn failed(span: &Span, kind: Cow<'static, str>, error: &dyn std::fmt::Display) {
    span.record("error.type", kind.as_ref());
    span.record("otel.status_code", "error");
    if captures_content() {
        span.record("otel.status_description", tracing::field::display(error));
    }
}

/// A session run's span until its end is recorded. Dropped before — the run's future was
/// dropped midway — it says so.
#[derive(Debug)]
pub(crate) struct RunSpan {
    span: Span,
    ended: AtomicBool,
}

impl RunSpan {
    pub(crate) fn new(span: Span) -> Self {
        RunSpan { span, ended: AtomicBool::new(false) }
    }

    pub(crate) fn span(&self) -> &Span {
        &self.span
    }

    /// The span, its end about to be recorded.
    fn end(&self) -> &Span {
        self.ended.store(true, Ordering::Relaxed);
        &self.span
    }
}

impl Drop for RunSpan {
    fn drop(&mut self) {
        if !*self.ended.get_mut() && !self.span.is_disabled() {
            failed(&self.span, Cow::Borrowed("cancelled"), &"cut short before it ended");
        }
    }
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
