//! The stored form of a conversation: what serde writes of it — every kind of log entry, its
//! config, its scope — is pinned by a committed fixture per format (`tests/fixtures/stored/`).
//! Today's code writes exactly the current fixture; every fixture, of every format, loads
//! forever. A change to the stored form therefore fails here until it raises
//! `Conversation::FORMAT`, adds a migration from the format before, and adds its own fixture.

use std::time::Duration;

use agentix::event::EventKind;
use agentix::event::{AfterModel, BeforeModel, BeforeTool, Pre, StepStart};
use agentix::session::{Session, Task};
use agentix::{
    Agent, Config, Conversation, Entry, Error, Message, Part, ScriptedModel, ToolCall, Turn,
    Verdict,
    approval::Approval,
    context::Summarizer,
    hook,
    model::{ModelError, ModelRequest},
    scope::ScopeValue,
};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tests::Weather;

/// Every format's fixture, oldest first; the last is the current format's.
const FIXTURES: [(u32, &str); 4] = [
    (1, include_str!("../../fixtures/stored/conversation-format-1.json")),
    (2, include_str!("../../fixtures/stored/conversation-format-2.json")),
    (3, include_str!("../../fixtures/stored/conversation-format-3.json")),
    (4, include_str!("../../fixtures/stored/conversation-format-4.json")),
];

/// The turns each format's fixture holds: format 3 added an eighth, whose sub-agent keeps its
/// conversation, and format 4 a ninth, whose step waits at two calls while another runs; the
/// fixtures before read as the current one's first turns.
fn turns_of(format: u32) -> u64 {
    match format {
        ..3 => 7,
        3 => 8,
        _ => 9,
    }
}

/// The user, kept in the scope.
#[derive(Serialize, Deserialize)]
struct User {
    name: String,
}

impl ScopeValue for User {
    const KEY: &'static str = "user";
}

#[hook(pre, durable)]
async fn profile(turn: &mut Turn) -> Verdict<Pre> {
    turn.inject("The user prefers Celsius.");
    Verdict::Continue
}

#[hook(pre, parallel, on_error = skip)]
async fn flaky_index(_turn: &Turn) -> String {
    panic!("the index is offline")
}

#[hook(post, durable)]
async fn remember(outcome: &agentix::Outcome, turn: &mut Turn) {
    if outcome.is_ok() {
        turn.inject("Remembered the answer.");
    }
}

/// Halts the turn that asks for the forbidden.
#[hook(before_model)]
async fn guard(_request: &mut ModelRequest, turn: &mut Turn) -> Verdict<BeforeModel> {
    if turn.user_message().text().contains("forbidden") {
        Verdict::halt("not discussed")
    } else {
        Verdict::Continue
    }
}

/// Sends a person every deletion.
#[hook(before_tool)]
async fn ask_first(call: &mut ToolCall) -> Verdict<BeforeTool> {
    if call.name == "get_weather" && call.arguments["city"] == "Delete" {
        Verdict::escalate("a person decides")
    } else {
        Verdict::Continue
    }
}

/// Accepts every answer: the fixture's agent has a hook at every content event.
#[hook(after_model)]
async fn accept(_message: &agentix::AssistantMessage) -> Verdict<AfterModel> {
    Verdict::Continue
}

/// Rejects the session's tasks that have no title, at their first step.
#[hook(step_start)]
async fn titled_only(turn: &Turn) -> Verdict<StepStart> {
    if turn.user_message().text().contains("untitled") {
        Verdict::reject("a task needs a title")
    } else {
        Verdict::Continue
    }
}

/// Summarizes what compaction drops, by count.
struct Count;

impl Summarizer for Count {
    async fn summarize(&self, earlier: Option<&str>, dropped: &[Message], _: &Turn) -> String {
        format!("{} and {} messages more", earlier.unwrap_or("nothing"), dropped.len())
    }
}

