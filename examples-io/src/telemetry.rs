//! Telemetry: one hook struct that reports every event of the lifecycle through `tracing` —
//! an event per sequential hook point, a span around each model and tool call (the wraps), so
//! any `tracing` subscriber (logs, OpenTelemetry, …) sees the turn as it runs.

use agentix::event::{
    AfterModel, AfterTool, BeforeFinal, BeforeModel, BeforeTool, Post, Pre, ToolError,
};
use agentix::{
    Agent, AssistantMessage, Conversation, Hook, ModelError, ModelRequest, ModelResponse,
    NextModel, NextTool, Outcome, ScriptedModel, ToolCall, ToolResult, Trip, Turn, Verdict,
};
use serde_json::json;
use tracing::Instrument;

use examples::weather::GetWeather;

/// Reports every event; decides nothing.
pub struct Telemetry;

#[agentix::hook]
impl Hook for Telemetry {
    fn name(&self) -> &'static str {
        "telemetry"
    }

    async fn pre(&self, turn: &mut Turn) -> Verdict<Pre> {
        let question = turn.user_message().text();
        tracing::info!(event = "pre", turn = turn.turn_ref().0, %question);
        Verdict::Continue
    }

    async fn before_model(
        &self,
        request: &mut ModelRequest,
        turn: &mut Turn,
    ) -> Verdict<BeforeModel> {
        tracing::info!(
            event = "before_model",
            step = turn.step(),
            messages = request.messages.len()
        );
        Verdict::Continue
    }

    async fn wrap_model(
        &self,
        request: &ModelRequest,
        turn: &Turn,
        next: &impl NextModel,
    ) -> Result<ModelResponse, ModelError> {
        let span = tracing::info_span!("model_call", step = turn.step());
        let result = next.call(request).instrument(span.clone()).await;
        span.in_scope(|| tracing::info!(event = "wrap_model", ok = result.is_ok()));
        result
    }

    async fn after_model(
        &self,
        message: &mut AssistantMessage,
        _turn: &mut Turn,
    ) -> Verdict<AfterModel> {
        let calls = message.tool_calls().count();
        tracing::info!(event = "after_model", tool_calls = calls, text = %message.joined_text());
        Verdict::Continue
    }

    async fn before_tool(&self, call: &mut ToolCall, _turn: &mut Turn) -> Verdict<BeforeTool> {
        tracing::info!(event = "before_tool", tool = %call.name, arguments = %call.arguments);
        Verdict::Continue
    }

    async fn wrap_tool(&self, call: &ToolCall, _turn: &Turn, next: &impl NextTool) -> ToolResult {
        let span = tracing::info_span!("tool_call", tool = %call.name);
        let result = next.call(call).instrument(span.clone()).await;
        span.in_scope(|| tracing::info!(event = "wrap_tool", failed = result.is_error()));
        result
    }

    async fn after_tool(&self, result: &mut ToolResult, _turn: &mut Turn) -> Verdict<AfterTool> {
        tracing::info!(event = "after_tool", tool = %result.name, output = %result.output);
        Verdict::Continue
    }

    async fn tool_error(&self, result: &mut ToolResult, _turn: &mut Turn) -> Verdict<ToolError> {
        tracing::warn!(event = "tool_error", tool = %result.name, error = %result.output);
        Verdict::Continue
    }

    async fn before_final(
        &self,
        message: &mut AssistantMessage,
        _turn: &mut Turn,
    ) -> Verdict<BeforeFinal> {
        tracing::info!(event = "before_final", chars = message.joined_text().len());
        Verdict::Continue
    }

    async fn post(&self, outcome: &Outcome, turn: &mut Turn) -> Verdict<Post> {
        match outcome {
            Ok(_) => tracing::info!(event = "post", turn = turn.turn_ref().0, ok = true),
            Err(error) => tracing::error!(event = "post", turn = turn.turn_ref().0, %error),
        }
        Verdict::Continue
    }
}

/// Reports the check beside the first model call: a tripwire is a hook of its own, not a
/// method of a `Hook` struct (it runs beside the call, not in the chain's order).
pub struct TraceInput;

impl agentix::on::Tripwire for TraceInput {
    fn name(&self) -> &'static str {
        "telemetry"
    }

    async fn tripwire(&self, request: &ModelRequest, turn: &Turn) -> Trip {
        tracing::info!(event = "tripwire", step = turn.step(), messages = request.messages.len());
        Trip::Pass
    }
}

/// One turn with a good tool call and a bad one, reported through whatever `tracing`
/// subscriber is installed. Returns the outcome.
pub async fn run() -> Outcome {
    let model = ScriptedModel::new()
        .tool_calls([
            ("get_weather", json!({ "city": "Bergen" })),
            ("get_weather", json!({ "town": "Bergen" })),
        ])
        .text("A clear sky in Bergen, 21 °C: no umbrella needed.");
    let agent = Agent::builder(model).tool(GetWeather).hook(Telemetry).hook(TraceInput).build();
    agent.run(&mut Conversation::new(), "Do I need an umbrella in Bergen?").await
}
