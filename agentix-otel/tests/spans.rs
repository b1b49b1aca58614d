//! The spans a turn reports, through `tracing-opentelemetry` to the OpenTelemetry SDK's
//! in-memory exporter, checked against the GenAI semantic conventions: names, kinds, parents,
//! attributes, and the hooks' decisions as events.

mod support;

use agentix::event::BeforeTool;
use agentix::session::{Plan, Session, Task, TaskStatus};
use agentix::{
    Agent, Conversation, Model, ScriptedModel, ToolCall, Turn, Verdict,
    model::{ModelError, ModelRequest, ModelResponse, NextModel, Usage},
};
use agentix::{Error, ToolResult, approval::Approval, tool::NextTool};
use opentelemetry::trace::{SpanKind, Status};
use serde_json::json;
use support::{
    Priced, attr, collect, events, failed, int, is_child, is_root, one, operations, text,
};
use tests::{Flaky, Weather};

/// What each call of the tests' priced model costs.
const COST: Usage =
    Usage { input_tokens: 120, output_tokens: 8, cache_read_tokens: 96, cache_write_tokens: 16 };

#[agentix::hook(before_tool)]
async fn allow(_call: &mut ToolCall, _turn: &mut Turn) -> Verdict<BeforeTool> {
    Verdict::Continue
}

#[tokio::test]
async fn a_model_tool_model_turn_is_an_agent_span_over_two_chats_and_a_tool() {
    let collected = collect();
    let model = ScriptedModel::new()
        .tool_call("get_weather", json!({ "city": "Oslo" }))
        .text("Sunny in Oslo.");
    let agent = Agent::builder(Priced(model, COST))
        .name("forecaster")
        .tool(Weather::default())
        .hook(allow)
        .build();
    let mut conversation = Conversation::new().with_id("conversation-7");
    agent.run(&mut conversation, "Weather in Oslo?").await.unwrap();

    let spans = collected.spans();
    let turn = one(&spans, "invoke_agent forecaster");
    assert!(is_root(turn));
    assert_eq!(turn.span_kind, SpanKind::Internal);
    assert_eq!(text(turn, "gen_ai.operation.name"), "invoke_agent");
    assert_eq!(text(turn, "gen_ai.agent.name"), "forecaster");
    assert_eq!(text(turn, "gen_ai.provider.name"), "test-provider");
    assert_eq!(text(turn, "gen_ai.request.model"), "model-1");
    assert_eq!(text(turn, "gen_ai.conversation.id"), "conversation-7");
    // The turn's usage: both calls'.
    assert_eq!(int(turn, "gen_ai.usage.input_tokens"), 240);
    assert_eq!(int(turn, "gen_ai.usage.output_tokens"), 16);
    assert_eq!(int(turn, "gen_ai.usage.cache_read.input_tokens"), 192);
    assert_eq!(int(turn, "gen_ai.usage.cache_creation.input_tokens"), 32);
    assert_eq!(attr(turn, "error.type"), None);

    // Under it, in order: a model call, the tool's call, a model call.
    let children: Vec<&str> =
        spans.iter().filter(|span| is_child(span, turn)).map(|span| span.name.as_ref()).collect();
    assert_eq!(children, ["chat model-1", "execute_tool get_weather", "chat model-1"]);
    for (index, chat) in operations(&spans, "chat").into_iter().enumerate() {
        assert_eq!(chat.span_kind, SpanKind::Client);
        assert_eq!(text(chat, "gen_ai.provider.name"), "test-provider");
        assert_eq!(text(chat, "gen_ai.request.model"), "model-1");
        assert_eq!(text(chat, "gen_ai.conversation.id"), "conversation-7");
        assert_eq!(text(chat, "gen_ai.output.type"), "text");
        assert_eq!(attr(chat, "gen_ai.request.stream"), Some(false.into()));
        assert_eq!(int(chat, "gen_ai.usage.input_tokens"), 120);
        assert_eq!(int(chat, "gen_ai.usage.output_tokens"), 8);
        assert_eq!(int(chat, "gen_ai.usage.cache_read.input_tokens"), 96);
        assert_eq!(int(chat, "gen_ai.usage.cache_creation.input_tokens"), 16);
        assert_eq!(int(chat, "agentix.step"), index as i64);
        assert_eq!(int(chat, "agentix.attempt"), 1);
        assert!(!failed(chat));
    }
    let tool = one(&spans, "execute_tool get_weather");
    assert_eq!(tool.span_kind, SpanKind::Internal);
    assert_eq!(text(tool, "gen_ai.operation.name"), "execute_tool");
    assert_eq!(text(tool, "gen_ai.tool.name"), "get_weather");
    assert_eq!(text(tool, "gen_ai.tool.call.id"), "call_1");
    assert_eq!(text(tool, "gen_ai.tool.type"), "function");
    assert_eq!(attr(tool, "error.type"), None);

    // The hook's decision is an event of the turn's span.
    let decisions = events(turn, "agentix.hook");
    assert_eq!(decisions.len(), 1, "{decisions:?}");
    let decision = &decisions[0];
    for (key, value) in [
        ("agentix.event", "before_tool"),
        ("agentix.hook", "allow"),
        ("agentix.decision", "continue"),
    ] {
        assert!(decision.contains(&(key.to_owned(), value.to_owned())), "{key} in {decision:?}");
    }
}

