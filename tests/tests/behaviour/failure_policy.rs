//! The failure policy, event by event: what a hook's panic, error or timeout does (README, "The
//! events"), and the timeouts of hooks, tools, model calls and whole turns. Timers run on
//! tokio's paused clock: a test waits for no real time.

use std::sync::Arc;
use std::time::Duration;

use agentix::event::{BeforeTool, EventKind};
use agentix::{
    Agent, AssistantMessage, Config, Conversation, Entry, Error, Hook, Outcome, Part,
    ScriptedModel, ToolCall, ToolResult, Turn, Verdict, hook,
    message::ToolFailure,
    model::{ModelError, ModelRequest, ModelResponse, NextModel},
    observe::Observation,
    tool::NextTool,
};
use serde_json::json;
use tests::{Weather, assert_log_consistent, every_event_model, tool_results};

const LIMIT: Duration = Duration::from_millis(20);

async fn stall() {
    tokio::time::sleep(Duration::from_secs(3600)).await;
}

/// A hook at each sequential event that outlives its 20ms timeout.
macro_rules! stalling_hooks {
    ($($module:ident($($param:tt)*);)*) => {$(
        mod $module {
            use agentix::*;

            #[hook($module, timeout = "20ms")]
            pub async fn stalls($($param)*) {
                super::stall().await;
            }
        }
    )*};
}

stalling_hooks! {
    pre(_turn: &mut Turn);
    before_model(_request: &mut agentix::model::ModelRequest);
    after_model(_message: &mut AssistantMessage);
    after_tool(_result: &mut ToolResult);
    tool_error(_result: &mut ToolResult);
    before_final(_message: &mut AssistantMessage);
    post(_outcome: &Outcome);
}

/// Counts the turns that reached `post`.
#[derive(Clone, Default)]
struct Posts(Arc<std::sync::atomic::AtomicUsize>);

#[hook]
impl Hook for Posts {
    async fn post(&self, _: &Outcome, _: &mut Turn) -> Verdict<agentix::event::Post> {
        self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Verdict::Continue
    }
}

#[tokio::test(start_paused = true)]
async fn a_guard_that_outlives_its_timeout_ends_the_turn_naming_event_hook_and_bound() {
    macro_rules! at {
        ($($event:ident: $module:ident;)*) => {$({
            let posts = Posts::default();
            let agent = Agent::builder(every_event_model("sunny"))
                .tool(Weather::default())
                .hook(posts.clone())
                .hook($module::stalls)
                .build();
            let mut conversation = Conversation::new();
            let error = agent.run(&mut conversation, "weather?").await.unwrap_err();
            assert_eq!(
                error,
                Error::HookTimedOut { event: EventKind::$event, hook: "stalls", after: LIMIT },
                "at {}", stringify!($event)
            );
            assert_eq!(error.to_string(), format!("{} hook `stalls` timed out after 20ms", EventKind::$event));
            assert_log_consistent(conversation.log());
            conversation.validate().unwrap();
            assert!(matches!(conversation.log().last(), Some(Entry::Failed { .. })));
            assert_eq!(posts.0.load(std::sync::atomic::Ordering::Relaxed), 1, "post ran");
        })*};
    }
    at! {
        Pre: pre;
        BeforeModel: before_model;
        AfterModel: after_model;
        AfterTool: after_tool;
        ToolError: tool_error;
        BeforeFinal: before_final;
        Post: post;
    }
}

#[hook(before_tool, timeout = "20ms")]
async fn slow_policy(_call: &ToolCall) -> Verdict<BeforeTool> {
    stall().await;
    Verdict::Continue
}

#[hook(before_tool)]
async fn broken_policy(_call: &ToolCall) -> Verdict<BeforeTool> {
    panic!("policy store down")
}

#[hook(before_tool)]
async fn failing_policy(_call: &ToolCall) -> Result<Verdict<BeforeTool>, String> {
    Err("no policy for this tool".into())
}

#[hook(before_tool)]
async fn forbidding_policy(_call: &ToolCall) -> Verdict<BeforeTool> {
    Verdict::halt("tools are off today")
}

