//! Sub-agents (`AgentTool`) under a policy: the policy's guard fires on a child's tool calls
//! (the tool never runs); the children's usage sums into the parent's turn; the parent's
//! observer and stream see the children's events nested under their names; a child's
//! escalation goes to the parent's approver; the parent's `turn_timeout` bounds the child; and
//! dropping the parent's turn drops the child's.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentix::event::BeforeTool;
use agentix::prelude::*;
use agentix::{
    AnyAgent, Model, StreamEvent,
    approval::Approval,
    delegate::AgentTool,
    message::ToolFailure,
    model::{ModelError, ModelRequest, ModelResponse, Usage},
    observe::{Decision, Observation},
    pipeline::Policy,
    verdict::Escalation,
};
use serde_json::json;
use tests::Weather;

/// A scripted model whose every answer costs `tokens` in and out.
struct Metered {
    script: ScriptedModel,
    tokens: u32,
}

impl Metered {
    fn new(script: ScriptedModel, tokens: u32) -> Self {
        Metered { script, tokens }
    }
}

impl Model for Metered {
    async fn complete(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        let mut response = self.script.complete(request).await?;
        response.usage =
            Usage { input_tokens: self.tokens, output_tokens: self.tokens, ..Default::default() };
        Ok(response)
    }
}

/// The policy's guard: nothing is deleted, by any agent built under it.
#[hook(before_tool)]
async fn no_deletes(call: &ToolCall) -> Verdict<BeforeTool> {
    if call.name.starts_with("delete") {
        Verdict::reject("nothing is deleted here")
    } else {
        Verdict::Continue
    }
}

/// `delete_notes`: counts the times it ran (the guard keeps it at zero).
#[derive(Clone, Default)]
struct DeleteNotes(Arc<AtomicUsize>);

impl agentix::Tool for DeleteNotes {
    const NAME: &'static str = "delete_notes";
    type Args = serde_json::Value;
    type Output = String;
    type Error = std::convert::Infallible;

    fn description(&self) -> &str {
        "Deletes every note."
    }

    async fn call(&self, _args: serde_json::Value, _turn: &Turn) -> Result<String, Self::Error> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Ok("deleted".into())
    }
}

/// What the parent's `post` hook read of its turn's usage.
static PARENT_USAGE: Mutex<Option<Usage>> = Mutex::new(None);

#[hook(post)]
async fn meter(_outcome: &agentix::Outcome, turn: &Turn) {
    *PARENT_USAGE.lock().unwrap() = Some(turn.usage());
}

#[tokio::test]
async fn a_policy_guard_refuses_a_childs_tool_call_and_the_childrens_usage_sums_into_the_parents() {
    let policy = Policy::new().hook(no_deletes);
    let deletes = DeleteNotes::default();
    let ran = deletes.0.clone();
    // The researcher tries to delete its notes (refused), looks the weather up, answers.
    let researcher_model = Metered::new(
        ScriptedModel::new()
            .tool_call("delete_notes", json!({}))
            .tool_call("get_weather", json!({ "city": "Oslo" }))
            .text("Sunny in Oslo."),
        10,
    );
    let researcher = Agent::builder(researcher_model)
        .policy(&policy)
        .tool(deletes)
        .tool(Weather::default())
        .build();
    let writer = Agent::builder(Metered::new(ScriptedModel::new().text("Oslo: sun all day."), 5))
        .policy(&policy)
        .build();
    let parent_model = Metered::new(
        ScriptedModel::new()
            .tool_call("research", json!({ "prompt": "Weather in Oslo?" }))
            .tool_call("write", json!({ "prompt": "Sunny in Oslo." }))
            .text("Oslo: sun all day."),
        100,
    );
    let parent = Agent::builder(parent_model)
        .policy(&policy)
        .sub_agent(AgentTool::new("research", "Looks things up.", researcher))
        .sub_agent(AgentTool::new("write", "Writes it up.", writer))
        .hook(meter)
        .build();
    let nested = Mutex::new(Vec::new());
    let observer = |observation: &Observation<'_>| {
        if let Observation::Nested { agent, observation, .. } = observation {
            match observation {
                Observation::Hook { hook, decision: Decision::Reject { reason }, .. } => {
                    nested.lock().unwrap().push(format!("{agent}: {hook} rejected: {reason}"));
                }
                Observation::ToolFinished { result } => {
                    nested.lock().unwrap().push(format!("{agent}: {} ran", result.name));
                }
                _ => {}
            }
        }
    };
    let mut conversation = Conversation::new();
    let answer = parent
        .turn(&mut conversation, "Write up Oslo's weather.")
        .observe(&observer)
        .await
        .unwrap();
    assert_eq!(answer.joined_text(), "Oslo: sun all day.");
    assert_eq!(ran.load(Ordering::SeqCst), 0, "the policy's guard refused the child's call");
    assert_eq!(
        *nested.lock().unwrap(),
        ["research: no_deletes rejected: nothing is deleted here", "research: get_weather ran"]
    );
    // Three parent calls at 100, three researcher calls at 10, one writer call at 5.
    let usage = PARENT_USAGE.lock().unwrap().expect("the post hook ran");
    assert_eq!((usage.input_tokens, usage.output_tokens), (335, 335));
    // The parent's log holds the children's answers as its tools' results.
    let results = tests::logged_results(&conversation);
    let outputs: Vec<&str> = results.iter().map(|result| result.output.as_str()).collect();
    assert_eq!(outputs, ["Sunny in Oslo.", "Oslo: sun all day."]);
}