/// Calls the model again once if it fails.
struct AgainOnce;

impl agentix::on::WrapModel for AgainOnce {
    fn name(&self) -> &'static str {
        "again_once"
    }

    async fn wrap_model(
        &self,
        request: &ModelRequest,
        _: &Turn,
        next: &impl NextModel,
    ) -> Result<ModelResponse, ModelError> {
        match next.call(request).await {
            Err(_) => next.call(request).await,
            answer => answer,
        }
    }
}

#[tokio::test]
async fn a_retried_model_call_is_a_chat_span_per_attempt_the_first_failed() {
    let collected = collect();
    let model = ScriptedModel::new()
        .error(ModelError::Provider {
            provider: "test".into(),
            status: 503,
            message: "overloaded".into(),
            retry_after: None,
        })
        .text("hello");
    let agent = Agent::builder(&model).hook(AgainOnce).build();
    agent.run(&mut Conversation::new(), "hi").await.unwrap();

    let spans = collected.spans();
    // No name, no id, no model: the operations alone name the spans.
    let turn = one(&spans, "invoke_agent");
    assert_eq!(attr(turn, "gen_ai.agent.name"), None);
    assert_eq!(text(turn, "gen_ai.provider.name"), "scripted");
    let chats = operations(&spans, "chat");
    assert_eq!(chats.len(), 2);
    let (first, second) = (chats[0], chats[1]);
    assert_eq!(first.name, "chat");
    assert!(is_child(first, turn) && is_child(second, turn));
    assert_eq!((int(first, "agentix.attempt"), int(second, "agentix.attempt")), (1, 2));
    assert_eq!((int(first, "agentix.step"), int(second, "agentix.step")), (0, 0));
    // A provider's HTTP status is the error's type, as the conventions have it.
    assert_eq!(text(first, "error.type"), "503");
    assert!(failed(first));
    assert_eq!(attr(second, "error.type"), None);
    assert!(!failed(second) && !failed(turn));
    let returned = events(turn, "agentix.hook");
    assert!(
        returned.iter().any(|event| event.contains(&("agentix.hook".into(), "again_once".into()))
            && event.contains(&("agentix.decision".into(), "returned".into()))),
        "{returned:?}"
    );
}

#[tokio::test]
async fn a_failed_tool_call_and_an_unknown_tool_say_why_on_their_spans() {
    let collected = collect();
    let model = ScriptedModel::new()
        .tool_calls([("flaky", json!({ "city": "Oslo" })), ("teleport", json!({}))])
        .text("It did not work.");
    let flaky = Flaky { failures: 1, calls: Default::default() };
    let agent = Agent::builder(&model).tool(flaky).build();
    agent.run(&mut Conversation::new(), "go").await.unwrap();

    let spans = collected.spans();
    let flaky = one(&spans, "execute_tool flaky");
    assert_eq!(text(flaky, "error.type"), "tool_error");
    assert!(failed(flaky));
    // The tool's message may quote its arguments: content, left out unless asked for.
    assert!(matches!(&flaky.status, Status::Error { description } if description.is_empty()));
    let unknown = one(&spans, "execute_tool teleport");
    assert_eq!(text(unknown, "error.type"), "unknown_tool");
    // The turn went on, and ended well.
    let turn = one(&spans, "invoke_agent");
    assert!(!failed(turn));
    assert_eq!(operations(&spans, "chat").len(), 2);
}

