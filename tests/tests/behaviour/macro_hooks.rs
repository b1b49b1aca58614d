//! `#[hook]` functions over the real loop: what their returns mean, `when`, `name`, failures
//! that name the hook, parallel groups, and the function still callable as `NAME::call`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use agentix::event::{AfterModel, AfterTool, BeforeTool, Pre};
use agentix::{
    Agent, AssistantMessage, Conversation, Part, ScriptedModel, ToolCall, ToolResult, Turn,
    Verdict, hook,
    message::ToolFailure,
    model::{ModelError, ModelRequest, ModelResponse, NextModel},
    observe::Observation,
};
use serde_json::json;
use tests::{Weather, tool_results};

/// Replaces the result by returning a new one.
#[hook(after_tool)]
async fn shout(result: &ToolResult) -> ToolResult {
    ToolResult { output: result.output.to_uppercase(), ..result.clone() }
}

/// Fails when the call has no city, naming itself through `name`.
#[hook(before_tool, name = "city_check")]
async fn require_city(call: &ToolCall) -> Result<(), String> {
    match call.arguments.get("city") {
        Some(_) => Ok(()),
        None => Err(format!("`{}` was called without a city", call.name)),
    }
}

#[tokio::test]
async fn a_returned_value_replaces_the_events_value_and_an_err_fails_by_name() {
    let model = ScriptedModel::new()
        .tool_call("get_weather", json!({ "city": "Oslo" }))
        .text("ok")
        .tool_call("get_weather", json!({ "town": "Oslo" }))
        .text("I need a city.");
    let agent =
        Agent::builder(&model).tool(Weather::default()).hook(require_city).hook(shout).build();
    let mut conversation = Conversation::new();
    agent.run(&mut conversation, "weather?").await.unwrap();
    assert_eq!(tool_results(&model.requests()[1])[0].output, "SUNNY IN OSLO");

    // A `before_tool` guard that fails refuses the call (fail closed); the model reads why.
    let reply = agent.run(&mut conversation, "again").await.unwrap();
    assert_eq!(reply.joined_text(), "I need a city.");
    let refused = tool_results(&model.requests()[3]).pop().unwrap();
    assert_eq!(
        refused.error,
        Some(ToolFailure::Rejected {
            by: "city_check".into(),
            reason: "the before_tool hook `city_check` failed, so the call is refused: \
                     `get_weather` was called without a city"
                .into(),
        })
    );
}

fn has_no_plan(message: &AssistantMessage, _turn: &Turn) -> bool {
    !message.joined_text().starts_with("<plan>")
}

static PLAN_CHECKS: AtomicUsize = AtomicUsize::new(0);

/// Runs only when the answer has no plan.
#[hook(after_model, when = has_no_plan)]
async fn require_plan(_message: &AssistantMessage) -> Verdict<AfterModel> {
    PLAN_CHECKS.fetch_add(1, Ordering::Relaxed);
    Verdict::retry("Start with a <plan>.")
}

fn first_turn(turn: &Turn) -> bool {
    turn.turn_ref().0 == 1
}

/// Greets on the first turn only.
#[hook(pre, when = first_turn)]
async fn greet(turn: &mut Turn) -> Verdict<Pre> {
    turn.inject("first contact");
    Verdict::Continue
}

#[tokio::test]
async fn when_decides_whether_the_hook_runs() {
    let model = ScriptedModel::new().text("no plan").text("<plan> one").text("<plan> two");
    let agent = Agent::builder(&model).hook(greet).hook(require_plan).build();
    let mut conversation = Conversation::new();
    assert_eq!(agent.run(&mut conversation, "a").await.unwrap().joined_text(), "<plan> one");
    assert_eq!(agent.run(&mut conversation, "b").await.unwrap().joined_text(), "<plan> two");
    assert_eq!(
        PLAN_CHECKS.load(Ordering::Relaxed),
        1,
        "the hook ran only for the answer without a plan"
    );
    let requests = model.requests();
    assert!(requests[0].messages.iter().any(|m| m.text() == "first contact"));
    assert!(
        !requests[2].messages.iter().any(|m| m.text() == "first contact"),
        "no greeting on turn 2"
    );
}

fn is_cached(request: &ModelRequest, _turn: &Turn) -> bool {
    request.messages.last().is_some_and(|m| m.text() == "cached?")
}

/// Answers cached questions without calling the model; other calls pass straight through.
#[hook(wrap_model, when = is_cached)]
async fn cache() -> Result<ModelResponse, ModelError> {
    Ok(AssistantMessage::text("from the cache").into())
}

#[tokio::test]
async fn a_wrap_hooks_condition_lets_other_calls_through() {
    let model = ScriptedModel::new().text("from the model");
    let agent = Agent::builder(&model).hook(cache).build();
    let mut conversation = Conversation::new();
    assert_eq!(
        agent.run(&mut conversation, "cached?").await.unwrap().joined_text(),
        "from the cache"
    );
    assert_eq!(
        agent.run(&mut conversation, "fresh?").await.unwrap().joined_text(),
        "from the model"
    );
    assert_eq!(model.calls(), 1);
}

