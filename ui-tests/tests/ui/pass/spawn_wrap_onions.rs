//! A turn is `Send`: onions of several `wrap_model` and `wrap_tool` layers — `#[hook]` functions
//! and a `Hook` struct, each awaiting around `next` — spawned with `tokio::spawn`.

use std::sync::Mutex;

use agentix::{Agent, Hook, ScriptedModel, ToolCall, ToolResult, Turn, hook, model::{ModelError, ModelRequest, ModelResponse, NextModel}, tool::NextTool};
use serde_json::json;
use ui_tests::{Clock, finished, spawn_each_run};

static LAYERS: Mutex<Vec<&str>> = Mutex::new(Vec::new());

async fn enter(layer: &'static str) {
    LAYERS.lock().unwrap().push(layer);
    tokio::task::yield_now().await;
}

#[hook(wrap_model)]
async fn outer_model(request: &ModelRequest, next: &impl NextModel) -> Result<ModelResponse, ModelError> {
    enter("outer_model").await;
    next.call(request).await
}

#[hook(wrap_model)]
async fn retry_model(request: &ModelRequest, _turn: &Turn, next: &impl NextModel) -> Result<ModelResponse, ModelError> {
    enter("retry_model").await;
    match next.call(request).await {
        Ok(response) => Ok(response),
        Err(_) => next.call(request).await,
    }
}

#[hook(wrap_tool)]
async fn outer_tool(call: &ToolCall, _turn: &Turn, next: &impl NextTool) -> ToolResult {
    enter("outer_tool").await;
    next.call(call).await
}

#[hook(wrap_tool)]
async fn retry_tool(call: &ToolCall, _turn: &Turn, next: &impl NextTool) -> ToolResult {
    enter("retry_tool").await;
    let result = next.call(call).await;
    if result.is_error() { next.call(call).await } else { result }
}

struct Middle;

#[hook]
impl Hook for Middle {
    async fn wrap_model(&self, request: &ModelRequest, _turn: &Turn, next: &impl NextModel) -> Result<ModelResponse, ModelError> {
        enter("middle_model").await;
        next.call(request).await
    }

    async fn wrap_tool(&self, call: &ToolCall, _turn: &Turn, next: &impl NextTool) -> ToolResult {
        enter("middle_tool").await;
        next.call(call).await
    }
}

fn main() {
    let model = (0..3).fold(ScriptedModel::new(), |model, _| model.tool_call("clock", json!({})).text("It is noon."));
    let agent = Agent::builder(model)
        .tool(Clock)
        .hook(outer_model)
        .hook(outer_tool)
        .hook(Middle)
        .hook(retry_model)
        .hook(retry_tool)
        .build();
    let (run, observed, streamed) = spawn_each_run!(agent);
    for outcome in [run, observed, finished(&streamed).clone()] {
        assert_eq!(outcome.unwrap().joined_text(), "It is noon.");
    }
    let model_step = ["outer_model", "middle_model", "retry_model"];
    let tool_call = ["outer_tool", "middle_tool", "retry_tool"];
    let turn: Vec<&str> = [model_step, tool_call, model_step].concat();
    assert_eq!(*LAYERS.lock().unwrap(), [turn.clone(), turn.clone(), turn].concat());
}