/// A conversation holding every kind of entry, made by the real loop: durable `pre` and `post`
/// output, a skipped parallel hook, tool calls and their results, a halt, a failure, a
/// suspension and its resumption, a session's task, a summary; a config and a scope of its own.
async fn every_entry() -> Conversation {
    let model = ScriptedModel::new()
        // Turn 1: a tool call, then the answer.
        .tool_call("get_weather", json!({ "city": "Oslo" }))
        .text("Sunny in Oslo.")
        // Turn 3: the model fails.
        .error(ModelError::Transport("connection reset".into()))
        // Turn 4: a call that waits for a person, then the answer.
        .tool_call("get_weather", json!({ "city": "Delete" }))
        .text("Done.")
        // Turn 5: a session's task.
        .text("Tasked.")
        // Turn 6: answered with the older turns summarized.
        .text("Summarized.");
    let agent = Agent::builder(model)
        .tool(Weather::default())
        .hook(profile)
        .hook(flaky_index)
        .hook(guard)
        .hook(accept)
        .hook(ask_first)
        .hook(remember)
        .approver(|_: ToolCall, _: agentix::verdict::Escalation| async { Approval::Suspend })
        .summarizer(Count)
        .build();
    let config = Config {
        max_steps: 8,
        max_retries: 2,
        tool_timeout: Some(Duration::from_millis(1_500)),
        model_timeout: Some(Duration::from_secs(30)),
        turn_timeout: Some(Duration::from_nanos(90_000_000_250)),
        ..Config::default()
    };
    let scope = agentix::scope::Scope::new().with(User { name: "Ada".into() });
    let mut conversation = Conversation::with_config(config).with_id("c-1").with_scope(scope);

    agent.run(&mut conversation, "Weather in Oslo?").await.unwrap();
    assert!(matches!(
        agent.run(&mut conversation, "Tell me the forbidden.").await,
        Err(Error::Halted { .. })
    ));
    assert!(agent.run(&mut conversation, "Again?").await.is_err());
    assert!(matches!(
        agent.run(&mut conversation, "Delete it.").await,
        Err(Error::AwaitingApproval { .. })
    ));
    let edited = ToolCall::new("call_2", "get_weather", json!({ "city": "Bergen" }));
    agent.resume(&mut conversation, Approval::Edit(edited)).await.unwrap();

    let mut session = Session::builder(&agent).hook(titled_only).conversation(conversation).build();
    session.enqueue(Task::new("A task.").titled("the task").max_steps(3)).unwrap();
    session.enqueue(Task::new("An untitled task.")).unwrap();
    session.run().await.unwrap();
    let mut conversation = session.into_conversation();

    conversation.config_mut().context_budget = 150;
    conversation.config_mut().injection_reserve = 40;
    agent.run(&mut conversation, "And now?").await.unwrap();

    // Turn 8: a sub-agent that keeps its conversation beside this one.
    let notes = Agent::builder(ScriptedModel::new().text("Noted.")).build();
    let model = ScriptedModel::new()
        .tool_call("notes", json!({ "prompt": "Note the weather." }))
        .text("Noted it.");
    let delegating = Agent::builder(model)
        .sub_agent(
            agentix::delegate::AgentTool::new("notes", "Keeps notes.", notes).keep_conversation(),
        )
        .build();
    // Room for the whole turn (the budget above is the sixth turn's, to make a summary); the
    // stored config stays as the formats before hold it.
    let budget = conversation.config().context_budget;
    conversation.config_mut().context_budget = 10_000;
    delegating.run(&mut conversation, "Note it.").await.unwrap();

    // Turn 9: a step of three calls, two of which wait for a person while the third runs
    // beside them; each waiting call is answered in turn.
    let model = ScriptedModel::new()
        .tool_calls([
            ("get_weather", json!({ "city": "Delete" })),
            ("get_weather", json!({ "city": "Oslo" })),
            ("get_weather", json!({ "city": "Delete" })),
        ])
        .text("One deleted, one kept.");
    let waiting = Agent::builder(model)
        .tool(Weather::default())
        .hook(ask_first)
        .approver(|_: ToolCall, _: agentix::verdict::Escalation| async { Approval::Suspend })
        .build();
    let first = waiting.run(&mut conversation, "Delete both.").await;
    assert!(matches!(first, Err(Error::AwaitingApproval { .. })), "{first:?}");
    let second = waiting.resume(&mut conversation, Approval::Approve).await;
    assert!(matches!(second, Err(Error::AwaitingApproval { .. })), "{second:?}");
    waiting.resume(&mut conversation, Approval::Reject("kept".into())).await.unwrap();
    conversation.config_mut().context_budget = budget;
    conversation
}

/// The current fixture as a format before it holds it: its first `turns` turns.
fn current_upto(turns: u64) -> Value {
    let mut current = current();
    let log = current["log"].as_array_mut().unwrap();
    log.retain(|entry| entry["turn"].as_u64().unwrap() <= turns);
    current["turns"] = json!(turns);
    current
}

/// The name of each kind of entry: a new kind fails to compile here until the fixture has it.
fn kind(entry: &Entry) -> &'static str {
    match entry {
        Entry::User { task: None, .. } => "user",
        Entry::User { task: Some(_), .. } => "user in a task",
        Entry::Assistant { .. } => "assistant",
        Entry::ToolResults { .. } => "tool_results",
        Entry::Halted { event: EventKind::StepStart, .. } => "halted at a task's step",
        Entry::Halted { .. } => "halted",
        Entry::HookOutput { .. } => "hook_output",
        Entry::HookSkipped { .. } => "hook_skipped",
        Entry::Failed { .. } => "failed",
        Entry::Suspended { .. } => "suspended",
        Entry::Resumed { .. } => "resumed",
        Entry::Summary { .. } => "summary",
        Entry::Delegated { .. } => "delegated",
    }
}

