//! Streaming: the model's text as it arrives, through the redactor; RETRY withdraws what was
//! streamed; dropping the stream at any point leaves the conversation consistent and usable.

use agentix::event::{AfterModel, EventKind};
use agentix::{
    Agent, AssistantMessage, Conversation, Entry, ScriptedModel, StreamEvent, Verdict, hook,
    transform::Redactor,
};
use futures::StreamExt;
use serde_json::json;
use tests::{Path, Weather, assert_log_consistent, run_on};

fn leaky() -> ScriptedModel {
    ScriptedModel::new()
        .text("Use the key sk-abcdefghij0123456789KLMN, and if it fails write to ada@example.org; it can take a day.")
        .chunked(7)
}

/// API keys and short addresses: a window small enough for text to flow while streaming.
fn redactor() -> Redactor {
    Redactor::empty()
        .with_pattern("sk-[A-Za-z0-9]{20,32}", "API key")
        .and_then(|r| r.with_pattern("[a-z]{1,16}@[a-z]{1,16}\\.[a-z]{2,4}", "e-mail"))
        .unwrap()
}

#[tokio::test]
async fn a_secret_split_across_chunks_never_reaches_the_consumer_or_the_log() {
    let redacted = "Use the key [redacted API key], and if it fails write to [redacted e-mail]; it can take a day.";
    let mut logs = Vec::new();
    for path in [Path::Streamed, Path::Direct] {
        let model = leaky();
        let agent = Agent::builder(&model).transformer(redactor()).build();
        let mut conversation = Conversation::new();
        if path == Path::Streamed {
            let events: Vec<StreamEvent> =
                agent.turn(&mut conversation, "credentials?").stream().collect().await;
            let pieces: Vec<&str> = events
                .iter()
                .filter_map(|event| match event {
                    StreamEvent::Text(text) => Some(text.as_str()),
                    _ => None,
                })
                .collect();
            assert!(pieces.len() > 3, "text flowed while streaming: {pieces:?}");
            assert_eq!(pieces.concat(), redacted, "the consumer sees only redacted text");
        } else {
            let ran = run_on(path, &agent, &mut conversation, "credentials?").await;
            assert_eq!(ran.outcome.unwrap().joined_text(), redacted);
        }
        logs.push(conversation.log().to_vec());
    }
    assert_eq!(logs[0], logs[1], "both paths log the same, redacted, text");
    assert!(!format!("{:?}", logs[0]).contains("sk-abcdef"));
}

/// Calls the model once more when the first answer is short.
#[hook(wrap_model)]
async fn second_opinion(
    request: &agentix::model::ModelRequest,
    next: &impl agentix::model::NextModel,
) -> Result<agentix::model::ModelResponse, agentix::model::ModelError> {
    let first = next.call(request).await?;
    if first.message.joined_text().len() < 10 { next.call(request).await } else { Ok(first) }
}

#[tokio::test]
async fn a_wrap_hook_calling_the_model_again_withdraws_the_first_answer() {
    let model = ScriptedModel::new().text("Hm.").text("A proper answer.").chunked(4);
    let agent = Agent::builder(&model).hook(second_opinion).build();
    let mut conversation = Conversation::new();
    let events: Vec<StreamEvent> = agent.turn(&mut conversation, "help").stream().collect().await;
    let seen: Vec<String> = events
        .iter()
        .filter_map(|event| match event {
            StreamEvent::Text(text) => Some(text.clone()),
            StreamEvent::Withdrawn { event, hook: None } => Some(format!("<withdrawn at {event}>")),
            _ => None,
        })
        .collect();
    assert_eq!(seen, ["Hm.", "<withdrawn at wrap_model>", "A pr", "oper", " ans", "wer."]);
}

#[tokio::test]
async fn text_beside_tool_calls_comes_out_the_same_on_both_paths() {
    let script = || {
        let message = AssistantMessage::text("Let me check.")
            .with_tool_call(agentix::ToolCall::new("c1", "get_weather", json!({ "city": "Oslo" })));
        ScriptedModel::new().message(message).text("Sunny.").chunked(3)
    };
    let mut logs = Vec::new();
    for path in [Path::Direct, Path::Streamed] {
        let model = script();
        let agent = Agent::builder(&model).tool(Weather::default()).build();
        let mut conversation = Conversation::new();
        run_on(path, &agent, &mut conversation, "weather?").await.outcome.unwrap();
        logs.push(conversation.log().to_vec());
    }
    assert_eq!(logs[0], logs[1]);
    assert!(
        matches!(&logs[0][1], Entry::Assistant { message, .. } if message.joined_text() == "Let me check." && message.calls_tools())
    );
}