#[tokio::test]
async fn the_parents_stream_shows_the_childs_events_tagged_with_its_name() {
    use futures::StreamExt;
    let child = Agent::builder(ScriptedModel::new().text("Found it.").chunked(3)).build();
    let model =
        ScriptedModel::new().tool_call("research", json!({ "prompt": "Find it." })).text("Done.");
    let parent =
        Agent::builder(model).sub_agent(AgentTool::new("research", "Finds.", child)).build();
    let events: Vec<StreamEvent> =
        parent.turn(&mut Conversation::new(), "Go.").stream().collect().await;
    let nested_text: String = events
        .iter()
        .filter_map(|event| match event {
            StreamEvent::Nested { agent, event, .. } if agent == "research" => match &**event {
                StreamEvent::Text(text) => Some(text.as_str()),
                _ => None,
            },
            _ => None,
        })
        .collect();
    assert_eq!(nested_text, "Found it.");
    assert!(events.iter().any(|event| matches!(
        event,
        StreamEvent::Nested { event, .. } if matches!(&**event, StreamEvent::Finished(Ok(_)))
    )));
    // The parent's own text is not nested.
    assert!(events.iter().any(|event| matches!(event, StreamEvent::Text(text) if text == "Done.")));
}

/// Escalates every weather lookup.
#[hook(before_tool)]
async fn ask_first(call: &ToolCall) -> Verdict<BeforeTool> {
    if call.name == "get_weather" {
        Verdict::escalate("weather costs money")
    } else {
        Verdict::Continue
    }
}

/// The parent's approver: records what it was asked, and refuses.
#[derive(Clone, Default)]
struct Refuses(Arc<Mutex<Vec<String>>>);

impl agentix::approval::Approver for Refuses {
    async fn review(&self, call: &ToolCall, escalation: &Escalation, _turn: &Turn) -> Approval {
        self.0.lock().unwrap().push(format!("{}: {}", call.name, escalation.reason));
        Approval::Reject("not today".into())
    }
}

#[tokio::test]
async fn a_childs_escalation_goes_to_the_parents_approver() {
    let weather = Weather::default();
    let calls = weather.calls.clone();
    let child_model = ScriptedModel::new()
        .tool_call("get_weather", json!({ "city": "Oslo" }))
        .text("No weather today.");
    let child = Agent::builder(child_model).tool(weather).hook(ask_first).build();
    let model = ScriptedModel::new()
        .tool_call("research", json!({ "prompt": "Weather?" }))
        .text("No weather.");
    let approver = Refuses::default();
    let parent = Agent::builder(model)
        .sub_agent(AgentTool::new("research", "Finds.", child))
        .approver(approver.clone())
        .build();
    parent.run(&mut Conversation::new(), "Weather?").await.unwrap();
    assert_eq!(*approver.0.lock().unwrap(), ["get_weather: weather costs money"]);
    assert!(calls.lock().unwrap().is_empty(), "refused: the child's tool did not run");
}

/// `wait`: never returns; says when its call was dropped.
struct Waits(Arc<AtomicBool>);

struct Dropped(Arc<AtomicBool>);

