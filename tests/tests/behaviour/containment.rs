//! A panic in any component of an agent — summarizer, token counter, observer, audit sink,
//! approver, stream transformer, tool — ends as a typed error or a failed result naming that
//! component, whichever way the turn runs; nothing unwinds out of it, the log stays valid, and
//! the next turn runs.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use agentix::event::BeforeTool;
use agentix::{
    Agent, Config, Conversation, Entry, Error, Message, Outcome, ScriptedModel, StreamEvent,
    ToolCall, Verdict,
    approval::Approval,
    context::{AuditSink, Summarizer, TokenCounter},
    conversation::TurnRef,
    error::Component,
    hook,
    message::ToolFailure,
    model::ModelRequest,
    observe::Observation,
    transform::StreamTransformer,
    verdict::Escalation,
};
use futures::{FutureExt, StreamExt};
use serde_json::json;
use tests::{Weather, tool_results};

/// The three ways a turn runs.
#[derive(Clone, Copy, Debug)]
enum Way {
    Run,
    Observed,
    Streamed,
}

const WAYS: [Way; 3] = [Way::Run, Way::Observed, Way::Streamed];

/// Runs one turn `way`, checking that nothing unwinds out of it and that it leaves a valid log.
async fn turn<M, T, P, A, X>(
    way: Way,
    agent: &Agent<M, T, P, A, X>,
    conversation: &mut Conversation,
    message: &str,
) -> Outcome
where
    M: agentix::Model,
    T: agentix::ToolSet,
    P: agentix::pipeline::Pipeline,
    A: agentix::approval::Approver,
    X: StreamTransformer,
{
    let ran = std::panic::AssertUnwindSafe(async {
        match way {
            Way::Run => agent.run(conversation, message).await,
            Way::Observed => {
                agent.turn(conversation, message).observe(&|_: &Observation<'_>| {}).await
            }
            Way::Streamed => {
                let events: Vec<StreamEvent> =
                    agent.turn(conversation, message).stream().collect().await;
                match events.last() {
                    Some(StreamEvent::Finished(outcome)) => outcome.clone(),
                    other => panic!("the stream ended without its outcome: {other:?}"),
                }
            }
        }
    })
    .catch_unwind()
    .await;
    let outcome = ran.unwrap_or_else(|_| panic!("a panic unwound out of the turn ({way:?})"));
    conversation.validate().unwrap_or_else(|error| panic!("{way:?}: {error}"));
    outcome
}

/// The component's panic, as the turn's error.
fn panicked(component: Component, message: &str) -> Error {
    Error::ComponentPanicked { component, message: message.into() }
}

/// A conversation whose last turn ended with `error`, recorded in the log.
fn assert_recorded(conversation: &Conversation, error: &Error) {
    let recorded = conversation.log().iter().rev().find_map(|entry| match entry {
        Entry::Failed { error, .. } => Some(error.clone()),
        _ => None,
    });
    assert_eq!(recorded.as_deref(), Some(error.to_string().as_str()), "{:#?}", conversation.log());
}

/// Panics the first time it is called; answers after.
#[derive(Default)]
struct Once(AtomicBool);

impl Once {
    fn first(&self) -> bool {
        !self.0.swap(true, Ordering::Relaxed)
    }
}

struct PanickingSummarizer(Once);

impl Summarizer for PanickingSummarizer {
    async fn summarize(&self, _: Option<&str>, _: &[Message], _turn: &agentix::Turn) -> String {
        if self.0.first() {
            panic!("summarizer down");
        }
        "earlier talk".into()
    }
}

#[tokio::test]
async fn a_summarizer_that_panics_ends_the_turn_naming_it() {
    for way in WAYS {
        let model = ScriptedModel::new().text("one").text("three");
        let agent = Agent::builder(&model).summarizer(PanickingSummarizer(Once::default())).build();
        // Room for about one turn: the second drops the first, and summarizes it.
        let config = Config { context_budget: 20, injection_reserve: 0, ..Config::default() };
        let mut conversation = Conversation::with_config(config);
        let long = "a long first message that takes up most of the room";
        turn(way, &agent, &mut conversation, long).await.unwrap();
        let error = turn(way, &agent, &mut conversation, "two").await.unwrap_err();
        assert_eq!(error, panicked(Component::Summarizer, "summarizer down"), "{way:?}");
        assert_recorded(&conversation, &error);
        assert_eq!(model.calls(), 1, "the request was never sent");
        assert_eq!(
            turn(way, &agent, &mut conversation, "three").await.unwrap().joined_text(),
            "three"
        );
    }
}

/// Counts characters, but panics once on a text holding "explode".
#[derive(Default)]
struct PanickingCounter(Once);

impl TokenCounter for PanickingCounter {
    fn count(&self, text: &str) -> usize {
        if text.contains("explode") && self.0.first() {
            panic!("counter down");
        }
        text.len()
    }
}

#[tokio::test]
async fn a_token_counter_that_panics_ends_the_turn_naming_it() {
    for way in WAYS {
        let model = ScriptedModel::new().text("fine");
        let agent = Agent::builder(&model).token_counter(PanickingCounter::default()).build();
        let mut conversation = Conversation::new();
        let error = turn(way, &agent, &mut conversation, "explode").await.unwrap_err();
        assert_eq!(error, panicked(Component::TokenCounter, "counter down"), "{way:?}");
        assert_recorded(&conversation, &error);
        assert_eq!(model.calls(), 0);
        assert_eq!(
            turn(way, &agent, &mut conversation, "again").await.unwrap().joined_text(),
            "fine"
        );
    }
}

/// An observer that asks for the answer as it streams, over a closure.
struct Streaming<F>(F);

impl<F: Fn(&Observation<'_>) + Sync> agentix::Observer for Streaming<F> {
    const STREAMS: bool = true;

    fn observe(&self, observation: &Observation<'_>) {
        (self.0)(observation)
    }
}

#[tokio::test]
async fn an_observer_that_panics_is_disconnected_and_ends_the_turn_naming_it() {
    for streams in [false, true] {
        let model = ScriptedModel::new()
            .tool_call("get_weather", json!({ "city": "Oslo" }))
            .text("next turn");
        let agent = Agent::builder(&model).tool(Weather::default()).build();
        let heard = std::sync::atomic::AtomicUsize::new(0);
        let at_panic = std::sync::atomic::AtomicUsize::new(0);
        let observer = |observation: &Observation<'_>| {
            let count = heard.fetch_add(1, Ordering::Relaxed) + 1;
            if matches!(observation, Observation::ToolFinished { .. }) {
                at_panic.store(count, Ordering::Relaxed);
                panic!("observer down");
            }
        };
        let mut conversation = Conversation::new();
        let outcome = std::panic::AssertUnwindSafe(async {
            if streams {
                agent.turn(&mut conversation, "weather?").observe(&Streaming(&observer)).await
            } else {
                agent.turn(&mut conversation, "weather?").observe(&observer).await
            }
        })
        .catch_unwind()
        .await
        .expect("nothing unwinds out of the turn");
        let error = outcome.unwrap_err();
        assert_eq!(error, panicked(Component::Observer, "observer down"));
        assert_recorded(&conversation, &error);
        conversation.validate().unwrap();
        assert_eq!(
            heard.load(Ordering::Relaxed),
            at_panic.load(Ordering::Relaxed),
            "not called again"
        );
        // The step that ran is logged; the turn ended before the next model call.
        assert_eq!(model.calls(), 1);
        assert!(
            matches!(&conversation.log()[2], Entry::ToolResults { results, .. } if results[0].output == "sunny in Oslo"),
            "{:#?}",
            conversation.log()
        );
        let reply = agent.run(&mut conversation, "again").await.unwrap();
        assert_eq!(reply.joined_text(), "next turn");
    }
}

