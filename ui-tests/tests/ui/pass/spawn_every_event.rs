//! A turn is `Send`: `#[hook]` functions on all ten events — bodies that await beside bodies
//! that run in place, `when` conditions, a parallel group — on an agent whose every run is
//! spawned with `tokio::spawn`.

use std::sync::atomic::{AtomicUsize, Ordering};

use agentix::event::{AfterModel, AfterTool, BeforeFinal, BeforeModel, BeforeTool, Post, Pre, ToolError};
use agentix::{Agent, AssistantMessage, Outcome, Part, ScriptedModel, ToolCall, ToolResult, Turn, Verdict, hook, model::{ModelError, ModelRequest, ModelResponse, NextModel}, tool::NextTool};
use serde_json::json;
use ui_tests::{finished, spawn_each_run};

static POSTS: AtomicUsize = AtomicUsize::new(0);

async fn pause() {
    tokio::task::yield_now().await;
}

fn has_text(message: &AssistantMessage, _turn: &Turn) -> bool {
    !message.joined_text().is_empty()
}

fn first_step(turn: &Turn) -> bool {
    turn.step() == 0
}

#[hook(pre, when = first_step)]
async fn greet(turn: &mut Turn) -> Verdict<Pre> {
    pause().await;
    turn.inject("be brief");
    Verdict::Continue
}

#[hook(pre, parallel)]
async fn documents(turn: &Turn) -> Vec<Part> {
    pause().await;
    vec![Part::text(format!("documents about {}", turn.user_message().text()))]
}

#[hook(pre, parallel)]
async fn memory(_turn: &Turn) -> Option<Part> {
    pause().await;
    Some(Part::text("remembered"))
}

#[hook(before_model)]
async fn pin_temperature(request: &mut ModelRequest) -> Verdict<BeforeModel> {
    request.params.temperature = Some(0.0);
    Verdict::Continue
}

#[hook(wrap_model)]
async fn retry_once(request: &ModelRequest, next: &impl NextModel) -> Result<ModelResponse, ModelError> {
    match next.call(request).await {
        Ok(response) => Ok(response),
        Err(_) => next.call(request).await,
    }
}

#[hook(after_model, when = has_text)]
async fn require_text(message: &AssistantMessage) -> Verdict<AfterModel> {
    pause().await;
    if message.joined_text().len() > 2 { Verdict::Continue } else { Verdict::retry("say more") }
}

#[hook(before_tool)]
async fn allow_clock(call: &ToolCall) -> Verdict<BeforeTool> {
    if call.name == "clock" { Verdict::Continue } else { Verdict::reject("not allowed") }
}

#[hook(wrap_tool)]
async fn answer_clock(call: &ToolCall, _turn: &Turn, _next: &impl NextTool) -> ToolResult {
    pause().await;
    if call.name == "clock" {
        ToolResult::success(call, "noon")
    } else {
        ToolResult::failure(call, agentix::message::ToolFailure::Failed { message: "no such tool".into() })
    }
}

#[hook(after_tool)]
async fn add_zone(result: &mut ToolResult) -> Verdict<AfterTool> {
    result.output.push_str(" UTC");
    Verdict::Continue
}

#[hook(tool_error)]
async fn explain(result: &mut ToolResult) -> Verdict<ToolError> {
    pause().await;
    result.output.push_str(" (try the clock)");
    Verdict::Continue
}

#[hook(before_final)]
async fn sign(message: &mut AssistantMessage) -> Verdict<BeforeFinal> {
    message.content.push(Part::text(" — your assistant"));
    Verdict::Continue
}

#[hook(post, durable)]
async fn count(_outcome: &Outcome, turn: &mut Turn) -> Verdict<Post> {
    pause().await;
    POSTS.fetch_add(1, Ordering::Relaxed);
    turn.inject("counted");
    Verdict::Continue
}

fn main() {
    let model = (0..3).fold(ScriptedModel::new(), |model, _| {
        model.tool_calls([("clock", json!({})), ("calendar", json!({}))]).text("It is noon.")
    });
    let agent = Agent::builder(model)
        .hook(greet)
        .hook(documents)
        .hook(memory)
        .hook(pin_temperature)
        .hook(retry_once)
        .hook(require_text)
        .hook(allow_clock)
        .hook(answer_clock)
        .hook(add_zone)
        .hook(explain)
        .hook(sign)
        .hook(count)
        .build();
    let (run, observed, streamed) = spawn_each_run!(agent);
    for outcome in [run, observed, finished(&streamed).clone()] {
        assert_eq!(outcome.unwrap().joined_text(), "It is noon. — your assistant");
    }
    assert_eq!(POSTS.load(Ordering::Relaxed), 3);
}
