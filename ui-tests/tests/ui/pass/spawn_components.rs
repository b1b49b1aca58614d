//! A turn is `Send`: an agent with every component — a tool, an approver, a summarizer, an
//! audit sink, a token counter, a stream transformer — runs each way on `tokio::spawn`.

use std::sync::Arc;

use agentix::event::BeforeTool;
use agentix::{Agent, Message, ScriptedModel, ToolCall, Verdict, hook, approval::Approval, context::{AuditLog, CharsPerToken, Summarizer}, verdict::Escalation, transform::Redactor};
use serde_json::json;
use ui_tests::{Clock, finished, spawn_each_run};

struct Brief;

impl Summarizer for Brief {
    async fn summarize(
        &self,
        _earlier: Option<&str>,
        dropped: &[Message],
        _turn: &agentix::Turn,
    ) -> String {
        format!("{} messages", dropped.len())
    }
}

#[hook(before_tool)]
async fn ask(_call: &ToolCall) -> Verdict<BeforeTool> {
    Verdict::escalate("a person decides")
}

fn main() {
    let model = ScriptedModel::new().chunked(3);
    let model = (0..3).fold(model, |model, _| model.tool_call("clock", json!({})).text("It is noon, ops@example.com."));
    let agent = Agent::builder(model)
        .system("Be brief.")
        .tool(Clock)
        .hook(ask)
        .approver(|_call: ToolCall, _why: Escalation| async {
            tokio::task::yield_now().await;
            Approval::Approve
        })
        .summarizer(Brief)
        .token_counter(CharsPerToken(3))
        .audit(Arc::new(AuditLog::new()))
        .transformer(Redactor::new())
        .build();
    let (run, observed, streamed) = spawn_each_run!(agent);
    for outcome in [run, observed, finished(&streamed).clone()] {
        assert_eq!(outcome.unwrap().joined_text(), "It is noon, [redacted e-mail].");
    }
}