/// Sends back any answer that is not polite.
#[hook(after_model)]
async fn polite(message: &AssistantMessage) -> Verdict<AfterModel> {
    if message.joined_text().starts_with("Please") {
        Verdict::Continue
    } else {
        Verdict::retry("Be polite.")
    }
}

#[tokio::test]
async fn a_retry_withdraws_the_text_already_streamed() {
    let model = ScriptedModel::new().text("No.").text("Please wait.").chunked(3);
    let agent = Agent::builder(&model).hook(polite).build();
    let mut conversation = Conversation::new();
    let events: Vec<StreamEvent> = agent.turn(&mut conversation, "help").stream().collect().await;
    let texts: Vec<String> = events
        .iter()
        .filter_map(|event| match event {
            StreamEvent::Text(text) => Some(text.clone()),
            StreamEvent::Withdrawn { event, hook: Some(hook) } => {
                Some(format!("<withdrawn by {event} {hook}>"))
            }
            _ => None,
        })
        .collect();
    assert_eq!(texts, ["No.", "<withdrawn by after_model polite>", "Ple", "ase", " wa", "it."]);
    assert!(
        matches!(events.last(), Some(StreamEvent::Finished(Ok(answer))) if answer.joined_text() == "Please wait.")
    );
    let answers: Vec<&Entry> = conversation
        .log()
        .iter()
        .filter(|entry| matches!(entry, Entry::Assistant { .. }))
        .collect();
    assert_eq!(answers.len(), 1, "only the accepted message is in the log");
}

fn turn_with_tools() -> ScriptedModel {
    let model = ScriptedModel::new()
        .tool_calls([
            ("get_weather", json!({ "city": "Oslo" })),
            ("slow_weather", json!({ "city": "Bergen" })),
            ("no_such_tool", json!({})),
        ])
        .text("Sunny in Oslo.");
    (0..4).fold(model, |model, _| model.text("Next turn.")).chunked(5)
}