/// Records requests, but panics on the first.
#[derive(Default)]
struct PanickingAudit(Once);

impl AuditSink for PanickingAudit {
    fn record(&self, _turn: TurnRef, _request: &ModelRequest) {
        if self.0.first() {
            panic!("audit down");
        }
    }
}

#[tokio::test]
async fn an_audit_sink_that_panics_ends_the_turn_and_its_request_is_not_sent() {
    for way in WAYS {
        let model = ScriptedModel::new().text("audited");
        let agent = Agent::builder(&model).audit(Arc::new(PanickingAudit::default())).build();
        let mut conversation = Conversation::new();
        let error = turn(way, &agent, &mut conversation, "hi").await.unwrap_err();
        assert_eq!(error, panicked(Component::AuditSink, "audit down"), "{way:?}");
        assert_recorded(&conversation, &error);
        assert_eq!(model.calls(), 0, "an unaudited request is not sent");
        assert_eq!(
            turn(way, &agent, &mut conversation, "again").await.unwrap().joined_text(),
            "audited"
        );
    }
}

#[hook(before_tool)]
async fn ask_first(_call: &ToolCall) -> Verdict<BeforeTool> {
    Verdict::escalate("a person decides")
}

#[tokio::test]
async fn an_approver_that_panics_rejects_the_call_and_the_model_reads_why() {
    for way in WAYS {
        let model = ScriptedModel::new()
            .tool_call("get_weather", json!({ "city": "Oslo" }))
            .text("I could not check.");
        let weather = Weather::default();
        let ran = Arc::clone(&weather.calls);
        let agent = Agent::builder(&model)
            .tool(weather)
            .hook(ask_first)
            .approver(|_call: ToolCall, _why: Escalation| async move {
                if true {
                    panic!("approver down");
                }
                Approval::Approve
            })
            .build();
        let mut conversation = Conversation::new();
        let reply = turn(way, &agent, &mut conversation, "weather?").await.unwrap();
        assert_eq!(reply.joined_text(), "I could not check.");
        assert!(ran.lock().unwrap().is_empty(), "the call never ran");
        let result = &tool_results(&model.requests()[1])[0];
        let Some(ToolFailure::Rejected { reason, .. }) = &result.error else {
            panic!("{way:?}: {result:?}");
        };
        assert_eq!(reason, "the approver panicked: approver down");
    }
}

