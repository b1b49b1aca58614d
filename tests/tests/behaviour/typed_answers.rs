//! Typed final answers (`AgentBuilder::output::<T>()`): requests carry `T`'s schema, tools are
//! still called on the way, the final message is read as `T`; an answer that does not read, or
//! that a validator refuses, is sent back with why, counted against `max_retries`, past which
//! the turn fails with the last raw answer and the error.

use agentix::prelude::*;
use agentix::{Config, Entry, Error, observe::Observation};
use serde_json::json;
use tests::Weather;

/// A forecast, as the model is to answer.
#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(crate = "agentix::serde")]
#[schemars(crate = "agentix::schemars")]
pub(crate) struct Forecast {
    pub(crate) city: String,
    pub(crate) sunny: bool,
    /// Degrees, if the model knows.
    pub(crate) temperature: Option<i32>,
    /// How sure, from 0 to 100.
    #[serde(default)]
    pub(crate) confidence: u8,
}

pub(crate) const GOOD: &str =
    r#"{"city": "Oslo", "sunny": true, "temperature": 21, "confidence": 90}"#;

pub(crate) fn oslo() -> Forecast {
    Forecast { city: "Oslo".into(), sunny: true, temperature: Some(21), confidence: 90 }
}

#[tokio::test]
async fn the_agent_calls_its_tools_then_answers_with_a_typed_value() {
    let model = ScriptedModel::new().tool_call("get_weather", json!({ "city": "Oslo" })).text(GOOD);
    let weather = Weather::default();
    let calls = weather.calls.clone();
    let agent = Agent::builder(&model).tool(weather).output::<Forecast>().build();
    let mut conversation = Conversation::new();
    let forecast = agent.turn(&mut conversation, "Weather in Oslo?").answer().await.unwrap();
    assert_eq!(forecast, oslo());
    assert_eq!(calls.lock().unwrap().len(), 1, "the tool ran on the way");
    // Every request carries the answer's schema; the log keeps the answer as the model's JSON.
    let requests = model.requests();
    let output = requests[0].params.output.as_ref().expect("the schema");
    assert_eq!(output.name, "Forecast");
    assert_eq!(output.schema["properties"]["sunny"]["type"], "boolean");
    assert!(requests.iter().all(|request| request.params.output.is_some()));
    let Some(Entry::Assistant { message, .. }) = conversation.log().last() else { panic!() };
    assert_eq!(message.joined_text(), GOOD);
}

#[tokio::test]
async fn a_malformed_answer_twice_then_a_good_one_gives_one_value_after_two_retries() {
    let model = ScriptedModel::new()
        .text("It is sunny in Oslo.")
        .text(r#"{"city": "Oslo", "sunny": "yes"}"#)
        .text(GOOD);
    let agent = Agent::builder(&model).output::<Forecast>().build();
    let withdrawn = std::sync::Mutex::new(Vec::new());
    let observer = |observation: &Observation<'_>| {
        if let Observation::Withdrawn { hook: Some(hook), .. } = observation {
            withdrawn.lock().unwrap().push((*hook).to_owned());
        }
    };
    let mut conversation = Conversation::new();
    let forecast =
        agent.turn(&mut conversation, "Weather?").observe(&observer).answer().await.unwrap();
    assert_eq!(forecast, oslo());
    assert_eq!(*withdrawn.lock().unwrap(), ["the answer's check", "the answer's check"]);
    // Each retry showed the model its answer and why it was refused.
    let requests = model.requests();
    assert_eq!(requests.len(), 3);
    let feedback = requests[1].messages.last().unwrap().text();
    assert!(feedback.contains("the answer is not JSON"), "{feedback}");
    let feedback = requests[2].messages.last().unwrap().text();
    assert!(
        feedback.contains("does not match its schema") && feedback.contains("expected a boolean"),
        "{feedback}"
    );
    // The log holds the good answer only.
    let answers =
        conversation.log().iter().filter(|entry| matches!(entry, Entry::Assistant { .. })).count();
    assert_eq!(answers, 1);
}