#[tokio::test(start_paused = true)]
async fn a_before_tool_guard_that_fails_refuses_the_call_which_never_runs() {
    macro_rules! refused {
        ($hook:ident, $reason:literal) => {{
            let model = ScriptedModel::new()
                .tool_call("get_weather", json!({ "city": "Oslo" }))
                .text("I could not check.");
            let weather = Weather::default();
            let ran = Arc::clone(&weather.calls);
            let agent = Agent::builder(&model).tool(weather).hook($hook).build();
            let mut conversation = Conversation::new();
            let reply = agent.run(&mut conversation, "weather?").await.unwrap();
            assert_eq!(reply.joined_text(), "I could not check.");
            assert!(ran.lock().unwrap().is_empty(), "fail closed: the call never ran");
            let result = &tool_results(&model.requests()[1])[0];
            assert_eq!(
                result.error,
                Some(ToolFailure::Rejected { by: stringify!($hook).into(), reason: $reason.into() })
            );
        }};
    }
    refused!(
        slow_policy,
        "the before_tool hook `slow_policy` timed out after 20ms, so the call is refused"
    );
    refused!(
        broken_policy,
        "the before_tool hook `broken_policy` panicked: policy store down, so the call is refused"
    );
    refused!(
        failing_policy,
        "the before_tool hook `failing_policy` failed, so the call is refused: no policy for this tool"
    );

    // A halt is the hook's decision, not a failure: it ends the turn.
    let model = ScriptedModel::new().tool_call("get_weather", json!({ "city": "Oslo" }));
    let agent = Agent::builder(&model).tool(Weather::default()).hook(forbidding_policy).build();
    let error = agent.run(&mut Conversation::new(), "weather?").await.unwrap_err();
    assert_eq!(
        error,
        Error::Halted {
            event: EventKind::BeforeTool,
            hook: "forbidding_policy",
            reason: "tools are off today".into()
        }
    );
}

#[hook(pre, parallel)]
async fn documents(_turn: &Turn) -> String {
    "documents".into()
}

#[hook(pre, parallel, timeout = "20ms")]
async fn slow_memory(_turn: &Turn) -> String {
    stall().await;
    "memory".into()
}

#[hook(pre, parallel, timeout = "20ms", on_error = skip)]
async fn optional_memory(_turn: &Turn) -> String {
    stall().await;
    "memory".into()
}

#[hook(pre, parallel, on_error = skip)]
async fn optional_index(_turn: &Turn) -> Vec<Part> {
    panic!("index offline")
}

