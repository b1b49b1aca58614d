//! A hook on each of the ten events, registered on one agent, over one turn that reaches all of
//! them.

use std::sync::atomic::{AtomicUsize, Ordering};

use agentix::event::{AfterModel, AfterTool, BeforeFinal, BeforeModel, BeforeTool, Post, Pre, ToolError};
use agentix::{Agent, AssistantMessage, Conversation, Outcome, Part, ScriptedModel, ToolCall, ToolResult, Turn, Verdict, hook, model::{ModelError, ModelRequest, ModelResponse, NextModel}, tool::NextTool};

static FIRED: AtomicUsize = AtomicUsize::new(0);

fn fired() {
    FIRED.fetch_add(1, Ordering::Relaxed);
}

#[hook(pre)]
async fn greet(turn: &mut Turn) -> Verdict<Pre> {
    fired();
    turn.inject("be brief");
    Verdict::Continue
}

#[hook(pre, parallel)]
async fn retrieve(turn: &Turn) -> Vec<Part> {
    fired();
    vec![Part::text(format!("documents about {}", turn.user_message().text()))]
}

#[hook(before_model)]
async fn pin_temperature(request: &mut ModelRequest) -> Verdict<BeforeModel> {
    fired();
    request.params.temperature = Some(0.0);
    Verdict::Continue
}

#[hook(wrap_model)]
async fn retry_once(request: &ModelRequest, next: &impl NextModel) -> Result<ModelResponse, ModelError> {
    fired();
    match next.call(request).await {
        Ok(response) => Ok(response),
        Err(_) => next.call(request).await,
    }
}

#[hook(after_model)]
async fn require_text(message: &AssistantMessage) -> Verdict<AfterModel> {
    fired();
    if message.calls_tools() || !message.joined_text().is_empty() {
        Verdict::Continue
    } else {
        Verdict::retry("say something")
    }
}

#[hook(before_tool)]
async fn allow_weather(call: &ToolCall) -> Verdict<BeforeTool> {
    fired();
    if call.name.starts_with("get_weather") { Verdict::Continue } else { Verdict::reject("not allowed") }
}

#[hook(wrap_tool)]
async fn dry_run(call: &ToolCall, _turn: &Turn, _next: &impl NextTool) -> ToolResult {
    fired();
    if call.name == "get_weather" {
        ToolResult::success(call, "sunny")
    } else {
        ToolResult::failure(call, agentix::message::ToolFailure::Failed { message: "no such city".into() })
    }
}

#[hook(after_tool)]
async fn add_units(result: &mut ToolResult) -> Verdict<AfterTool> {
    fired();
    result.output.push_str(", 21°C");
    Verdict::Continue
}

#[hook(tool_error)]
async fn explain(result: &mut ToolResult) -> Verdict<ToolError> {
    fired();
    result.output.push_str(" (try another city)");
    Verdict::Continue
}

#[hook(before_final)]
async fn sign(message: &mut AssistantMessage) -> Verdict<BeforeFinal> {
    fired();
    message.content.push(Part::text(" — your assistant"));
    Verdict::Continue
}

#[hook(post)]
async fn count(_outcome: &Outcome) -> Verdict<Post> {
    fired();
    Verdict::Continue
}

fn main() {
    let model = ScriptedModel::new()
        .tool_calls([
            ("get_weather", serde_json::json!({ "city": "Oslo" })),
            ("get_weather_typo", serde_json::json!({})),
        ])
        .text("Sunny in Oslo.");
    let agent = Agent::builder(model)
        .hook(greet)
        .hook(retrieve)
        .hook(pin_temperature)
        .hook(retry_once)
        .hook(require_text)
        .hook(allow_weather)
        .hook(dry_run)
        .hook(add_units)
        .hook(explain)
        .hook(sign)
        .hook(count)
        .build();
    let reply = futures::executor::block_on(agent.run(&mut Conversation::new(), "Oslo")).unwrap();
    assert_eq!(reply.joined_text(), "Sunny in Oslo. — your assistant");
    // pre ×2 (one sequential, one parallel), before_model ×2, wrap_model ×2, after_model ×2,
    // before_tool ×2, wrap_tool ×2, after_tool ×1, tool_error ×1, before_final ×1, post ×1.
    assert_eq!(FIRED.load(Ordering::Relaxed), 16);
}
