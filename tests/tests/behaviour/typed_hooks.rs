//! `before_final` hooks on a typed agent's answer: a hook that takes `&mut T` edits the value
//! (the caller and the log get the edit), RETRYs with feedback, or STOPs with a replacement;
//! an answer that does not read as `T` passes it by, reported skipped, and the agent's check
//! sends it back; its failures are the chain's, naming it; validators run after it.

use std::sync::Mutex;

use agentix::event::EventKind;
use agentix::prelude::*;
use agentix::{
    Entry, Error,
    observe::{Decision, Observation},
};

use crate::typed_answers::{Forecast, GOOD, oslo};

/// What the observer saw of the `before_final` hooks: each hook's name and decision.
#[derive(Default)]
struct Seen(Mutex<Vec<String>>);

impl Seen {
    fn observer(&self) -> impl Fn(&Observation<'_>) + Send + Sync + '_ {
        |observation| match observation {
            Observation::Hook { event: EventKind::BeforeFinal, hook, decision } => {
                let decision = match decision {
                    Decision::Continue => "continue".to_owned(),
                    Decision::Skipped => "skipped".to_owned(),
                    Decision::Stop => "stop".to_owned(),
                    Decision::Retry { feedback } => format!("retry: {}", feedback.unwrap_or("")),
                    other => format!("{other:?}"),
                };
                self.0.lock().unwrap().push(format!("{hook}: {decision}"));
            }
            Observation::Withdrawn { hook: Some(hook), .. } => {
                self.0.lock().unwrap().push(format!("withdrawn by {hook}"));
            }
            _ => {}
        }
    }

    fn take(&self) -> Vec<String> {
        std::mem::take(&mut self.0.lock().unwrap())
    }
}

fn answer_in_log(conversation: &Conversation) -> String {
    let Some(Entry::Assistant { message, .. }) = conversation.log().last() else {
        panic!("the turn ended with its answer in the log")
    };
    message.joined_text().into_owned()
}

#[hook(before_final)]
async fn rounded_up(forecast: &mut Forecast) {
    forecast.temperature = forecast.temperature.map(|degrees| degrees.div_euclid(5) * 5 + 5);
}

#[tokio::test]
async fn a_hook_on_mut_t_edits_the_answer_the_caller_and_the_log_get() {
    let model = ScriptedModel::new().text(GOOD);
    let agent = Agent::builder(&model).output::<Forecast>().hook(rounded_up).build();
    let mut conversation = Conversation::new();
    let forecast = agent.turn(&mut conversation, "Weather?").answer().await.unwrap();
    assert_eq!(forecast, Forecast { temperature: Some(25), ..oslo() });
    let logged: Forecast = serde_json::from_str(&answer_in_log(&conversation)).unwrap();
    assert_eq!(logged, forecast, "the log keeps the edited answer");
}

#[hook(before_final)]
async fn reads_only(forecast: &Forecast, turn: &Turn) -> Verdict<BeforeFinal> {
    assert!(turn.step() < 5);
    if forecast.city == "Oslo" { Verdict::Continue } else { Verdict::halt("not Oslo") }
}

/// Takes the answer `&mut` and leaves it as it was.
#[hook(before_final)]
async fn may_edit(forecast: &mut Forecast) {
    if forecast.city.is_empty() {
        forecast.city = "somewhere".into();
    }
}

#[tokio::test]
async fn a_hook_that_reads_or_edits_nothing_leaves_the_models_json_as_it_was() {
    // Fields in another order, and spaces: a rewrite would have changed them.
    let raw = r#"{ "sunny": true, "city": "Oslo", "confidence": 90, "temperature": 21 }"#;
    let model = ScriptedModel::new().text(raw).text(raw);
    let agent = Agent::builder(&model).output::<Forecast>().hook(reads_only).build();
    let mut conversation = Conversation::new();
    assert_eq!(agent.turn(&mut conversation, "Weather?").answer().await.unwrap(), oslo());
    assert_eq!(answer_in_log(&conversation), raw);
    let agent = Agent::builder(&model).output::<Forecast>().hook(may_edit).build();
    assert_eq!(agent.turn(&mut conversation, "Again?").answer().await.unwrap(), oslo());
    assert_eq!(answer_in_log(&conversation), raw, "an unchanged `&mut` answer is not rewritten");
}

/// A measurement: a NaN in it writes as `null`, which does not read back.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(crate = "agentix::serde")]
#[schemars(crate = "agentix::schemars")]
struct Measure {
    value: f64,
}

#[hook(before_final, name = "spoils_it")]
async fn writes_nan(measure: &mut Measure) {
    measure.value = f64::NAN;
}

#[tokio::test]
async fn an_edit_that_no_longer_reads_halts_naming_the_hook_not_the_model() {
    let model = ScriptedModel::new().text(r#"{"value": 2.5}"#);
    let agent = Agent::builder(&model).output::<Measure>().hook(writes_nan).build();
    let mut conversation = Conversation::new();
    let error = agent.turn(&mut conversation, "Measure.").answer().await.unwrap_err();
    let Error::HookFailed { event, hook, message } = error else { panic!("{error:?}") };
    assert_eq!((event, hook), (EventKind::BeforeFinal, "spoils_it"));
    assert!(
        message.starts_with("its edit left an answer that does not read as `Measure`"),
        "{message}"
    );
    assert_eq!(model.requests().len(), 1, "nothing was sent back to the model");
    tests::assert_log_consistent(conversation.log());
}

fn at_most_twenty(forecast: &Forecast) -> Result<(), String> {
    match forecast.temperature {
        Some(degrees) if degrees > 20 => Err(format!("{degrees} is over twenty")),
        _ => Ok(()),
    }
}

#[tokio::test]
async fn a_stops_replacement_is_checked_by_the_validators_as_any_answer() {
    // `bergen_instead` keeps the temperature (21), which the validator refuses: the answer
    // goes back to the model, and the hook STOPs again on its next answer.
    let cool = r#"{"city": "Oslo", "sunny": true, "temperature": 15, "confidence": 90}"#;
    let model = ScriptedModel::new().text(GOOD).text(cool);
    let agent = Agent::builder(&model)
        .output::<Forecast>()
        .validate(at_most_twenty)
        .hook(bergen_instead)
        .build();
    let forecast = agent.turn(&mut Conversation::new(), "Weather?").answer().await.unwrap();
    assert_eq!((forecast.city.as_str(), forecast.temperature), ("Bergen", Some(15)));
    let feedback = model.requests()[1].messages.last().unwrap().text().into_owned();
    assert!(feedback.contains("21 is over twenty"), "{feedback}");
}

#[hook(before_final)]
async fn sure_enough(forecast: &Forecast) -> Verdict<BeforeFinal> {
    if forecast.confidence < 50 {
        Verdict::retry(format!(
            "{} is not sure enough: check the weather tool",
            forecast.confidence
        ))
    } else {
        Verdict::Continue
    }
}

#[tokio::test]
async fn a_hook_retries_with_feedback_counted_against_max_retries() {
    let unsure = r#"{"city": "Oslo", "sunny": true, "temperature": 21, "confidence": 10}"#;
    let model = ScriptedModel::new().text(unsure).text(GOOD);
    let agent = Agent::builder(&model).output::<Forecast>().hook(sure_enough).build();
    let seen = Seen::default();
    let observer = seen.observer();
    let mut conversation = Conversation::new();
    let forecast =
        agent.turn(&mut conversation, "Weather?").observe(&observer).answer().await.unwrap();
    assert_eq!(forecast, oslo());
    assert_eq!(
        seen.take(),
        [
            "sure_enough: retry: 10 is not sure enough: check the weather tool",
            "withdrawn by sure_enough",
            "sure_enough: continue",
        ]
    );
    let feedback = model.requests()[1].messages.last().unwrap().text().into_owned();
    assert!(feedback.contains("10 is not sure enough"), "{feedback}");
    // Past `max_retries`, the hook's RETRY ends the turn as any RETRY does.
    let model = ScriptedModel::new().text(unsure).text(unsure);
    let agent = Agent::builder(&model).output::<Forecast>().hook(sure_enough).build();
    let config = agentix::Config { max_retries: 1, ..Default::default() };
    let error =
        agent.turn(&mut Conversation::with_config(config), "Weather?").answer().await.unwrap_err();
    assert!(matches!(error, Error::RetryLimit { .. }), "{error:?}");
}

#[hook(before_final)]
async fn bergen_instead(forecast: &Forecast) -> Verdict<BeforeFinal> {
    Verdict::stop_with(Forecast { city: "Bergen".into(), sunny: false, ..oslo_like(forecast) })
}

fn oslo_like(forecast: &Forecast) -> Forecast {
    Forecast { city: forecast.city.clone(), temperature: forecast.temperature, ..oslo() }
}

#[tokio::test]
async fn a_hook_stops_with_a_replacement_and_the_later_hooks_do_not_run() {
    let model = ScriptedModel::new().text(GOOD);
    let agent =
        Agent::builder(&model).output::<Forecast>().hook(bergen_instead).hook(rounded_up).build();
    let seen = Seen::default();
    let observer = seen.observer();
    let mut conversation = Conversation::new();
    let forecast =
        agent.turn(&mut conversation, "Weather?").observe(&observer).answer().await.unwrap();
    let bergen = Forecast { city: "Bergen".into(), sunny: false, ..oslo() };
    assert_eq!(forecast, bergen, "not rounded: the STOP ended the chain");
    assert_eq!(seen.take(), ["bergen_instead: stop"]);
    let logged: Forecast = serde_json::from_str(&answer_in_log(&conversation)).unwrap();
    assert_eq!(logged, bergen);
}

#[tokio::test]
async fn an_answer_that_does_not_read_passes_the_hook_by_and_is_sent_back() {
    let model = ScriptedModel::new().text("Sunny, 21 degrees.").text(GOOD);
    let agent = Agent::builder(&model).output::<Forecast>().hook(rounded_up).build();
    let seen = Seen::default();
    let observer = seen.observer();
    let forecast =
        agent.turn(&mut Conversation::new(), "Weather?").observe(&observer).answer().await.unwrap();
    assert_eq!(forecast.temperature, Some(25));
    assert_eq!(
        seen.take(),
        ["rounded_up: skipped", "withdrawn by the answer's check", "rounded_up: continue",]
    );
}

fn below_freezing(forecast: &Forecast, _turn: &Turn) -> bool {
    forecast.temperature.is_some_and(|degrees| degrees < 0)
}

#[hook(before_final, when = below_freezing)]
async fn not_sunny_when_freezing(forecast: &mut Forecast) {
    forecast.sunny = false;
}

#[tokio::test]
async fn a_condition_reads_the_typed_answer() {
    let cold = r#"{"city": "Oslo", "sunny": true, "temperature": -5, "confidence": 90}"#;
    let model = ScriptedModel::new().text(GOOD).text(cold);
    let agent = Agent::builder(&model).output::<Forecast>().hook(not_sunny_when_freezing).build();
    let mut conversation = Conversation::new();
    assert_eq!(agent.turn(&mut conversation, "Today?").answer().await.unwrap(), oslo());
    let forecast = agent.turn(&mut conversation, "Tomorrow?").answer().await.unwrap();
    assert_eq!((forecast.temperature, forecast.sunny), (Some(-5), false));
}

fn rounded_to_five(forecast: &Forecast) -> Result<(), String> {
    match forecast.temperature {
        Some(degrees) if degrees % 5 != 0 => Err(format!("{degrees} is not rounded")),
        _ => Ok(()),
    }
}

#[tokio::test]
async fn validators_check_the_answer_the_hooks_leave() {
    let model = ScriptedModel::new().text(GOOD);
    let agent = Agent::builder(&model)
        .output::<Forecast>()
        .validate(rounded_to_five)
        .hook(rounded_up)
        .build();
    let forecast = agent.turn(&mut Conversation::new(), "Weather?").answer().await.unwrap();
    assert_eq!(forecast.temperature, Some(25));
    assert_eq!(model.requests().len(), 1, "the hook's edit passed: no answer was sent back");
}

#[hook(before_final)]
async fn crashes(forecast: &Forecast) {
    panic!("no forecast for {}", forecast.city);
}

#[hook(before_final, timeout = "20ms")]
async fn hangs(_forecast: &Forecast) {
    std::future::pending::<()>().await;
}

#[tokio::test]
async fn a_typed_hooks_panic_or_timeout_ends_the_turn_naming_it() {
    let model = ScriptedModel::new().text(GOOD);
    let agent = Agent::builder(&model).output::<Forecast>().hook(crashes).build();
    let mut conversation = Conversation::new();
    let error = agent.turn(&mut conversation, "Weather?").answer().await.unwrap_err();
    let Error::HookPanicked { event, hook, message } = error else { panic!("{error:?}") };
    assert_eq!((event, hook), (EventKind::BeforeFinal, "crashes"));
    assert_eq!(message, "no forecast for Oslo");
    tests::assert_log_consistent(conversation.log());

    let model = ScriptedModel::new().text(GOOD);
    let agent = Agent::builder(&model).output::<Forecast>().hook(hangs).build();
    let error = agent.turn(&mut Conversation::new(), "Weather?").answer().await.unwrap_err();
    assert!(
        matches!(error, Error::HookTimedOut { event: EventKind::BeforeFinal, hook: "hangs", .. }),
        "{error:?}"
    );
}

/// Another output type than the agent's, for a STOP to carry by mistake.
#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(crate = "agentix::serde")]
#[schemars(crate = "agentix::schemars")]
struct Headline {
    title: String,
}

#[hook(before_final)]
async fn stops_with_a_headline(_forecast: &Forecast) -> Verdict<BeforeFinal> {
    Verdict::stop_with(Headline { title: "Sunny".into() })
}

#[tokio::test]
async fn a_stop_with_a_value_of_another_type_halts_naming_the_hook() {
    let model = ScriptedModel::new().text(GOOD);
    let agent = Agent::builder(&model).output::<Forecast>().hook(stops_with_a_headline).build();
    let error = agent.turn(&mut Conversation::new(), "Weather?").answer().await.unwrap_err();
    let Error::HookFailed { event, hook, message } = error else { panic!("{error:?}") };
    assert_eq!((event, hook), (EventKind::BeforeFinal, "stops_with_a_headline"));
    assert!(
        message.starts_with("its STOP carried an answer that is not a `Forecast`"),
        "{message}"
    );
}

/// A text hook beside a typed one: both run, in the order added, on the same answer.
#[hook(before_final)]
async fn as_text(message: &AssistantMessage) -> Verdict<BeforeFinal> {
    assert!(message.joined_text().contains("\"temperature\":25"), "{}", message.joined_text());
    Verdict::Continue
}

#[tokio::test]
async fn text_hooks_see_a_typed_hooks_edit_as_json() {
    let model = ScriptedModel::new().text(GOOD);
    let agent = Agent::builder(&model).output::<Forecast>().hook(rounded_up).hook(as_text).build();
    let forecast = agent.turn(&mut Conversation::new(), "Weather?").answer().await.unwrap();
    assert_eq!(forecast.temperature, Some(25));
}