#[tokio::test]
async fn a_failed_turn_names_its_error() {
    let collected = collect();
    let model = ScriptedModel::new();
    let agent = Agent::builder(&model).build();
    let failed_turn = agent.run(&mut Conversation::new(), "hi").await;
    assert!(failed_turn.is_err());

    let spans = collected.spans();
    let turn = one(&spans, "invoke_agent");
    assert_eq!(text(turn, "error.type"), "script_exhausted");
    assert!(failed(turn));
    assert_eq!(text(one(&spans, "chat"), "error.type"), "script_exhausted");
}

#[tokio::test]
async fn a_session_is_a_workflow_its_plan_holding_its_tasks_turns() {
    let collected = collect();
    let model = ScriptedModel::new().text("first done").text("second done").text("alone done");
    let agent = Agent::builder(&model).name("worker").build();
    let mut session = Session::builder(&agent).name("research").build();
    session
        .submit_plan(Plan::new([Task::new("first"), Task::new("second")]).titled("two steps"))
        .unwrap();
    session.enqueue(Task::new("alone")).unwrap();
    let reports = session.run().await.unwrap();
    assert!(reports.iter().all(|report| report.status == TaskStatus::Success));

    let spans = collected.spans();
    let workflow = one(&spans, "invoke_workflow research");
    assert!(is_root(workflow));
    assert_eq!(text(workflow, "gen_ai.operation.name"), "invoke_workflow");
    assert_eq!(text(workflow, "gen_ai.workflow.name"), "research");
    assert_eq!(int(workflow, "agentix.tasks.ended"), 3);
    let plan = one(&spans, "plan two steps");
    assert!(is_child(plan, workflow));
    assert_eq!(int(plan, "agentix.plan.tasks"), 2);
    assert_eq!(int(plan, "agentix.plan.succeeded"), 2);
    let turns = operations(&spans, "invoke_agent");
    assert_eq!(turns.len(), 3);
    // The task queued alone ran first, under the run; the plan's two under the plan.
    assert!(is_child(turns[0], workflow));
    assert!(is_child(turns[1], plan) && is_child(turns[2], plan));
    for turn in turns {
        assert_eq!(turn.name, "invoke_agent worker");
        assert_eq!(
            operations(&spans, "chat").iter().filter(|chat| is_child(chat, turn)).count(),
            1
        );
    }
    // The session's events are the run's.
    let session_events = events(workflow, "agentix.session");
    assert!(session_events.len() >= 6, "{session_events:?}");
}

/// Calls the tool again once if it fails.
struct ToolAgainOnce;

impl agentix::on::WrapTool for ToolAgainOnce {
    fn name(&self) -> &'static str {
        "tool_again_once"
    }

    async fn wrap_tool(&self, call: &ToolCall, _: &Turn, next: &impl NextTool) -> ToolResult {
        let result = next.call(call).await;
        if result.is_error() { next.call(call).await } else { result }
    }
}

#[tokio::test]
async fn a_retried_tool_call_is_an_execute_tool_span_per_attempt() {
    let collected = collect();
    let model = ScriptedModel::new().tool_call("flaky", json!({ "city": "Oslo" })).text("Done.");
    let flaky = Flaky { failures: 1, calls: Default::default() };
    let agent = Agent::builder(&model).tool(flaky).hook(ToolAgainOnce).build();
    agent.run(&mut Conversation::new(), "go").await.unwrap();

    let spans = collected.spans();
    let attempts = operations(&spans, "execute_tool");
    assert_eq!(attempts.len(), 2);
    assert_eq!((int(attempts[0], "agentix.attempt"), int(attempts[1], "agentix.attempt")), (1, 2));
    assert_eq!(text(attempts[0], "gen_ai.tool.call.id"), text(attempts[1], "gen_ai.tool.call.id"));
    assert_eq!(text(attempts[0], "error.type"), "tool_error");
    assert_eq!(attr(attempts[1], "error.type"), None);
}

#[agentix::hook(before_tool)]
async fn ask_first(_call: &mut ToolCall, _turn: &mut Turn) -> Verdict<BeforeTool> {
    Verdict::escalate("a person decides")
}