#[tokio::test(start_paused = true)]
async fn a_parallel_hook_fails_the_turn_unless_it_may_be_skipped() {
    let model = ScriptedModel::new().text("answered");
    let agent = Agent::builder(&model).hook(documents).hook(slow_memory).build();
    let mut conversation = Conversation::new();
    let error = agent.run(&mut conversation, "hi").await.unwrap_err();
    assert_eq!(
        error,
        Error::HookTimedOut { event: EventKind::Pre, hook: "slow_memory", after: LIMIT }
    );
    assert_eq!(model.calls(), 0, "fail closed: the model was not called");

    let agent =
        Agent::builder(&model).hook(optional_index).hook(documents).hook(optional_memory).build();
    let decisions = std::sync::Mutex::new(Vec::new());
    let observer = |observation: &Observation<'_>| {
        if let Observation::Hook { hook, decision, .. } = observation {
            decisions.lock().unwrap().push(format!("{hook}: {decision}"));
        }
    };
    let mut conversation = Conversation::new();
    let reply = agent.turn(&mut conversation, "hi").observe(&observer).await.unwrap();
    assert_eq!(reply.joined_text(), "answered");
    // The group's other content is kept; the failures are reported and logged.
    let injected = &model.requests()[0].messages[1];
    assert_eq!(injected.content, [Part::text("documents")]);
    assert_eq!(
        decisions.into_inner().unwrap(),
        [
            "optional_index: panicked (index offline)",
            "documents: 1 part(s)",
            "optional_memory: timed out (after 20ms)",
        ]
    );
    let skipped: Vec<(&str, &str)> = conversation
        .log()
        .iter()
        .filter_map(|entry| match entry {
            Entry::HookSkipped { hook, reason, .. } => Some((hook.as_str(), reason.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(
        skipped,
        [
            ("optional_index", "the pre hook `optional_index` panicked: index offline"),
            ("optional_memory", "the pre hook `optional_memory` timed out after 20ms"),
        ]
    );
    conversation.validate().unwrap();
}

#[hook(wrap_model, timeout = "20ms")]
async fn slow_gateway(
    request: &ModelRequest,
    next: &impl NextModel,
) -> Result<ModelResponse, ModelError> {
    let response = next.call(request).await;
    stall().await;
    response
}

#[hook(wrap_tool, timeout = "20ms")]
async fn slow_audit(call: &ToolCall, next: &impl NextTool) -> ToolResult {
    let result = next.call(call).await;
    stall().await;
    result
}

#[tokio::test(start_paused = true)]
async fn a_wrap_hook_that_outlives_its_timeout_fails_the_call_and_a_tool_that_ran_is_logged() {
    let agent = Agent::builder(ScriptedModel::new().text("late")).hook(slow_gateway).build();
    let mut conversation = Conversation::new();
    let error = agent.run(&mut conversation, "hi").await.unwrap_err();
    assert_eq!(
        error,
        Error::HookTimedOut { event: EventKind::WrapModel, hook: "slow_gateway", after: LIMIT }
    );
    conversation.validate().unwrap();

    let model = ScriptedModel::new().tool_call("get_weather", json!({ "city": "Oslo" }));
    let weather = Weather::default();
    let ran = Arc::clone(&weather.calls);
    let agent = Agent::builder(&model).tool(weather).hook(slow_audit).build();
    let mut conversation = Conversation::new();
    let error = agent.run(&mut conversation, "weather?").await.unwrap_err();
    assert_eq!(
        error,
        Error::HookTimedOut { event: EventKind::WrapTool, hook: "slow_audit", after: LIMIT }
    );
    assert_eq!(*ran.lock().unwrap(), ["Oslo"]);
    let Some(Entry::ToolResults { results, .. }) = conversation.log().get(2) else {
        panic!("{:#?}", conversation.log());
    };
    assert_eq!(
        (results[0].output.as_str(), &results[0].error),
        ("sunny in Oslo", &None),
        "logged as run"
    );
    conversation.validate().unwrap();
}

/// A hook struct's methods are each bounded by its `TIMEOUT`.
struct SlowStruct;

#[hook]
impl Hook for SlowStruct {
    const TIMEOUT: Option<Duration> = Some(LIMIT);

    async fn after_model(
        &self,
        _: &mut AssistantMessage,
        _: &mut Turn,
    ) -> Verdict<agentix::event::AfterModel> {
        stall().await;
        Verdict::Continue
    }
}

#[tokio::test(start_paused = true)]
async fn a_hook_structs_timeout_bounds_each_of_its_methods() {
    let agent = Agent::builder(ScriptedModel::new().text("hi")).hook(SlowStruct).build();
    let error = agent.run(&mut Conversation::new(), "hi").await.unwrap_err();
    assert_eq!(
        error,
        Error::HookTimedOut { event: EventKind::AfterModel, hook: "SlowStruct", after: LIMIT }
    );
}

/// `get_weather` that takes an hour.
struct SlowWeather;

impl agentix::Tool for SlowWeather {
    const NAME: &'static str = "get_weather";
    type Args = tests::City;
    type Output = String;
    type Error = std::convert::Infallible;

    fn description(&self) -> &str {
        "Current weather, slowly."
    }

    async fn call(&self, args: tests::City, _turn: &Turn) -> Result<String, Self::Error> {
        stall().await;
        Ok(format!("sunny in {}", args.city))
    }
}

/// A model that answers after an hour the first time, at once after that.
#[derive(Default)]
struct SlowFirst(std::sync::atomic::AtomicBool);

impl agentix::Model for SlowFirst {
    async fn complete(&self, _request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        if !self.0.swap(true, std::sync::atomic::Ordering::Relaxed) {
            stall().await;
        }
        Ok(AssistantMessage::text("at last").into())
    }
}

/// Tries the model once more when it timed out.
#[hook(wrap_model)]
async fn retry_timeouts(
    request: &ModelRequest,
    next: &impl NextModel,
) -> Result<ModelResponse, ModelError> {
    match next.call(request).await {
        Err(ModelError::TimedOut { .. }) => next.call(request).await,
        other => other,
    }
}

#[tokio::test(start_paused = true)]
async fn the_config_bounds_each_tool_call_each_model_call_and_the_whole_turn() {
    let bounded = |config: Config| Conversation::with_config(config);

    // A tool past `tool_timeout` fails its call; the turn goes on, and the model reads why.
    let model = ScriptedModel::new()
        .tool_call("get_weather", json!({ "city": "Oslo" }))
        .text("The weather service is slow.");
    let agent = Agent::builder(&model).tool(SlowWeather).build();
    let mut conversation = bounded(Config { tool_timeout: Some(LIMIT), ..Config::default() });
    let reply = agent.run(&mut conversation, "weather?").await.unwrap();
    assert_eq!(reply.joined_text(), "The weather service is slow.");
    let result = &tool_results(&model.requests()[1])[0];
    assert_eq!(result.error, Some(ToolFailure::TimedOut { after: LIMIT }));
    assert_eq!(result.output, "tool did not return within 20ms");

    // A model call past `model_timeout` fails; a wrap hook may try again.
    let config = Config { model_timeout: Some(LIMIT), ..Config::default() };
    let agent = Agent::builder(SlowFirst::default()).build();
    let error = agent.run(&mut bounded(config.clone()), "hi").await.unwrap_err();
    assert_eq!(error, Error::Model(ModelError::TimedOut { after: LIMIT }));
    let agent = Agent::builder(SlowFirst::default()).hook(retry_timeouts).build();
    assert_eq!(agent.run(&mut bounded(config), "hi").await.unwrap().joined_text(), "at last");

    // A turn past `turn_timeout` ends; the step that was running is logged, `post` runs.
    let model = ScriptedModel::new().tool_calls([
        ("get_weather", json!({ "city": "Oslo" })),
        ("slow_weather", json!({ "city": "Bergen" })),
    ]);
    let posts = Posts::default();
    let agent = Agent::builder(&model)
        .tool(Weather::default())
        .tool(Renamed(SlowWeather))
        .hook(posts.clone())
        .build();
    let limit = Duration::from_secs(1);
    let mut conversation = bounded(Config { turn_timeout: Some(limit), ..Config::default() });
    let error = agent.run(&mut conversation, "weather?").await.unwrap_err();
    assert_eq!(error, Error::TurnTimedOut { after: limit });
    assert_eq!(posts.0.load(std::sync::atomic::Ordering::Relaxed), 1);
    conversation.validate().unwrap();
    let Some(Entry::ToolResults { results, .. }) = conversation.log().get(2) else {
        panic!("{:#?}", conversation.log());
    };
    assert_eq!(results[0].output, "sunny in Oslo", "the call that finished is kept");
    assert!(matches!(&results[1].error, Some(ToolFailure::Interrupted { .. })), "{results:?}");
    assert!(
        matches!(conversation.log().last(), Some(Entry::Failed { error, .. }) if error.contains("timeout of 1s"))
    );
}

/// A tool under another name.
struct Renamed(SlowWeather);

impl agentix::Tool for Renamed {
    const NAME: &'static str = "slow_weather";
    type Args = tests::City;
    type Output = String;
    type Error = std::convert::Infallible;

    fn description(&self) -> &str {
        self.0.description()
    }

    async fn call(&self, args: tests::City, turn: &Turn) -> Result<String, Self::Error> {
        self.0.call(args, turn).await
    }
}

#[hook(after_model)]
async fn unbounded(_message: &AssistantMessage) {}

#[test]
fn a_hook_without_a_timeout_makes_no_timer() {
    // No tokio runtime here: a timer would panic for want of one.
    let agent = Agent::builder(ScriptedModel::new().text("hi"))
        .hook(unbounded)
        .hook(Posts::default())
        .build();
    let reply = futures::executor::block_on(agent.run(&mut Conversation::new(), "hi")).unwrap();
    assert_eq!(reply.joined_text(), "hi");
}

/// Remembers the user's city, durably.
#[hook(pre, durable)]
async fn remember_city(turn: &mut Turn) {
    turn.inject("The user lives in Oslo.");
}

/// A parallel hook skipped on failure is recorded while the group runs, before the durable
/// output is committed: the durable output still reaches the request once, with the
/// injections.
#[test]
fn durable_output_after_a_skipped_hook_is_sent_once() {
    let model = ScriptedModel::new().text("noted");
    let agent = Agent::builder(&model).hook(optional_index).hook(remember_city).build();
    let mut conversation = Conversation::new();
    futures::executor::block_on(agent.run(&mut conversation, "hi")).unwrap();
    let request = &model.requests()[0];
    let sent = request
        .messages
        .iter()
        .flat_map(|message| &message.content)
        .filter(|part| part.as_text() == Some("The user lives in Oslo."))
        .count();
    assert_eq!(sent, 1, "{request:?}");
    assert!(
        conversation.log().iter().any(|entry| matches!(entry, Entry::HookSkipped { .. })),
        "{:?}",
        conversation.log()
    );
}