/// Passes text through, but panics once on a chunk holding an "x" (however the text is cut).
#[derive(Default)]
struct PanickingTransformer(Once);

impl StreamTransformer for PanickingTransformer {
    type State = ();

    fn transform(&self, (): &mut (), chunk: String) -> String {
        if chunk.contains('x') && self.0.first() {
            panic!("transformer down");
        }
        chunk
    }

    fn flush(&self, (): &mut ()) -> String {
        String::new()
    }
}

#[tokio::test]
async fn a_stream_transformer_that_panics_ends_the_turn_naming_it() {
    for way in WAYS {
        let model = ScriptedModel::new().text("this will explode").text("calm now").chunked(4);
        let agent = Agent::builder(&model).transformer(PanickingTransformer::default()).build();
        let mut conversation = Conversation::new();
        let error = turn(way, &agent, &mut conversation, "hi").await.unwrap_err();
        assert_eq!(error, panicked(Component::Transformer, "transformer down"), "{way:?}");
        assert_recorded(&conversation, &error);
        assert!(
            !conversation.log().iter().any(|entry| matches!(entry, Entry::Assistant { .. })),
            "the answer never joined the log"
        );
        assert_eq!(
            turn(way, &agent, &mut conversation, "again").await.unwrap().joined_text(),
            "calm now"
        );
    }
}

#[tokio::test]
async fn a_tool_that_panics_fails_its_call_and_the_turn_goes_on() {
    for way in WAYS {
        let model =
            ScriptedModel::new().tool_call("explode", json!({ "city": "Oslo" })).text("recovered");
        let agent = Agent::builder(&model).tool(tests::Explode).build();
        let mut conversation = Conversation::new();
        let reply = turn(way, &agent, &mut conversation, "hi").await.unwrap();
        assert_eq!(reply.joined_text(), "recovered");
        let result = &tool_results(&model.requests()[1])[0];
        assert_eq!(
            result.error,
            Some(ToolFailure::Panicked { message: "boom in Oslo".into() }),
            "{way:?}"
        );
    }
}