#[tokio::test]
async fn a_turn_that_waits_for_a_person_is_not_a_failure_and_its_resumption_is_a_span_too() {
    let collected = collect();
    let model = ScriptedModel::new()
        .tool_call("get_weather", json!({ "city": "Oslo" }))
        .text("Sunny in Oslo.");
    let agent = Agent::builder(Priced(model, COST))
        .tool(Weather::default())
        .hook(ask_first)
        .approver(|_call: ToolCall, _| async { Approval::Suspend })
        .build();
    let mut conversation = Conversation::new();
    let waiting = agent.run(&mut conversation, "Weather?").await;
    assert!(matches!(waiting, Err(Error::AwaitingApproval { .. })));
    agent.resume(&mut conversation, Approval::Approve).await.unwrap();

    let spans = collected.spans();
    let turns = operations(&spans, "invoke_agent");
    assert_eq!(turns.len(), 2);
    let (asked, resumed) = (turns[0], turns[1]);
    assert_eq!(attr(asked, "agentix.awaiting_approval"), Some(true.into()));
    assert!(!failed(asked));
    assert_eq!(attr(asked, "agentix.resumed"), Some(false.into()));
    assert_eq!(attr(resumed, "agentix.resumed"), Some(true.into()));
    assert_eq!(int(asked, "agentix.turn"), int(resumed, "agentix.turn"));
    // Each part counts its own model call: together, the turn's.
    assert_eq!(int(asked, "gen_ai.usage.input_tokens"), 120);
    assert_eq!(int(resumed, "gen_ai.usage.input_tokens"), 120);
    let suspended = events(asked, "agentix.approval");
    assert_eq!(suspended.len(), 1, "{suspended:?}");
    assert!(suspended[0].contains(&("agentix.approval".into(), "suspend".into())));
    let approved = events(resumed, "agentix.approval");
    assert!(approved[0].contains(&("agentix.approval".into(), "approve".into())), "{approved:?}");
    // The call ran in the resumed turn.
    let call = one(&spans, "execute_tool get_weather");
    assert!(is_child(call, resumed));
}

/// Never answers: a call cut short only by its turn's drop.
struct Hang;

impl agentix::Tool for Hang {
    const NAME: &'static str = "hang";
    type Args = serde_json::Value;
    type Output = String;
    type Error = std::convert::Infallible;

    fn description(&self) -> &str {
        "Never answers."
    }

    async fn call(&self, _: serde_json::Value, _: &Turn) -> Result<String, Self::Error> {
        std::future::pending().await
    }
}

#[tokio::test]
async fn a_turn_dropped_midway_says_it_was_cancelled() {
    let collected = collect();
    let model = ScriptedModel::new().tool_call("hang", json!({}));
    let agent = Agent::builder(&model).tool(Hang).build();
    let mut conversation = Conversation::new();
    let turn = agent.run(&mut conversation, "Wait.");
    let cut = tokio::time::timeout(std::time::Duration::from_millis(20), turn).await;
    assert!(cut.is_err(), "the turn never ends on its own");

    let spans = collected.spans();
    let turn = one(&spans, "invoke_agent");
    assert_eq!(text(turn, "error.type"), "cancelled");
    assert!(failed(turn));
    // The call it cut short ends with it.
    one(&spans, "execute_tool hang");
}

/// Sends the first answer back once, with why.
#[agentix::hook(after_model)]
async fn once_more(
    message: &agentix::AssistantMessage,
    turn: &Turn,
) -> Verdict<agentix::event::AfterModel> {
    if turn.retries() == 0 && !message.calls_tools() {
        Verdict::retry("say it again")
    } else {
        Verdict::Continue
    }
}

#[tokio::test]
async fn a_retry_the_answers_hook_asks_for_is_the_steps_next_attempt() {
    let collected = collect();
    let model = ScriptedModel::new().text("Draft.").text("Final.");
    let agent = Agent::builder(&model).hook(once_more).build();
    agent.run(&mut Conversation::new(), "hi").await.unwrap();

    let spans = collected.spans();
    let chats = operations(&spans, "chat");
    assert_eq!(chats.len(), 2);
    assert_eq!((int(chats[0], "agentix.step"), int(chats[1], "agentix.step")), (0, 0));
    assert_eq!((int(chats[0], "agentix.attempt"), int(chats[1], "agentix.attempt")), (1, 2));
    let turn = one(&spans, "invoke_agent");
    let retried = events(turn, "agentix.hook");
    assert!(retried[0].contains(&("agentix.decision".into(), "retry".into())), "{retried:?}");
    assert!(
        !retried[0].iter().any(|(key, _)| key == "agentix.reason"),
        "the feedback may quote content: {retried:?}"
    );
}

