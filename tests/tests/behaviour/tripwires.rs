//! Tripwires: hooks that run beside the model call of the turn's first step and can only pass
//! or trip. A trip cancels the call in flight — nothing of it reaches the log, the journal or
//! the turn's usage — and ends the turn naming the hook; a tripwire that fails trips unless it
//! may be skipped.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use agentix::event::EventKind;
use agentix::{
    Agent, AssistantMessage, Conversation, Entry, Error, Model, ScriptedModel, Turn, hook,
    model::{ModelError, ModelRequest, ModelResponse, Usage},
    verdict::Trip,
};
use futures::StreamExt;
use serde_json::json;
use tests::Weather;

use crate::journal::Memory;

/// A model that takes `after` to answer, and notes whether it did.
struct Slow {
    after: Duration,
    answered: Arc<AtomicBool>,
    calls: Arc<AtomicUsize>,
}

impl Slow {
    fn new(after: Duration) -> Self {
        Slow { after, answered: Arc::default(), calls: Arc::default() }
    }
}

impl Model for Slow {
    async fn complete(&self, _: &ModelRequest) -> Result<ModelResponse, ModelError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        tokio::time::sleep(self.after).await;
        self.answered.store(true, Ordering::SeqCst);
        let mut response: ModelResponse = AssistantMessage::text("An answer.").into();
        response.usage = Usage { input_tokens: 100, output_tokens: 10, ..Usage::default() };
        Ok(response)
    }
}

/// Trips on any message that mentions a password, after a check that takes 50 ms.
#[hook(tripwire)]
async fn no_passwords(request: &ModelRequest) -> Trip {
    tokio::time::sleep(Duration::from_millis(50)).await;
    let mentions = request.messages.iter().any(|message| message.text().contains("password"));
    if mentions { Trip::trip("a password in the input") } else { Trip::Pass }
}

