//! Tool selection on the real loop: a step offers the tools a predicate keeps, or a small model
//! picks; a call of a tool the step did not offer is rejected.

use std::sync::{Arc, Mutex};

use agentix::event::EventKind;
use agentix::{
    Agent, Conversation, Error, ScriptedModel, message::ToolFailure, model::ModelRequest,
};
use agentix_hooks::{ToolFilter, ToolSelector};
use serde_json::json;
use tests::{Explode, Flaky, Weather, logged_results};

fn offered(request: &ModelRequest) -> Vec<&str> {
    request.tools.iter().map(|tool| tool.name.as_str()).collect()
}

fn oslo() -> serde_json::Value {
    json!({ "city": "Oslo" })
}

fn flaky() -> Flaky {
    Flaky { failures: 0, calls: Arc::default() }
}

#[tokio::test]
async fn a_step_offers_what_the_predicate_keeps_and_a_hidden_tool_is_rejected() {
    // The model calls `flaky` in the first step, where it is hidden, and in the second.
    let model =
        ScriptedModel::new().tool_call("flaky", oslo()).tool_call("flaky", oslo()).text("Done.");
    let tool = flaky();
    let ran = Arc::clone(&tool.calls);
    let agent = Agent::builder(&model)
        .tool(Weather::default())
        .tool(tool)
        .hook(ToolFilter::new(|tool, turn| turn.step() > 0 || tool.name != "flaky"))
        .build();
    let mut conversation = Conversation::new();
    agent.run(&mut conversation, "go").await.unwrap();

    let requests = model.requests();
    assert_eq!(offered(&requests[0]), ["get_weather"]);
    assert_eq!(offered(&requests[1]), ["get_weather", "flaky"]);
    let results = logged_results(&conversation);
    match &results[0].error {
        Some(ToolFailure::Rejected { by, reason }) => {
            assert_eq!(by, ToolFilter::NAME);
            assert_eq!(reason, "`flaky` is not offered in this step");
        }
        other => panic!("the hidden call was not rejected: {other:?}"),
    }
    assert!(results[1].error.is_none());
    assert_eq!(*ran.lock().unwrap(), 1, "only the offered call ran");
}

#[tokio::test]
async fn a_small_model_picks_the_tools_of_each_step_and_a_step_sent_back_keeps_them() {
    let selector = ScriptedModel::new()
        .text(r#"The tools: ["flaky", "no_such_tool", "get_weather"]"#)
        .text(r#"["get_weather"]"#);
    let model = ScriptedModel::new()
        .tool_call("flaky", oslo())
        .text("First answer.")
        .text("Second answer.");
    let agent = Agent::builder(&model)
        .tool(Weather::default())
        .tool(flaky())
        .tool(Explode)
        .hook(ToolSelector::new(&selector).max_tools(1).always(["explode"]).unwrap())
        .hook(tests::answer_again_once)
        .build();
    let reply = agent.run(&mut Conversation::new(), "Is it flaky in Oslo?").await.unwrap();
    assert_eq!(reply.joined_text(), "Second answer.");

    // One selection a step: the first step's, then the second's, kept through its retry.
    assert_eq!(selector.calls(), 2);
    let asked = &selector.requests()[0];
    let question = asked.messages[0].text();
    assert!(question.contains("- get_weather: Current weather for a city."), "{question}");
    assert!(question.contains("Is it flaky in Oslo?"), "{question}");
    assert!(!question.contains("explode"), "tools always offered are not chosen: {question}");
    assert!(asked.system.as_deref().unwrap().contains("at most 1 tool names"));

    let requests = model.requests();
    // At most one chosen (the first the selector named), the tool always offered besides.
    assert_eq!(offered(&requests[0]), ["flaky", "explode"]);
    assert_eq!(offered(&requests[1]), ["get_weather", "explode"]);
    assert_eq!(offered(&requests[2]), ["get_weather", "explode"]);
}

#[tokio::test]
async fn a_selector_that_answers_no_tool_halts_the_turn_unless_told_to_offer_all() {
    let selector = ScriptedModel::new().text("I cannot tell.");
    let model = ScriptedModel::new().text("never asked");
    let agent = Agent::builder(&model)
        .tool(Weather::default())
        .tool(flaky())
        .hook(ToolSelector::new(&selector).max_tools(1))
        .build();
    let error = agent.run(&mut Conversation::new(), "go").await.unwrap_err();
    match error {
        Error::Halted { event: EventKind::BeforeModel, hook: "tool_selector", reason } => {
            assert_eq!(reason, r#"the selector's answer holds no JSON array: "I cannot tell.""#);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(model.calls(), 0);

    let selector = ScriptedModel::new().error(agentix::model::ModelError::Transport("down".into()));
    let model = ScriptedModel::new().text("Hello.");
    let agent = Agent::builder(&model)
        .tool(Weather::default())
        .tool(flaky())
        .hook(ToolSelector::new(&selector).max_tools(1).offer_all_on_failure())
        .build();
    agent.run(&mut Conversation::new(), "go").await.unwrap();
    assert_eq!(offered(&model.requests()[0]), ["get_weather", "flaky"]);
}

#[tokio::test]
async fn no_selector_is_asked_when_the_tools_are_few_enough() {
    let selector = ScriptedModel::new();
    let model = ScriptedModel::new().text("Hello.");
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let agent = Agent::builder(&model)
        .tool(Weather { calls: seen })
        .tool(flaky())
        .hook(ToolSelector::new(&selector).max_tools(2))
        .build();
    agent.run(&mut Conversation::new(), "go").await.unwrap();
    assert_eq!(selector.calls(), 0);
    assert_eq!(offered(&model.requests()[0]), ["get_weather", "flaky"]);
}

#[tokio::test]
async fn selections_only_narrow_and_a_filter_before_a_selector_does_not_stop_it_asking() {
    // The filter hides `explode`; the selector, asked after it, picks `flaky` of the rest; a
    // second filter, hiding nothing, widens nothing: the model's call of `get_weather` is
    // rejected.
    let selector =
        ScriptedModel::new().text(r#"["flaky"] (not ["get_weather"])"#).text(r#"["flaky"]"#);
    let model = ScriptedModel::new().tool_call("get_weather", oslo()).text("Done.");
    let agent = Agent::builder(&model)
        .tool(Weather::default())
        .tool(flaky())
        .tool(Explode)
        .hook(ToolFilter::new(|tool, _| tool.name != "explode"))
        .hook(ToolSelector::new(&selector).max_tools(1))
        .hook(ToolFilter::new(|_, _| true))
        .build();
    let mut conversation = Conversation::new();
    agent.run(&mut conversation, "go").await.unwrap();
    assert_eq!(selector.calls(), 2, "once a step");
    let asked = selector.requests()[0].messages[0].text().into_owned();
    assert!(!asked.contains("explode"), "the selector chose among what the filter left: {asked}");
    assert_eq!(offered(&model.requests()[0]), ["flaky"]);
    assert!(matches!(
        &logged_results(&conversation)[0].error,
        Some(ToolFailure::Rejected { reason, .. }) if reason == "`get_weather` is not offered in this step"
    ));
}