/// Answers after 30 s, unless cut short.
struct Slow;

impl Model for Slow {
    async fn complete(&self, _: &ModelRequest) -> Result<ModelResponse, ModelError> {
        tokio::time::sleep(std::time::Duration::from_secs(30)).await;
        Ok(agentix::AssistantMessage::text("late").into())
    }
}

/// Trips once the model call is under way (a check that trips at once cuts a call never made).
#[agentix::hook(tripwire)]
async fn refuse_all(_request: &ModelRequest) -> agentix::verdict::Trip {
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    agentix::verdict::Trip::trip("nothing goes through")
}

#[tokio::test]
async fn a_model_call_a_tripwire_cuts_short_ends_cancelled() {
    let collected = collect();
    let agent = Agent::builder(Slow).hook(refuse_all).build();
    let tripped = agent.run(&mut Conversation::new(), "hi").await;
    assert!(matches!(tripped, Err(Error::Tripped { .. })));

    let spans = collected.spans();
    let chat = one(&spans, "chat");
    assert_eq!(text(chat, "error.type"), "cancelled");
    assert!(failed(chat));
    let turn = one(&spans, "invoke_agent");
    assert_eq!(text(turn, "error.type"), "tripped");
    let durations = collected.histogram(agentix_otel::OPERATION_DURATION);
    assert_eq!(durations.len(), 1);
    assert_eq!(support::point_attr(&durations[0].0, "error.type").as_deref(), Some("cancelled"));
}

/// Answers in 30 ms: two calls of it running together overlap.
struct Wait;

impl agentix::Tool for Wait {
    const NAME: &'static str = "wait";
    type Args = serde_json::Value;
    type Output = String;
    type Error = std::convert::Infallible;

    fn description(&self) -> &str {
        "Waits a little."
    }

    async fn call(&self, _: serde_json::Value, _: &Turn) -> Result<String, Self::Error> {
        tokio::time::sleep(std::time::Duration::from_millis(30)).await;
        Ok("waited".into())
    }
}

#[tokio::test]
async fn calls_running_together_are_sibling_spans_that_overlap() {
    let collected = collect();
    let model =
        ScriptedModel::new().tool_calls([("wait", json!({})), ("wait", json!({}))]).text("Done.");
    let agent = Agent::builder(&model).tool(Wait).build();
    agent.run(&mut Conversation::new(), "go").await.unwrap();

    let spans = collected.spans();
    let turn = one(&spans, "invoke_agent");
    let calls = operations(&spans, "execute_tool");
    assert_eq!(calls.len(), 2);
    let ids: Vec<String> = calls.iter().map(|call| text(call, "gen_ai.tool.call.id")).collect();
    assert_eq!(ids, ["call_1", "call_2"]);
    assert!(calls.iter().all(|call| is_child(call, turn)));
    // Together: each started before the other ended.
    assert!(calls[1].start_time < calls[0].end_time && calls[0].start_time < calls[1].end_time);
}

#[tokio::test]
async fn a_sessions_turns_report_each_decision_once_whoever_listens() {
    let collected = collect();
    let model = ScriptedModel::new()
        .tool_call("get_weather", json!({ "city": "Oslo" }))
        .text("Sunny in Oslo.");
    let agent = Agent::builder(&model).tool(Weather::default()).hook(allow).build();
    let mut session = Session::builder(&agent).build();
    session.enqueue(Task::new("Weather in Oslo?")).unwrap();
    let heard = std::sync::atomic::AtomicUsize::new(0);
    let observer = |observation: &agentix::observe::Observation<'_>| {
        if matches!(observation, agentix::observe::Observation::Hook { .. }) {
            heard.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    };
    session.run().observe(&observer).await.unwrap();

    let spans = collected.spans();
    let turn = one(&spans, "invoke_agent");
    let workflow = one(&spans, "invoke_workflow");
    assert_eq!(events(turn, "agentix.hook").len(), 1, "the decision, on the turn's span");
    assert!(events(workflow, "agentix.hook").is_empty(), "and not again on the run's");
    assert_eq!(heard.load(std::sync::atomic::Ordering::Relaxed), 1, "the observer heard it once");
}