#[tokio::test]
async fn a_trip_cancels_the_model_call_in_flight_and_leaves_nothing_of_it() {
    let model = Slow::new(Duration::from_secs(30));
    let answered = Arc::clone(&model.answered);
    let agent = Agent::builder(model).hook(no_passwords).build();
    let mut conversation = Conversation::new();
    let journal = Memory::default();
    let outcome = agent.turn(&mut conversation, "my password is hunter2").journal(&journal).await;
    assert_eq!(
        outcome,
        Err(Error::Tripped { hook: "no_passwords", reason: "a password in the input".into() })
    );
    assert!(!answered.load(Ordering::SeqCst), "the model call was cancelled, not awaited");
    // The log: the user message, and the trip; no assistant message, no usage.
    let kinds: Vec<&str> = conversation
        .log()
        .iter()
        .map(|entry| match entry {
            Entry::User { .. } => "user",
            Entry::Halted { event: EventKind::Tripwire, hook, .. } if hook == "no_passwords" => {
                "tripped"
            }
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(kinds, ["user", "tripped"]);
    assert_eq!(journal.names(), ["opened (turn 1)"], "no model step journaled");
    conversation.validate().unwrap();
}

#[tokio::test]
async fn a_passing_tripwire_lets_the_call_through() {
    let model = Slow::new(Duration::from_millis(10));
    let calls = Arc::clone(&model.calls);
    let agent = Agent::builder(model).hook(no_passwords).build();
    let mut conversation = Conversation::new();
    let reply = agent.run(&mut conversation, "hello").await.unwrap();
    assert_eq!(reply.joined_text(), "An answer.");
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_trip_after_the_model_answered_discards_the_answer() {
    // The model answers at once; the check takes 50 ms, and trips.
    let model = ScriptedModel::new().text("Your password is safe with me.");
    let agent = Agent::builder(&model).hook(no_passwords).build();
    let mut conversation = Conversation::new();
    let outcome = agent.run(&mut conversation, "my password is hunter2").await;
    assert!(matches!(outcome, Err(Error::Tripped { hook: "no_passwords", .. })), "{outcome:?}");
    assert_eq!(model.calls(), 1);
    assert!(
        conversation.log().iter().all(|entry| !matches!(entry, Entry::Assistant { .. })),
        "{:#?}",
        conversation.log()
    );
}

/// Counts the requests it checks.
#[derive(Clone, Default)]
struct Checks(Arc<AtomicUsize>);

impl agentix::on::Tripwire for Checks {
    async fn tripwire(&self, _: &ModelRequest, _: &Turn) -> Trip {
        self.0.fetch_add(1, Ordering::SeqCst);
        Trip::Pass
    }
}

#[tokio::test]
async fn a_tripwire_checks_the_first_steps_call_only() {
    let model = ScriptedModel::new()
        .tool_call("get_weather", json!({ "city": "Oslo" }))
        .text("Sunny in Oslo.");
    let checks = Checks::default();
    let agent = Agent::builder(&model).tool(Weather::default()).hook(checks.clone()).build();
    agent.run(&mut Conversation::new(), "weather?").await.unwrap();
    assert_eq!(model.calls(), 2);
    assert_eq!(checks.0.load(Ordering::SeqCst), 1, "the turn's input is checked once");
}

/// A check whose service is down.
#[hook(tripwire)]
async fn broken(_request: &ModelRequest) -> Trip {
    panic!("the classifier is down")
}

/// The same check, which the turn may do without.
#[hook(tripwire, on_error = skip)]
async fn optional(_request: &ModelRequest) -> Trip {
    panic!("the classifier is down")
}

/// A check that never answers in time.
#[hook(tripwire, timeout = "20ms")]
async fn hung(_request: &ModelRequest) -> Trip {
    tokio::time::sleep(Duration::from_secs(30)).await;
    Trip::Pass
}

#[tokio::test]
async fn a_failing_tripwire_trips_unless_it_may_be_skipped() {
    let model = ScriptedModel::new().text("An answer.");
    let agent = Agent::builder(&model).hook(broken).build();
    let outcome = agent.run(&mut Conversation::new(), "hello").await;
    assert!(
        matches!(
            &outcome,
            Err(Error::HookPanicked { event: EventKind::Tripwire, hook: "broken", .. })
        ),
        "{outcome:?}"
    );

    let model = Slow::new(Duration::from_secs(30));
    let agent = Agent::builder(model).hook(hung).build();
    let outcome = agent.run(&mut Conversation::new(), "hello").await;
    assert!(
        matches!(
            &outcome,
            Err(Error::HookTimedOut { event: EventKind::Tripwire, hook: "hung", .. })
        ),
        "{outcome:?}"
    );

    let model = ScriptedModel::new().text("An answer.");
    let agent = Agent::builder(&model).hook(optional).build();
    let mut conversation = Conversation::new();
    let reply = agent.run(&mut conversation, "hello").await.unwrap();
    assert_eq!(reply.joined_text(), "An answer.");
    let skipped = conversation.log().iter().any(|entry| {
        matches!(entry, Entry::HookSkipped { event: EventKind::Tripwire, hook, .. } if hook == "optional")
    });
    assert!(skipped, "{:#?}", conversation.log());
}

/// Streams a first piece of its answer at once, then takes 30 s for the rest.
struct Talkative;

impl Model for Talkative {
    async fn complete(&self, _: &ModelRequest) -> Result<ModelResponse, ModelError> {
        tokio::time::sleep(Duration::from_secs(30)).await;
        Ok(AssistantMessage::text("Sure, your password is").into())
    }

    fn stream(
        &self,
        _: &ModelRequest,
    ) -> impl futures::Stream<Item = Result<agentix::model::Chunk, ModelError>> + Send {
        let first = futures::stream::iter([Ok(agentix::model::Chunk::Text("Sure, your ".into()))]);
        let rest = futures::stream::once(async {
            tokio::time::sleep(Duration::from_secs(30)).await;
            Ok(agentix::model::Chunk::Text("password is".into()))
        });
        first.chain(rest)
    }
}

#[tokio::test]
async fn a_stream_shows_the_trip_and_withdraws_what_the_cancelled_call_streamed() {
    let agent = Agent::builder(Talkative).hook(no_passwords).build();
    let mut conversation = Conversation::new();
    let events: Vec<agentix::StreamEvent> =
        agent.turn(&mut conversation, "my password?").stream().collect().await;
    let shown: Vec<String> = events
        .iter()
        .filter_map(|event| match event {
            agentix::StreamEvent::Text(text) => Some(format!("text {text}")),
            agentix::StreamEvent::Withdrawn { event: EventKind::Tripwire, hook } => {
                Some(format!("withdrawn by {}", hook.as_deref().unwrap_or("?")))
            }
            agentix::StreamEvent::Hook { event: EventKind::Tripwire, hook, decision, .. } => {
                Some(format!("{hook}: {decision}"))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        shown,
        [
            "text Sure, your ",
            "no_passwords: tripped (a password in the input)",
            "withdrawn by no_passwords"
        ]
    );
    let Some(agentix::StreamEvent::Finished(outcome)) = events.last() else { panic!("{events:?}") };
    assert!(matches!(outcome, Err(Error::Tripped { .. })), "{outcome:?}");
    assert!(conversation.log().iter().all(|entry| !matches!(entry, Entry::Assistant { .. })));
}