/// `slow_weather`: waits, then does its work and records it; while it waits, the step's first
/// call has finished and the step is not committed yet.
#[derive(Default)]
struct SlowWeather {
    calls: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl agentix::Tool for SlowWeather {
    const NAME: &'static str = "slow_weather";
    type Args = tests::City;
    type Output = String;
    type Error = std::convert::Infallible;

    fn description(&self) -> &str {
        "Current weather for a city, slowly."
    }

    async fn call(&self, args: tests::City, _turn: &agentix::Turn) -> Result<String, Self::Error> {
        tests::Yields(1).await;
        self.calls.lock().unwrap().push(args.city.clone());
        Ok(format!("sunny in {}", args.city))
    }
}

/// `after_tool`: waits over each result, holding the step open.
#[hook(after_tool)]
async fn mull(_result: &agentix::ToolResult) {
    tests::Yields(1).await;
}

#[tokio::test]
async fn dropping_the_stream_after_any_event_leaves_the_conversation_consistent() {
    let all = {
        let model = turn_with_tools();
        let agent = Agent::builder(&model)
            .tool(Weather::default())
            .tool(SlowWeather::default())
            .hook(mull)
            .build();
        let mut conversation = Conversation::new();
        agent.turn(&mut conversation, "weather?").stream().collect::<Vec<_>>().await
    };
    assert!(all.len() > 20, "a turn with tools streams many events: {}", all.len());
    assert!(
        all.iter()
            .any(|event| matches!(event, StreamEvent::Event { event: EventKind::WrapTool, .. }))
    );

    let mut cancelled = 0;
    for taken in 0..=all.len() {
        let model = turn_with_tools();
        let (weather, slow) = (Weather::default(), SlowWeather::default());
        let performed = [std::sync::Arc::clone(&weather.calls), std::sync::Arc::clone(&slow.calls)];
        let agent = Agent::builder(&model).tool(weather).tool(slow).hook(mull).build();
        let mut conversation = Conversation::new();
        {
            let mut stream = std::pin::pin!(agent.turn(&mut conversation, "weather?").stream());
            for _ in 0..taken {
                stream.next().await.expect("the turn has this many events");
            }
        } // dropped here, mid-turn
        assert_log_consistent(conversation.log());
        // Every call whose tool did its work is in the log with what it returned.
        let logged: Vec<String> = tests::logged_results(&conversation)
            .into_iter()
            .map(|result| result.output.clone())
            .collect();
        for city in performed.iter().flat_map(|calls| calls.lock().unwrap().clone()) {
            let output = format!("sunny in {city}");
            assert!(
                logged.contains(&output),
                "after {taken} events, {output:?} is lost: {logged:?}"
            );
        }
        match conversation.log().last() {
            None => assert_eq!(taken, 0, "only a stream never polled leaves no trace"),
            Some(Entry::Failed { error, .. }) if error.contains("cancelled") => cancelled += 1,
            Some(Entry::Assistant { message, .. }) => {
                assert_eq!(message.joined_text(), "Sunny in Oslo.", "after {taken} events");
            }
            Some(other) => panic!("after {taken} events the log ends with {other:?}"),
        }
        let next = agent.run(&mut conversation, "and tomorrow?").await;
        assert!(next.is_ok(), "after {taken} events the next turn failed: {next:?}");
        assert_log_consistent(conversation.log());
    }
    assert!(cancelled > all.len() / 2, "most drops land mid-turn: {cancelled} of {}", all.len());
}

/// An observer that does not stream is told of no text pieces, the redactor's held-back tail
/// included: a non-streamed answer is redacted whole, and reported whole when the turn ends.
#[tokio::test]
async fn an_observer_that_does_not_stream_sees_no_text_pieces() {
    let agent = Agent::builder(leaky()).transformer(redactor()).build();
    let pieces = std::sync::atomic::AtomicUsize::new(0);
    let observer = |observation: &agentix::observe::Observation<'_>| {
        if matches!(observation, agentix::observe::Observation::TextDelta { .. }) {
            pieces.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    };
    let mut conversation = Conversation::new();
    let answer =
        agent.turn(&mut conversation, "How do I log in?").observe(&observer).await.unwrap();
    assert!(answer.joined_text().contains("[redacted e-mail]; it can take a day."));
    assert_eq!(pieces.into_inner(), 0);
}

/// What an observer of a streamed turn heard: each event and each streamed piece of text.
fn heard(observation: &agentix::observe::Observation<'_>) -> Option<String> {
    match observation {
        agentix::observe::Observation::Event { event, .. } => Some(event.name().to_owned()),
        agentix::observe::Observation::TextDelta { text } => Some(format!("text {text}")),
        _ => None,
    }
}

/// The same of the stream's events.
fn streamed(event: &StreamEvent) -> Option<String> {
    match event {
        StreamEvent::Event { event, .. } => Some(event.name().to_owned()),
        StreamEvent::Text(text) => Some(format!("text {text}")),
        _ => None,
    }
}

#[tokio::test]
async fn an_observer_of_a_streamed_turn_hears_what_the_stream_yields_as_it_happens() {
    let model = turn_with_tools();
    let agent = Agent::builder(&model).tool(Weather::default()).build();
    let mut conversation = Conversation::new();
    let log = std::sync::Mutex::new(Vec::new());
    let observer = |observation: &agentix::observe::Observation<'_>| {
        if let Some(line) = heard(observation) {
            log.lock().unwrap().push(line);
        }
    };
    let events: Vec<StreamEvent> =
        agent.turn(&mut conversation, "weather?").observe(&observer).stream().collect().await;
    let from_stream: Vec<String> = events.iter().filter_map(streamed).collect();
    let observed = log.into_inner().unwrap();
    assert!(from_stream.iter().any(|line| line.starts_with("text ")), "{from_stream:?}");
    assert_eq!(observed, from_stream);
    assert!(matches!(events.last(), Some(StreamEvent::Finished(Ok(_)))));
    assert_log_consistent(conversation.log());
}
