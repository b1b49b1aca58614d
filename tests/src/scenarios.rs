//! The foundation's hook-order and verdict scenarios: a probe on every event, acting at one
//! event per scenario (halt, panic, stop, retry, reject, escalate, edits), over a script that
//! reaches every sequential event. Any model that answers with the script must give the same
//! outcomes, logs, requests and hook decisions: the scripted model on both paths, and the real
//! providers' adapters over their wire formats.

use agentix::event::EventKind::{self, *};
use agentix::{
    Agent, AssistantMessage, Conversation, Model, ScriptedModel, ToolCall, model::ModelRequest,
};
use serde_json::json;

use crate::{Action, Path, Probe, Ran, Record, Weather, run_on};

/// One scenario: what probe `b` does, and where (`None`: every probe continues).
pub type Scenario = Option<(EventKind, Action)>;

/// The answers, in order: a step with a call that runs and a call to an unknown tool, then the
/// answer, then a second answer for a scenario that retries.
pub fn script() -> Vec<AssistantMessage> {
    vec![
        AssistantMessage::default()
            .with_tool_call(ToolCall::new("call_1", "get_weather", json!({ "city": "Oslo" })))
            .with_tool_call(ToolCall::new("call_2", "no_such_tool", json!({}))),
        AssistantMessage::text("It is sunny in Oslo today, and warm."),
        AssistantMessage::text("Second answer, after a retry."),
    ]
}

/// The texts of the script's answers, in order.
pub const SAID: [&str; 2] =
    ["It is sunny in Oslo today, and warm.", "Second answer, after a retry."];

/// The scripted model answering with [`script`], streaming in chunks of four characters.
pub fn scripted_model() -> ScriptedModel {
    script().into_iter().fold(ScriptedModel::new(), ScriptedModel::message).chunked(4)
}

/// Every scenario.
pub fn all() -> Vec<Scenario> {
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

/// What a scenario did.
#[derive(Debug, PartialEq)]
pub struct Seen {
    /// The outcome, the hook decisions, the streamed text.
    pub ran: Ran,
    /// The conversation's log after the turn.
    pub log: Vec<agentix::Entry>,
    /// The requests the model was sent (as the last probe passed them on).
    pub requests: Vec<ModelRequest>,
    /// Every hook call, by event then order.
    pub calls: Vec<(EventKind, &'static str)>,
}

/// Runs `scenario` on `path` over `model`, with probes `a`, `b` (acting) and `c`, the weather
/// tool, and an approver that approves.
pub async fn run<M: Model>(path: Path, model: M, scenario: Scenario) -> Seen {
    let record = Record::new();
    let mut b = Probe::new("b", &record);
    if let Some((event, action)) = scenario {
        b = b.on(event, action);
    }
    let c = Probe::new("c", &record);
    let requests = c.requests();
    let agent = Agent::builder(model)
        .tool(Weather::default())
        .hook(Probe::new("a", &record))
        .hook(b)
        .hook(c)
        .approver(|_: ToolCall, _: agentix::verdict::Escalation| async {
            agentix::approval::Approval::Approve
        })
        .build();
    let mut conversation = Conversation::new();
    let ran = run_on(path, &agent, &mut conversation, "weather?").await;
    let calls = EventKind::TURN
        .iter()
        .flat_map(|event| record.at(*event).into_iter().map(move |hook| (*event, hook)))
        .collect();
    let requests = requests.lock().unwrap().clone();
    Seen { ran, log: conversation.log().to_vec(), requests, calls }
}
