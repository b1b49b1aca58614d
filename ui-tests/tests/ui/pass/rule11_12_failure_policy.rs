//! Rules 11 and 12: `on_error = skip` on parallel `pre` hooks, and timeouts (`timeout = "..."`,
//! `timeout_ms = ...`, and a `Hook` struct's `TIMEOUT`) on hooks of any event.

use std::time::Duration;

use agentix::event::{BeforeTool, EventKind, EventSet, Pre};
use agentix::{Agent, Conversation, Entry, Hook, ScriptedModel, ToolCall, Turn, Verdict, hook, model::{ModelError, ModelRequest, ModelResponse, NextModel}, message::ToolFailure};
use serde_json::json;
use ui_tests::Clock;

#[hook(pre, parallel)]
async fn documents(_turn: &Turn) -> String {
    "documents".into()
}

#[hook(pre, parallel, on_error = skip)]
async fn flaky_index(_turn: &Turn) -> String {
    panic!("index offline")
}

#[hook(pre, parallel, on_error = skip, timeout = "20ms")]
async fn slow_memory(_turn: &Turn) -> String {
    tokio::time::sleep(Duration::from_secs(5)).await;
    "memory".into()
}

#[hook(pre, parallel, on_error = fail, timeout = "1.5s")]
async fn quick_profile(_turn: &Turn) -> String {
    "profile".into()
}

#[hook(before_tool, timeout = "30ms")]
async fn slow_policy(_call: &ToolCall) -> Verdict<BeforeTool> {
    tokio::time::sleep(Duration::from_secs(5)).await;
    Verdict::Continue
}

#[hook(wrap_model, timeout_ms = 5000)]
async fn bounded_model(request: &ModelRequest, next: &impl NextModel) -> Result<ModelResponse, ModelError> {
    next.call(request).await
}

/// A hook struct bounds every method it has.
struct Bounded;

#[hook]
impl Hook for Bounded {
    const EVENTS: EventSet = EventSet::of(EventKind::Pre);
    const TIMEOUT: Option<Duration> = Some(Duration::from_secs(1));

    async fn pre(&self, _turn: &mut Turn) -> Verdict<Pre> {
        Verdict::Continue
    }
}

fn main() {
    let model = ScriptedModel::new().tool_call("clock", json!({})).text("done");
    let agent = Agent::builder(&model)
        .tool(Clock)
        .hook(documents)
        .hook(flaky_index)
        .hook(slow_memory)
        .hook(quick_profile)
        .hook(slow_policy)
        .hook(bounded_model)
        .hook(Bounded)
        .build();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let mut conversation = Conversation::new();
    let reply = runtime.block_on(agent.run(&mut conversation, "what time is it?")).unwrap();
    assert_eq!(reply.joined_text(), "done");

    // The group went on without the hooks that failed, and the log says so.
    let skipped: Vec<&str> = conversation
        .log()
        .iter()
        .filter_map(|entry| match entry {
            Entry::HookSkipped { hook, .. } => Some(hook.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(skipped, ["flaky_index", "slow_memory"]);
    let injected = &model.requests()[0].messages[1];
    let texts: Vec<&str> = injected.content.iter().filter_map(|part| part.as_text()).collect();
    assert_eq!(texts, ["documents", "profile"]);

    // The guard that ran out of time refused the call; the turn went on.
    let Some(Entry::ToolResults { results, .. }) = conversation.log().iter().find(|entry| matches!(entry, Entry::ToolResults { .. })) else {
        panic!("the step is logged");
    };
    let Some(ToolFailure::Rejected { by, reason }) = &results[0].error else { panic!("{results:?}") };
    assert_eq!(by, "slow_policy");
    assert!(reason.contains("timed out after 30ms"), "{reason}");
}