/// Fails naming the first place where `written` differs from `expected`.
fn assert_same_form(written: &Value, expected: &Value) {
    if written == expected {
        return;
    }
    let pretty = |value: &Value| serde_json::to_string_pretty(value).unwrap();
    let (written, expected) = (pretty(written), pretty(expected));
    let line = written.lines().zip(expected.lines()).position(|(a, b)| a != b).unwrap_or(0);
    let around = |text: &str| {
        text.lines().skip(line.saturating_sub(3)).take(7).collect::<Vec<_>>().join("\n")
    };
    panic!(
        "the stored form changed at line {} of the fixture: raise Conversation::FORMAT, migrate \
         from the format before, and add the new format's fixture (AGENTIX_WRITE_FIXTURE=1)\n\
         written:\n{}\nfixture:\n{}",
        line + 1,
        around(&written),
        around(&expected)
    );
}

fn current() -> Value {
    serde_json::from_str(FIXTURES.last().unwrap().1).unwrap()
}

#[tokio::test]
async fn todays_code_writes_the_current_fixture() {
    let written = serde_json::to_value(every_entry().await).unwrap();
    if std::env::var_os("AGENTIX_WRITE_FIXTURE").is_some() {
        // Only for a new format's fixture: the ones before it stay as they are.
        let path = format!(
            "{}/fixtures/stored/conversation-format-{}.json",
            env!("CARGO_MANIFEST_DIR"),
            Conversation::FORMAT
        );
        std::fs::write(path, serde_json::to_string_pretty(&written).unwrap() + "\n").unwrap();
    }
    assert_same_form(&written, &current());
    assert_eq!(written["format"], json!(Conversation::FORMAT));
    assert_eq!(FIXTURES.last().unwrap().0, Conversation::FORMAT);
}

#[test]
fn every_fixture_loads_and_reads_as_the_current_form() {
    for (format, fixture) in FIXTURES {
        let loaded: Conversation = serde_json::from_str(fixture)
            .unwrap_or_else(|error| panic!("format {format} no longer loads: {error}"));
        let expected = current_upto(turns_of(format));
        assert_same_form(&serde_json::to_value(&loaded).unwrap(), &expected);
        assert_eq!(loaded.id(), Some("c-1"));
        assert_eq!(loaded.config().tool_timeout, Some(Duration::from_millis(1_500)));
        assert_eq!(loaded.config().turn_timeout, Some(Duration::from_nanos(90_000_000_250)));
        assert_eq!(loaded.scope().get::<User>().map(|user| user.name.as_str()), Some("Ada"));
    }
}

#[test]
fn the_fixture_holds_every_kind_of_entry() {
    let loaded: Conversation = serde_json::from_value(current()).unwrap();
    let kinds: std::collections::BTreeSet<&str> = loaded.log().iter().map(kind).collect();
    let every = [
        "user",
        "user in a task",
        "assistant",
        "tool_results",
        "halted",
        "halted at a task's step",
        "hook_output",
        "hook_skipped",
        "failed",
        "suspended",
        "resumed",
        "summary",
        "delegated",
    ];
    assert_eq!(kinds, every.into_iter().collect(), "{:#?}", loaded.log());
    let parts = loaded.log().iter().filter_map(|entry| match entry {
        Entry::HookOutput { parts, .. } => Some(parts),
        _ => None,
    });
    assert!(parts.flatten().all(|part| matches!(part, Part::Text(_))));
}

#[test]
fn a_conversation_written_before_formats_is_of_the_first() {
    let mut unversioned: Value = serde_json::from_str(FIXTURES[0].1).unwrap();
    assert_eq!(unversioned.as_object_mut().unwrap().remove("format"), Some(json!(1)));
    let loaded: Conversation = serde_json::from_value(unversioned).unwrap();
    assert_same_form(&serde_json::to_value(&loaded).unwrap(), &current_upto(turns_of(1)));
}

#[test]
fn format_1s_turn_start_reads_as_step_start() {
    let first: Value = serde_json::from_str(FIXTURES[0].1).unwrap();
    let halted_at = |log: &Value| -> Vec<Value> {
        let entries = log["log"].as_array().unwrap().iter();
        entries
            .filter(|entry| entry["entry"] == "halted")
            .map(|entry| entry["event"].clone())
            .collect()
    };
    assert_eq!(halted_at(&first), [json!("before_model"), json!("turn_start")]);
    let loaded: Conversation = serde_json::from_value(first).unwrap();
    let now = serde_json::to_value(&loaded).unwrap();
    assert_eq!(halted_at(&now), [json!("before_model"), json!("step_start")]);
    assert_eq!(now["format"], json!(Conversation::FORMAT));
}

#[test]
fn a_format_this_agentix_does_not_read_is_refused_naming_it() {
    for format in [0, Conversation::FORMAT + 1] {
        let mut stored = current();
        stored["format"] = json!(format);
        let error = serde_json::from_value::<Conversation>(stored).unwrap_err().to_string();
        assert!(
            error.contains(&format!("stored in format {format};"))
                && error.contains(&format!("reads formats 1 to {}", Conversation::FORMAT)),
            "{error}"
        );
    }
}