impl Drop for Dropped {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

impl agentix::Tool for Waits {
    const NAME: &'static str = "wait";
    type Args = serde_json::Value;
    type Output = String;
    type Error = std::convert::Infallible;

    fn description(&self) -> &str {
        "Waits."
    }

    async fn call(&self, _args: serde_json::Value, _turn: &Turn) -> Result<String, Self::Error> {
        let _dropped = Dropped(self.0.clone());
        std::future::pending().await
    }
}

fn waiting_parent(dropped: &Arc<AtomicBool>) -> impl agentix::AnyAgent {
    let child = Agent::builder(ScriptedModel::new().tool_call("wait", json!({})))
        .tool(Waits(dropped.clone()))
        .build();
    let model = ScriptedModel::new().tool_call("research", json!({ "prompt": "Wait." }));
    Agent::builder(model).sub_agent(AgentTool::new("research", "Waits.", child)).build()
}

#[tokio::test]
async fn dropping_the_parents_turn_drops_the_childs() {
    let dropped = Arc::new(AtomicBool::new(false));
    let parent = waiting_parent(&dropped);
    let mut conversation = Conversation::new();
    let turn = parent.run(&mut conversation, "Go.");
    assert!(tokio::time::timeout(Duration::from_millis(50), turn).await.is_err());
    assert!(dropped.load(Ordering::SeqCst), "the child's running tool call was dropped");
}

#[tokio::test]
async fn the_parents_turn_timeout_bounds_the_child() {
    let dropped = Arc::new(AtomicBool::new(false));
    let parent = waiting_parent(&dropped);
    // Bounded by the parent's 50 ms, not hung: the child's turn ends at the parent's deadline
    // (its call failed, and the parent's script has nothing after it), or the parent's does.
    let config =
        agentix::Config { turn_timeout: Some(Duration::from_millis(50)), ..Default::default() };
    let mut conversation = Conversation::with_config(config);
    let turn = parent.run(&mut conversation, "Go.");
    let outcome = tokio::time::timeout(Duration::from_secs(5), turn).await.expect("bounded");
    assert!(dropped.load(Ordering::SeqCst), "the child's running tool call was dropped");
    match outcome {
        Err(agentix::Error::TurnTimedOut { .. }) => {}
        Err(agentix::Error::Model(ModelError::ScriptExhausted { call: 2 })) => {
            let result = tests::logged_results(&conversation)[0];
            let Some(ToolFailure::Failed { message }) = &result.error else { panic!("{result:?}") };
            assert!(message.contains("did not end within"), "{message}");
        }
        other => panic!("{other:?}"),
    }
}

/// Records the `turn_timeout` the child's turn runs under.
static CHILD_TIMEOUT: Mutex<Option<Option<Duration>>> = Mutex::new(None);

#[hook(pre)]
async fn child_limit(turn: &Turn) {
    *CHILD_TIMEOUT.lock().unwrap() = Some(turn.config().turn_timeout);
}

#[tokio::test]
async fn a_childs_turn_timeout_is_cut_to_what_is_left_of_the_parents() {
    let child = Agent::builder(ScriptedModel::new().text("ok")).hook(child_limit).build();
    let model = ScriptedModel::new().tool_call("research", json!({ "prompt": "Go." })).text("ok");
    let child_config =
        agentix::Config { turn_timeout: Some(Duration::from_secs(3600)), ..Default::default() };
    let parent = Agent::builder(model)
        .sub_agent(AgentTool::new("research", "Goes.", child).config(child_config))
        .build();
    let config =
        agentix::Config { turn_timeout: Some(Duration::from_secs(60)), ..Default::default() };
    parent.run(&mut Conversation::with_config(config), "Go.").await.unwrap();
    let limit = CHILD_TIMEOUT.lock().unwrap().expect("the child's pre hook ran").unwrap();
    assert!(limit <= Duration::from_secs(60) && limit > Duration::from_secs(50), "{limit:?}");
}

/// What a typed sub-agent is asked, and answers.
#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(crate = "agentix::serde")]
#[schemars(crate = "agentix::schemars")]
struct Lookup {
    city: String,
}

#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(crate = "agentix::serde")]
#[schemars(crate = "agentix::schemars")]
struct Temperature {
    celsius: i32,
}

#[tokio::test]
async fn a_typed_child_takes_typed_input_and_answers_with_its_json() {
    let child_model = ScriptedModel::new().text(r#"{"celsius": 21}"#);
    let child = Agent::builder(&child_model).output::<Temperature>().build();
    let model = ScriptedModel::new()
        .tool_call("temperature", json!({ "city": "Oslo" }))
        .text("21 degrees.");
    let parent = Agent::builder(&model)
        .sub_agent(AgentTool::new("temperature", "Reads a temperature.", child).input::<Lookup>())
        .build();
    let mut conversation = Conversation::new();
    parent.run(&mut conversation, "How warm is Oslo?").await.unwrap();
    // The model was shown the input's schema, and the child was asked with its JSON.
    let spec = &model.requests()[0].tools[0];
    assert_eq!(spec.parameters["properties"]["city"]["type"], "string");
    assert_eq!(child_model.requests()[0].messages.last().unwrap().text(), r#"{"city":"Oslo"}"#);
    let result = tests::logged_results(&conversation)[0];
    assert_eq!(
        serde_json::from_str::<Temperature>(&result.output).unwrap(),
        Temperature { celsius: 21 }
    );
    // Arguments that do not fit the input are refused before the child runs.
    let model = ScriptedModel::new().tool_call("temperature", json!({ "town": 1 })).text("?");
    let child = Agent::builder(ScriptedModel::new()).output::<Temperature>().build();
    let parent = Agent::builder(&model)
        .sub_agent(AgentTool::new("temperature", "Reads.", child).input::<Lookup>())
        .build();
    let mut conversation = Conversation::new();
    parent.run(&mut conversation, "?").await.unwrap();
    let result = tests::logged_results(&conversation)[0];
    assert!(matches!(result.error, Some(ToolFailure::InvalidArguments { .. })), "{result:?}");
}

#[tokio::test]
async fn a_failing_child_is_a_failed_call_naming_it() {
    let child = Agent::builder(ScriptedModel::new()).build();
    let model = ScriptedModel::new().tool_call("research", json!({ "prompt": "?" })).text("ok");
    let parent = Agent::builder(&model).sub_agent(AgentTool::new("research", "?", child)).build();
    let mut conversation = Conversation::new();
    parent.run(&mut conversation, "?").await.unwrap();
    let result = tests::logged_results(&conversation)[0];
    let Some(ToolFailure::Failed { message }) = &result.error else { panic!("{result:?}") };
    assert!(message.starts_with("the agent `research` failed: "), "{message}");
}

/// The parent's approver: records what it was asked, and answers `Suspend`.
#[derive(Clone, Default)]
struct Suspends(Arc<Mutex<Vec<String>>>);

impl agentix::approval::Approver for Suspends {
    async fn review(&self, call: &ToolCall, _escalation: &Escalation, _turn: &Turn) -> Approval {
        self.0.lock().unwrap().push(call.name.clone());
        Approval::Suspend
    }
}

#[tokio::test]
async fn a_grandchilds_usage_and_escalation_reach_the_top() {
    // top → middle → bottom; the bottom's weather lookup is escalated.
    let weather = Weather::default();
    let calls = weather.calls.clone();
    let bottom_model = Metered::new(
        ScriptedModel::new().tool_call("get_weather", json!({ "city": "Oslo" })).text("No."),
        1,
    );
    let bottom = Agent::builder(bottom_model).tool(weather).hook(ask_first).build();
    let middle_model = Metered::new(
        ScriptedModel::new().tool_call("bottom", json!({ "prompt": "Weather?" })).text("No."),
        10,
    );
    let middle =
        Agent::builder(middle_model).sub_agent(AgentTool::new("bottom", "Looks.", bottom)).build();
    let top_model = Metered::new(
        ScriptedModel::new().tool_call("middle", json!({ "prompt": "Weather?" })).text("No."),
        100,
    );
    let approver = Suspends::default();
    let top = Agent::builder(top_model)
        .sub_agent(AgentTool::new("middle", "Asks.", middle))
        .approver(approver.clone())
        .hook(top_meter)
        .build();
    let nested = Mutex::new(Vec::new());
    let observer = |observation: &Observation<'_>| {
        if let Observation::Nested { agent, observation, .. } = observation
            && let Observation::Nested { agent: inner, observation, .. } = observation
            && let Observation::Approval { call, approval, .. } = observation
        {
            nested.lock().unwrap().push(format!("{agent}/{inner}: {} {approval:?}", call.name));
        }
    };
    top.turn(&mut Conversation::new(), "Weather?").observe(&observer).await.unwrap();
    // The top's approver was asked; its `Suspend` cannot make a sub-agent's turn wait (the
    // call is in `middle`, its grandchild `bottom` and all).
    assert_eq!(*approver.0.lock().unwrap(), ["get_weather"]);
    assert!(calls.lock().unwrap().is_empty());
    let refused = Approval::Reject(
        "the call of `get_weather` in the sub-agent `middle` cannot wait for a person's approval"
            .into(),
    );
    assert_eq!(*nested.lock().unwrap(), [format!("middle/bottom: get_weather {refused:?}")]);
    // Two calls at each level: 2 × 100 + 2 × 10 + 2 × 1.
    let usage = TOP_USAGE.lock().unwrap().expect("the post hook ran");
    assert_eq!(usage.input_tokens, 222);
}

static TOP_USAGE: Mutex<Option<Usage>> = Mutex::new(None);

#[hook(post)]
async fn top_meter(_outcome: &agentix::Outcome, turn: &Turn) {
    *TOP_USAGE.lock().unwrap() = Some(turn.usage());
}

#[tokio::test]
async fn a_policy_guards_the_parents_own_calls_and_its_hooks_run_before_the_agents_own() {
    let record = tests::Record::new();
    let policy = Policy::new().hook(no_deletes).hook(tests::Probe::new("policy", &record));
    let deletes = DeleteNotes::default();
    let ran = deletes.0.clone();
    let model = ScriptedModel::new().tool_call("delete_notes", json!({})).text("Kept.");
    let agent = Agent::builder(model)
        .policy(&policy)
        .tool(deletes)
        .hook(tests::Probe::new("own", &record))
        .build();
    agent.run(&mut Conversation::new(), "Delete my notes.").await.unwrap();
    assert_eq!(ran.load(Ordering::SeqCst), 0);
    assert_eq!(
        record.at(agentix::event::EventKind::AfterModel),
        ["policy", "own", "policy", "own"]
    );
}

/// The forecast for a city.
#[tool]
async fn forecast(city: String) -> Result<String, String> {
    Ok(format!("sunny in {city}"))
}

/// A per-tool hook on a typed tool beside a sub-agent.
#[hook(before_tool, tool = forecast)]
async fn not_oslo(args: &ForecastArgs) -> Verdict<BeforeTool> {
    if args.city == "Oslo" { Verdict::reject("not Oslo") } else { Verdict::Continue }
}

#[tokio::test]
async fn per_tool_hooks_reach_the_tools_beside_a_sub_agent() {
    let child = Agent::builder(ScriptedModel::new().text("ok")).build();
    let model =
        ScriptedModel::new().tool_call("forecast", json!({ "city": "Oslo" })).text("Sunny.");
    let agent = Agent::builder(model)
        .tool(forecast)
        .sub_agent(AgentTool::new("research", "?", child))
        .hook(not_oslo)
        .build();
    let mut conversation = Conversation::new();
    agent.run(&mut conversation, "Weather?").await.unwrap();
    let result = tests::logged_results(&conversation)[0];
    assert!(
        matches!(&result.error, Some(ToolFailure::Rejected { by, .. }) if by == "not_oslo"),
        "{result:?}"
    );
}

#[test]
#[should_panic(expected = "the agent has two tools named `get_weather`")]
fn a_tool_of_a_sub_agents_name_is_refused_at_build() {
    let child = Agent::builder(ScriptedModel::new()).build();
    let _ = Agent::builder(ScriptedModel::new())
        .sub_agent(AgentTool::new("get_weather", "?", child))
        .tool(Weather::default())
        .build();
}

/// What a child's model was shown in its `call`th request (from 0): each message's text.
fn shown(model: &ScriptedModel, call: usize) -> Vec<String> {
    model.requests()[call].messages.iter().map(|message| message.text().into_owned()).collect()
}

#[tokio::test]
async fn a_kept_conversation_goes_on_from_the_earlier_calls_and_loads_back_with_the_parent() {
    let child_model =
        ScriptedModel::new().text("Noted: Oslo.").text("You said Oslo.").text("Still Oslo.");
    let child = Agent::builder(&child_model).build();
    let model = ScriptedModel::new()
        .tool_call("notes", json!({ "prompt": "Remember Oslo." }))
        .text("Noted.")
        .tool_call("notes", json!({ "prompt": "What did I say?" }))
        .text("Oslo.");
    let parent = Agent::builder(&model)
        .sub_agent(AgentTool::new("notes", "Keeps notes.", &child).keep_conversation())
        .build();
    let mut conversation = Conversation::new().with_id("c");
    parent.run(&mut conversation, "Remember Oslo.").await.unwrap();
    parent.run(&mut conversation, "What did I say?").await.unwrap();
    // The second call went on from the first: the child saw its earlier exchange.
    assert_eq!(shown(&child_model, 0), ["Remember Oslo."]);
    assert_eq!(shown(&child_model, 1), ["Remember Oslo.", "Noted: Oslo.", "What did I say?"]);
    // The parent's log keeps what the child said, after each step's results.
    let kept: Vec<(&str, usize)> = conversation
        .log()
        .iter()
        .filter_map(|entry| match entry {
            agentix::Entry::Delegated { agent, log, .. } => Some((agent.as_str(), log.len())),
            _ => None,
        })
        .collect();
    assert_eq!(kept, [("notes", 2), ("notes", 2)]);
    conversation.validate().unwrap();
    // Stored and loaded back, the parent's conversation still holds the child's.
    let json = serde_json::to_string(&conversation).unwrap();
    let mut loaded: Conversation = serde_json::from_str(&json).unwrap();
    let model = ScriptedModel::new()
        .tool_call("notes", json!({ "prompt": "And now?" }))
        .text("Oslo, still.");
    let parent = Agent::builder(&model)
        .sub_agent(AgentTool::new("notes", "Keeps notes.", &child).keep_conversation())
        .build();
    parent.run(&mut loaded, "And now?").await.unwrap();
    assert_eq!(shown(&child_model, 2).len(), 5, "{:?}", shown(&child_model, 2));
}

#[tokio::test]
async fn without_keeping_each_call_starts_afresh() {
    let child_model = ScriptedModel::new().text("Noted.").text("I know nothing.");
    let child = Agent::builder(&child_model).build();
    let model = ScriptedModel::new()
        .tool_call("notes", json!({ "prompt": "Remember Oslo." }))
        .tool_call("notes", json!({ "prompt": "What did I say?" }))
        .text("Nothing.");
    let parent =
        Agent::builder(&model).sub_agent(AgentTool::new("notes", "Keeps notes.", &child)).build();
    let mut conversation = Conversation::new();
    parent.run(&mut conversation, "Go.").await.unwrap();
    assert_eq!(shown(&child_model, 1), ["What did I say?"]);
    assert!(
        !conversation.log().iter().any(|entry| matches!(entry, agentix::Entry::Delegated { .. }))
    );
}

#[tokio::test]
async fn a_step_holding_a_kept_childs_entries_does_not_stop_to_wait() {
    let child = Agent::builder(ScriptedModel::new().text("Noted.")).build();
    let weather = Weather::default();
    let calls = weather.calls.clone();
    let model = ScriptedModel::new()
        .tool_calls([
            ("notes", json!({ "prompt": "Note Oslo." })),
            ("get_weather", json!({ "city": "Oslo" })),
        ])
        .text("Noted; no weather.");
    let approver = Suspends::default();
    let parent = Agent::builder(&model)
        .tool(weather)
        .sub_agent(AgentTool::new("notes", "Notes.", child).keep_conversation())
        .hook(ask_first)
        .approver(approver.clone())
        .build();
    let mut conversation = Conversation::new();
    let answer = parent.run(&mut conversation, "Go.").await.unwrap();
    assert_eq!(answer.joined_text(), "Noted; no weather.");
    assert_eq!(*approver.0.lock().unwrap(), ["get_weather"], "asked, and it said wait");
    assert!(calls.lock().unwrap().is_empty());
    let results = tests::logged_results(&conversation);
    let Some(ToolFailure::Rejected { reason, .. }) = &results[1].error else { panic!() };
    assert!(reason.contains("cannot stop to wait for a person"), "{reason}");
    // The kept entries are in the log, after the step's results.
    assert!(
        conversation.log().iter().any(|entry| matches!(entry, agentix::Entry::Delegated { .. }))
    );
    conversation.validate().unwrap();
}