fn never(_turn: &Turn) -> bool {
    false
}

/// Retrieval its condition turns off.
#[hook(pre, parallel, when = never)]
async fn switched_off(_turn: &Turn) -> String {
    unreachable!("its condition never holds")
}

#[tokio::test]
async fn a_hook_its_condition_skips_is_traced_as_skipped_not_as_continuing() {
    let model = ScriptedModel::new().text("<plan> one").text("<plan> two");
    let agent = Agent::builder(&model)
        .hook(greet)
        .hook(switched_off)
        .hook(cache)
        .hook(require_plan)
        .build();
    let mut conversation = Conversation::new();
    agent.run(&mut conversation, "first").await.unwrap();
    let decisions = std::sync::Mutex::new(Vec::new());
    let observer = |observation: &Observation<'_>| {
        if let Observation::Hook { event, hook, decision } = observation {
            decisions.lock().unwrap().push(format!("{event} {hook}: {decision}"));
        }
    };
    let reply = agent.turn(&mut conversation, "second").observe(&observer).await.unwrap();
    assert_eq!(reply.joined_text(), "<plan> two");
    // Sequential, parallel and wrap hooks alike; none of them ran.
    let skipped = "skipped (its `when` condition does not hold)";
    assert_eq!(
        decisions.into_inner().unwrap(),
        [
            format!("pre greet: {skipped}"),
            format!("pre switched_off: {skipped}"),
            format!("wrap_model cache: {skipped}"),
            format!("after_model require_plan: {skipped}"),
        ]
    );
}

/// Retrieval that takes a while.
#[hook(pre, parallel)]
async fn documents(turn: &Turn) -> Vec<Part> {
    tokio::time::sleep(Duration::from_millis(200)).await;
    vec![Part::text(format!("documents on {}", turn.user_message().text()))]
}

/// Memory that is quicker.
#[hook(pre, parallel)]
async fn memory(_turn: &Turn) -> Option<Part> {
    tokio::time::sleep(Duration::from_millis(100)).await;
    Some(Part::text("you asked about this before"))
}

#[tokio::test(start_paused = true)]
async fn parallel_hook_functions_run_together_and_merge_in_order() {
    let model = ScriptedModel::new().text("ok");
    let agent = Agent::builder(&model).hook(documents).hook(memory).build();
    let started = tokio::time::Instant::now();
    agent.run(&mut Conversation::new(), "rust").await.unwrap();
    assert_eq!(started.elapsed(), Duration::from_millis(200));
    let injected: Vec<String> = model.requests()[0].messages[1]
        .content
        .iter()
        .filter_map(|p| p.as_text().map(String::from))
        .collect();
    assert_eq!(injected, ["documents on rust", "you asked about this before"]);
}

/// Only lets the weather tool run.
#[hook(before_tool)]
async fn weather_only(call: &ToolCall) -> Verdict<BeforeTool> {
    if call.name == "get_weather" { Verdict::Continue } else { Verdict::reject("weather only") }
}

/// Appends units in place.
#[hook(after_tool)]
async fn units(result: &mut ToolResult) -> Verdict<AfterTool> {
    result.output.push_str(", 21°C");
    Verdict::Continue
}

#[tokio::test]
async fn hook_functions_stay_callable_for_unit_tests() {
    let allowed = weather_only::call(&ToolCall::new("1", "get_weather", json!({}))).await;
    assert!(allowed.is_continue());
    let refused = weather_only::call(&ToolCall::new("2", "rm_rf", json!({}))).await;
    assert!(matches!(refused, Verdict::Reject(rejection) if rejection.reason == "weather only"));

    let mut result = ToolResult::success(&ToolCall::new("3", "get_weather", json!({})), "sunny");
    assert!(units::call(&mut result).await.is_continue());
    assert_eq!(result.output, "sunny, 21°C");

    // A binding spelled like a hook shadows it, as it would shadow any function.
    let units = "celsius";
    assert_eq!(units.len(), 7);
}

/// A transport error gets one more try.
#[hook(wrap_model)]
async fn retry_transport(
    request: &ModelRequest,
    next: &impl NextModel,
) -> Result<ModelResponse, ModelError> {
    match next.call(request).await {
        Err(ModelError::Transport(_)) => next.call(request).await,
        result => result,
    }
}

#[tokio::test]
async fn a_wrap_hook_function_calls_next_again() {
    let model =
        ScriptedModel::new().error(ModelError::Transport("reset".into())).text("second try");
    let agent = Agent::builder(&model).hook(retry_transport).build();
    assert_eq!(
        agent.run(&mut Conversation::new(), "hi").await.unwrap().joined_text(),
        "second try"
    );
    assert_eq!(model.calls(), 2);
}
