//! A turn is `Send`: `Hook` structs that override every method (the wraps included, awaiting in
//! each) and a hand-written single-event hook, spawned with `tokio::spawn`.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use agentix::event::{AfterModel, AfterTool, BeforeFinal, BeforeModel, BeforeTool, Post, Pre, ToolError};
use agentix::{Agent, AssistantMessage, Hook, Outcome, ScriptedModel, ToolCall, ToolResult, Turn, Verdict, on, model::{ModelError, ModelRequest, ModelResponse, NextModel}, tool::NextTool};
use serde_json::json;
use ui_tests::{Clock, finished, spawn_each_run};

/// Counts every event it sees, awaiting at each.
#[derive(Default)]
struct Everywhere {
    seen: Arc<AtomicUsize>,
}

impl Everywhere {
    async fn saw(&self) {
        self.seen.fetch_add(1, Ordering::Relaxed);
        tokio::task::yield_now().await;
    }
}

#[agentix::hook]
impl Hook for Everywhere {
    async fn pre(&self, _turn: &mut Turn) -> Verdict<Pre> {
        self.saw().await;
        Verdict::Continue
    }

    async fn before_model(&self, _request: &mut ModelRequest, _turn: &mut Turn) -> Verdict<BeforeModel> {
        self.saw().await;
        Verdict::Continue
    }

    async fn wrap_model(
        &self,
        request: &ModelRequest,
        _turn: &Turn,
        next: &impl NextModel,
    ) -> Result<ModelResponse, ModelError> {
        self.saw().await;
        next.call(request).await
    }

    async fn after_model(&self, _message: &mut AssistantMessage, _turn: &mut Turn) -> Verdict<AfterModel> {
        self.saw().await;
        Verdict::Continue
    }

    async fn before_tool(&self, _call: &mut ToolCall, _turn: &mut Turn) -> Verdict<BeforeTool> {
        self.saw().await;
        Verdict::Continue
    }

    async fn wrap_tool(&self, call: &ToolCall, _turn: &Turn, next: &impl NextTool) -> ToolResult {
        self.saw().await;
        next.call(call).await
    }

    async fn after_tool(&self, _result: &mut ToolResult, _turn: &mut Turn) -> Verdict<AfterTool> {
        self.saw().await;
        Verdict::Continue
    }

    async fn tool_error(&self, _result: &mut ToolResult, _turn: &mut Turn) -> Verdict<ToolError> {
        self.saw().await;
        Verdict::Continue
    }

    async fn before_final(&self, _message: &mut AssistantMessage, _turn: &mut Turn) -> Verdict<BeforeFinal> {
        self.saw().await;
        Verdict::Continue
    }

    async fn post(&self, _outcome: &Outcome, _turn: &mut Turn) -> Verdict<Post> {
        self.saw().await;
        Verdict::Continue
    }
}

/// A single-event hook written by hand, returning its future without `async fn`.
struct Shout;

impl on::BeforeFinal for Shout {
    fn before_final(
        &self,
        message: &mut AssistantMessage,
        _turn: &mut Turn,
    ) -> impl Future<Output = Verdict<BeforeFinal>> + Send {
        let text = message.joined_text().to_uppercase();
        *message = AssistantMessage::text(text);
        async { Verdict::Continue }
    }
}

fn main() {
    let model = (0..3).fold(ScriptedModel::new(), |model, _| model.tool_call("clock", json!({})).text("It is noon."));
    let first = Everywhere::default();
    let second = Everywhere::default();
    let (first_seen, second_seen) = (Arc::clone(&first.seen), Arc::clone(&second.seen));
    let agent = Agent::builder(model).tool(Clock).hook(first).hook(Shout).hook(second).build();
    let (run, observed, streamed) = spawn_each_run!(agent);
    for outcome in [run, observed, finished(&streamed).clone()] {
        assert_eq!(outcome.unwrap().joined_text(), "IT IS NOON.");
    }
    // Per turn: pre, 2 × (before_model, wrap_model, after_model), before_tool, wrap_tool,
    // after_tool, before_final, post = 12 methods called, three turns.
    assert_eq!(first_seen.load(Ordering::Relaxed), 36);
    assert_eq!(second_seen.load(Ordering::Relaxed), 36);
}
