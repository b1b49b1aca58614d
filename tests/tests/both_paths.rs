//! The foundation's hook-order and verdict scenarios, each run on the direct and the streamed
//! path: both paths leave the same log, send the same requests, reach the same outcome, and
//! report the same hook decisions in the same order.

use agentix::event::EventKind::{self, *};
use agentix::{Agent, AssistantMessage, Conversation, ModelRequest, ScriptedModel};
use serde_json::json;
use tests::{Action, Path, Probe, Record, Weather, run_on};

/// A turn that reaches every sequential event, streamed in small chunks.
fn model() -> ScriptedModel {
    ScriptedModel::new()
        .tool_calls([("get_weather", json!({ "city": "Oslo" })), ("no_such_tool", json!({}))])
        .text("It is sunny in Oslo today, and warm.")
        .text("Second answer, after a retry.")
        .chunked(4)
}

/// Runs the turn on `path` with probes `a`, `b` (scripted with `action` at `event`, if any)
/// and `c`; returns what a comparison of the two paths needs.
async fn scenario(
    path: Path,
    script: Option<(EventKind, Action)>,
) -> (tests::Ran, Vec<agentix::Entry>, Vec<ModelRequest>, Vec<(EventKind, &'static str)>) {
    let record = Record::new();
    let mut b = Probe::new("b", &record);
    if let Some((event, action)) = script {
        b = b.on(event, action);
    }
    let model = model();
    let agent = Agent::builder(&model)
        .tool(Weather::default())
        .hook(Probe::new("a", &record))
        .hook(b)
        .hook(Probe::new("c", &record))
        .approver(|_: agentix::ToolCall, _: agentix::Escalation| async {
            agentix::Approval::Approve
        })
        .build();
    let mut conversation = Conversation::new();
    let ran = run_on(path, &agent, &mut conversation, "weather?").await;
    let calls = EventKind::ALL
        .iter()
        .flat_map(|event| record.at(*event).into_iter().map(move |hook| (*event, hook)))
        .collect();
    (ran, conversation.log().to_vec(), model.requests(), calls)
}

fn scenarios() -> Vec<Option<(EventKind, Action)>> {
    let stop = || Action::Stop(AssistantMessage::text("stopped"));
    let halt = || Action::Halt("enough".into());
    let mut scenarios = vec![None];
    for event in [Pre, BeforeModel, AfterModel, BeforeTool, AfterTool, ToolError, BeforeFinal, Post]
    {
        scenarios.push(Some((event, halt())));
        scenarios.push(Some((event, Action::Panic("boom".into()))));
    }
    scenarios.extend([
        Some((Pre, Action::Edit("injected".into()))),
        Some((BeforeModel, stop())),
        Some((BeforeModel, Action::Edit("another system prompt".into()))),
        Some((AfterModel, stop())),
        Some((AfterModel, Action::Retry(Some("again".into())))),
        Some((AfterModel, Action::Edit("edited".into()))),
        Some((BeforeTool, Action::Reject("no".into()))),
        Some((BeforeTool, Action::Escalate("ask".into()))),
        Some((BeforeTool, Action::Edit(r#"{"city":"Rome"}"#.into()))),
        Some((AfterTool, Action::Edit("edited result".into()))),
        Some((ToolError, Action::Recover("recovered".into()))),
        Some((BeforeFinal, stop())),
        Some((BeforeFinal, Action::Retry(None))),
        Some((BeforeFinal, Action::Edit("signed".into()))),
    ]);
    scenarios
}

#[tokio::test]
async fn every_scenario_runs_the_same_on_both_paths() {
    for script in scenarios() {
        let (direct, direct_log, direct_requests, direct_calls) =
            scenario(Path::Direct, script.clone()).await;
        let (streamed, streamed_log, streamed_requests, streamed_calls) =
            scenario(Path::Streamed, script.clone()).await;
        assert_eq!(streamed.outcome, direct.outcome, "{script:?}");
        assert_eq!(streamed.hooks, direct.hooks, "{script:?}: hook decisions differ");
        assert_eq!(streamed_calls, direct_calls, "{script:?}: hooks were called differently");
        assert_eq!(streamed_log, direct_log, "{script:?}: the logs differ");
        assert_eq!(
            streamed_requests, direct_requests,
            "{script:?}: the model saw different requests"
        );
        assert!(
            !direct.hooks.is_empty(),
            "{script:?}: nothing was traced; the comparison proves nothing"
        );
        // Whatever the model said reached the stream: every response's text, in order.
        assert_eq!(direct.streamed, "");
        let said = ["It is sunny in Oslo today, and warm.", "Second answer, after a retry."];
        // The first response only calls tools; each later one is one of `said`.
        let texts = direct_requests.len().saturating_sub(1);
        assert_eq!(
            streamed.streamed,
            said[..texts].concat(),
            "{script:?}: the stream lost or added text"
        );
    }
}
