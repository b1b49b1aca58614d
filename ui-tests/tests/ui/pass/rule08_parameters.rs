//! Rule 8: every parameter form each event provides; trailing parameters may be left out.

use agentix::event::{AfterModel, BeforeModel, Post};
use agentix::{AssistantMessage, Outcome, ToolCall, ToolResult, Turn, Verdict, hook, model::{ModelError, ModelRequest, ModelResponse, NextModel}, tool::NextTool};

#[hook(pre)]
async fn pre_none() {}
#[hook(pre)]
async fn pre_shared(_turn: &Turn) {}
#[hook(pre)]
async fn pre_mut(_turn: &mut Turn) {}
#[hook(pre, parallel)]
async fn parallel_shared(_turn: &Turn) -> Vec<agentix::Part> {
    Vec::new()
}

#[hook(before_model)]
async fn request_shared(_request: &ModelRequest, _turn: &Turn) {}
#[hook(before_model)]
async fn request_mut(request: &mut ModelRequest, _turn: &mut Turn) -> Verdict<BeforeModel> {
    request.params.max_tokens = Some(100);
    Verdict::Continue
}

#[hook(wrap_model)]
async fn wrap_none() -> Result<ModelResponse, ModelError> {
    Ok(AssistantMessage::text("no model needed").into())
}
#[hook(wrap_model)]
async fn wrap_two(request: &ModelRequest, next: &impl NextModel) -> Result<ModelResponse, ModelError> {
    next.call(request).await
}
#[hook(wrap_model)]
async fn wrap_three(request: &ModelRequest, _turn: &Turn, next: impl NextModel) -> Result<ModelResponse, ModelError> {
    next.call(request).await
}

#[hook(after_model)]
async fn message_mut(message: &mut AssistantMessage) -> Verdict<AfterModel> {
    message.content.clear();
    Verdict::Continue
}

#[hook(before_tool)]
async fn call_mut(call: &mut ToolCall, _turn: &Turn) {
    call.arguments = serde_json::json!({});
}

#[hook(wrap_tool)]
async fn wrap_tool(call: &ToolCall, turn: &Turn, next: &impl NextTool) -> ToolResult {
    let _ = turn.step();
    next.call(call).await
}

#[hook(after_tool)]
async fn result_shared(_result: &ToolResult) {}

#[hook(tool_error)]
async fn result_mut(result: &mut ToolResult, _turn: &mut Turn) {
    result.error = None;
}

#[hook(before_final)]
async fn final_shared(_message: &AssistantMessage) {}

#[hook(post)]
async fn outcome(outcome: &Outcome, _turn: &mut Turn) -> Verdict<Post> {
    if outcome.is_err() { Verdict::halt("noted") } else { Verdict::Continue }
}

fn main() {
    let _ = (pre_none, pre_shared, pre_mut, parallel_shared, request_shared, request_mut);
    let _ = (wrap_none, wrap_two, wrap_three, message_mut, call_mut, wrap_tool);
    let _ = (result_shared, result_mut, final_shared, outcome);
}