#[tokio::test]
async fn past_max_retries_the_turn_fails_with_the_last_raw_answer_and_the_error() {
    let model = ScriptedModel::new().text("sunny").text("still sunny");
    let agent = Agent::builder(&model).output::<Forecast>().build();
    let config = Config { max_retries: 1, ..Config::default() };
    let mut conversation = Conversation::with_config(config);
    let error = agent.turn(&mut conversation, "Weather?").answer().await.unwrap_err();
    let Error::InvalidAnswer { raw, error } = error else { panic!("{error:?}") };
    assert_eq!(raw, "still sunny");
    assert!(error.starts_with("the answer is not JSON"), "{error}");
    tests::assert_log_consistent(conversation.log());
}

fn warm(forecast: &Forecast) -> Result<(), String> {
    match forecast.temperature {
        Some(degrees) if degrees < -90 => Err(format!("{degrees} degrees is colder than Earth")),
        _ => Ok(()),
    }
}

#[tokio::test]
async fn a_validator_sends_an_answer_back_with_its_reason() {
    let model = ScriptedModel::new()
        .text(r#"{"city": "Oslo", "sunny": true, "temperature": -300}"#)
        .text(GOOD);
    let agent = Agent::builder(&model).output::<Forecast>().validate(warm).build();
    let forecast = agent.turn(&mut Conversation::new(), "Weather?").answer().await.unwrap();
    assert_eq!(forecast, oslo());
    let feedback = model.requests()[1].messages.last().unwrap().text().into_owned();
    assert!(feedback.contains("-300 degrees is colder than Earth"), "{feedback}");
}

#[tokio::test]
async fn strict_modes_nulls_and_a_fenced_answer_read_as_the_type() {
    // Strict mode has the model send every field, null for those it leaves out; `confidence`
    // has a default, not an Option.
    let model = ScriptedModel::new().text(
        "```json\n{\"city\": \"Oslo\", \"sunny\": false, \"temperature\": null, \"confidence\": null}\n```",
    );
    let agent = Agent::builder(&model).output::<Forecast>().build();
    let forecast = agent.turn(&mut Conversation::new(), "Weather?").answer().await.unwrap();
    assert_eq!(
        forecast,
        Forecast { city: "Oslo".into(), sunny: false, temperature: None, confidence: 0 }
    );
}

#[tokio::test]
async fn an_agent_without_an_output_type_answers_with_its_message() {
    let model = ScriptedModel::new().text("Sunny.");
    let agent = Agent::builder(&model).build();
    let message = agent.turn(&mut Conversation::new(), "Weather?").answer().await.unwrap();
    assert_eq!(message.joined_text(), "Sunny.");
    assert!(model.requests()[0].params.output.is_none());
}

#[tokio::test]
async fn a_typed_agents_stream_shows_no_half_json_and_ends_with_the_answer_whole() {
    use futures::StreamExt;
    let model = ScriptedModel::new().text("not json yet").text(GOOD).chunked(5);
    let agent = Agent::builder(&model).output::<Forecast>().build();
    let mut conversation = Conversation::new();
    let events: Vec<agentix::StreamEvent> =
        agent.turn(&mut conversation, "Weather?").stream().collect().await;
    assert!(
        !events.iter().any(|event| matches!(event, agentix::StreamEvent::Text(_))),
        "{events:?}"
    );
    let Some(agentix::StreamEvent::Finished(Ok(message))) = events.last() else {
        panic!("{events:?}")
    };
    assert_eq!(serde_json::from_str::<Forecast>(&message.joined_text()).unwrap(), oslo());
    // A text agent streams its text as ever.
    let model = ScriptedModel::new().text("Sunny in Oslo.").chunked(5);
    let agent = Agent::builder(&model).build();
    let events: Vec<agentix::StreamEvent> =
        agent.turn(&mut Conversation::new(), "Weather?").stream().collect().await;
    let texts = events.iter().filter(|event| matches!(event, agentix::StreamEvent::Text(_)));
    assert!(texts.count() > 1);
}
