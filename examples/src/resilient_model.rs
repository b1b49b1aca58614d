//! Resilience, written as hooks: a `wrap_model` hook retries transport errors with backoff and
//! falls back to a second model when the first stays down; a `wrap_tool` hook runs a failed
//! tool once more.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use agentix::{
    Agent, Conversation, Model, Outcome, ScriptedModel, Tool, ToolCall, ToolResult, Turn, hook,
    message::ToolFailure,
    model::{ModelError, ModelRequest, ModelResponse, NextModel},
    on,
    tool::NextTool,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::trace;

/// Attempts on the primary model before the fallback takes over.
pub const ATTEMPTS: u32 = 3;

/// `wrap_model`, as a struct: it owns the fallback model, and says what it does. The fallback
/// is called directly, not through `next`: its answer skips the audit sink and the stream
/// transformers, which sit at the innermost end of the onion (a fallback that must be audited
/// or redacted belongs in a `Model` of its own that the agent calls).
pub struct Resilient<'a, F> {
    fallback: F,
    say: &'a (dyn Fn(&str) + Sync),
}

impl<F: Model> on::WrapModel for Resilient<'_, F> {
    fn name(&self) -> &'static str {
        "resilient"
    }

    async fn wrap_model(
        &self,
        request: &ModelRequest,
        _turn: &Turn,
        next: &impl NextModel,
    ) -> Result<ModelResponse, ModelError> {
        let mut backoff = Duration::from_millis(10);
        for _ in 1..ATTEMPTS {
            match next.call(request).await {
                Err(ModelError::Transport(error)) => {
                    (self.say)(&format!("    resilient: {error}; trying again in {backoff:?}"));
                    tokio::time::sleep(backoff).await;
                    backoff *= 2;
                }
                answered => return answered,
            }
        }
        match next.call(request).await {
            Err(ModelError::Transport(error)) => {
                (self.say)(&format!(
                    "    resilient: {error} {ATTEMPTS} times; asking the fallback"
                ));
                self.fallback.complete(request).await
            }
            answered => answered,
        }
    }
}

/// `wrap_tool`: a tool that failed gets one more run.
#[hook(wrap_tool)]
async fn retry_failed_tool(call: &ToolCall, next: &impl NextTool) -> ToolResult {
    let result = next.call(call).await;
    match result.error {
        Some(ToolFailure::Failed { .. }) => next.call(call).await,
        _ => result,
    }
}

#[derive(Deserialize, JsonSchema)]
struct Route {
    /// Where from.
    from: String,
    /// Where to.
    to: String,
}

/// A route planner whose first call of each pair times out.
#[derive(Default)]
struct FlakyRoutes {
    calls: AtomicUsize,
}

impl Tool for FlakyRoutes {
    const NAME: &'static str = "plan_route";
    type Args = Route;
    type Output = String;
    type Error = String;

    fn description(&self) -> &str {
        "Plans a route between two cities."
    }

    async fn call(&self, args: Route, _turn: &Turn) -> Result<String, String> {
        if self.calls.fetch_add(1, Ordering::Relaxed).is_multiple_of(2) {
            return Err("the route service timed out".into());
        }
        Ok(format!("{} → {}: train, 6 h 40 min", args.from, args.to))
    }
}

fn down() -> ModelError {
    ModelError::Transport("connection reset".into())
}

/// One turn: the primary model fails twice, then asks for a route (the tool fails once and is
/// run again); for the answer the primary stays down and the fallback answers. Returns the
/// outcome, the conversation and the calls each model took.
pub async fn run(out: &(dyn Fn(&str) + Sync)) -> (Outcome, Conversation, [usize; 2]) {
    let primary = ScriptedModel::new()
        .error(down())
        .error(down())
        .tool_call("plan_route", json!({ "from": "Oslo", "to": "Bergen" }))
        .error(down())
        .error(down())
        .error(down());
    let fallback = ScriptedModel::new().text("Take the train: 6 h 40 min from Oslo to Bergen.");
    let agent = Agent::builder(&primary)
        .tool(FlakyRoutes::default())
        .hook(Resilient { fallback: &fallback, say: out })
        .hook(retry_failed_tool)
        .build();
    let mut conversation = Conversation::new();
    let outcome = agent
        .turn(&mut conversation, "How do I get from Oslo to Bergen?")
        .observe(&trace::observer(out))
        .await;
    trace::outcome(out, &outcome);
    trace::log(out, &conversation);
    out(&format!("primary model calls: {}, fallback calls: {}", primary.calls(), fallback.calls()));
    (outcome, conversation, [primary.calls(), fallback.calls()])
}
