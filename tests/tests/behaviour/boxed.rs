//! The type-erased agent runs a turn each way the typed agent does, with the same result, so an
//! application can keep agents of different types in one map.

use std::collections::HashMap;
use std::sync::Mutex;

use agentix::event::AfterModel;
use agentix::pipeline::Pipeline;
use agentix::{
    Agent, AssistantMessage, BoxedAgent, Conversation, Observer, ScriptedModel, StreamEvent,
    ToolSet, Verdict, hook, observe::Observation,
};
use futures::StreamExt;
use serde_json::json;
use tests::Weather;

#[hook(after_model)]
async fn retry_short(message: &AssistantMessage) -> Verdict<AfterModel> {
    if message.calls_tools() || message.joined_text().len() > 3 {
        Verdict::Continue
    } else {
        Verdict::retry("say more")
    }
}

/// A turn with a tool call, a retried answer and a final answer streamed in pieces.
fn weather_agent() -> Agent<ScriptedModel, impl ToolSet, impl Pipeline> {
    let model = ScriptedModel::new()
        .chunked(4)
        .tool_call("get_weather", json!({ "city": "Oslo" }))
        .text("ok")
        .text("Sunny in Oslo.");
    Agent::builder(model).tool(Weather::default()).hook(retry_short).build()
}

fn plain_agent() -> Agent<ScriptedModel> {
    Agent::builder(ScriptedModel::new().chunked(3).text("Hello there.")).build()
}

fn boxed_agents() -> HashMap<&'static str, BoxedAgent> {
    HashMap::from([("weather", weather_agent().boxed()), ("plain", plain_agent().boxed())])
}

#[tokio::test]
async fn a_map_of_boxed_agents_runs_turns() {
    let agents = boxed_agents();
    let mut conversation = Conversation::new();
    let reply = agents["weather"].run(&mut conversation, "Weather in Oslo?").await.unwrap();
    assert_eq!(reply.joined_text(), "Sunny in Oslo.");
    // User message, tool call, its result, the final answer: the retried "ok" is not kept.
    assert_eq!(conversation.log().len(), 4);
    tests::assert_log_consistent(conversation.log());
    let reply = agents["plain"].run(&mut Conversation::new(), "hi").await.unwrap();
    assert_eq!(reply.joined_text(), "Hello there.");
}

/// Records what it sees as text, and asks for the model's answer as it streams.
#[derive(Default)]
struct Streaming(Mutex<Vec<String>>);

impl Observer for Streaming {
    const STREAMS: bool = true;

    fn observe(&self, observation: &Observation<'_>) {
        self.0.lock().unwrap().push(observation.to_string());
    }
}

/// What a closure observer (which does not ask for the text as it streams) saw of a turn.
async fn seen_by_closure(agent: impl AsyncFnOnce(&mut Conversation, &Recorder)) -> Vec<String> {
    let seen = Mutex::new(Vec::new());
    let recorder =
        |observation: &Observation<'_>| seen.lock().unwrap().push(observation.to_string());
    agent(&mut Conversation::new(), &recorder).await;
    seen.into_inner().unwrap()
}

type Recorder<'a> = dyn Fn(&Observation<'_>) + Sync + 'a;

#[tokio::test]
async fn a_boxed_agent_reports_to_its_observer_as_the_typed_agent_does() {
    // An observer that streams sees the text in pieces, from either agent alike.
    let typed = Streaming::default();
    weather_agent().turn(&mut Conversation::new(), "hi").observe(&typed).await.unwrap();
    let boxed = Streaming::default();
    let agent = weather_agent().boxed();
    agent.turn(&mut Conversation::new(), "hi").observe(&boxed).await.unwrap();
    let (typed, boxed) = (typed.0.into_inner().unwrap(), boxed.0.into_inner().unwrap());
    assert_eq!(boxed, typed);
    let pieces = boxed.iter().filter(|line| line.trim_start().starts_with("text:")).count();
    assert_eq!(pieces, 1 + 4, "\"ok\" in one piece, \"Sunny in Oslo.\" in four: {boxed:#?}");
    assert!(boxed.iter().any(|line| line.contains("withdrawn")), "{boxed:#?}");

    // One that does not stream sees no pieces, from either agent alike.
    let typed = seen_by_closure(async |conversation, recorder| {
        weather_agent().turn(conversation, "hi").observe(&recorder).await.unwrap();
    })
    .await;
    let boxed = seen_by_closure(async |conversation, recorder| {
        weather_agent().boxed().turn(conversation, "hi").observe(&recorder).await.unwrap();
    })
    .await;
    assert_eq!(boxed, typed);
    assert!(!boxed.iter().any(|line| line.trim_start().starts_with("text:")), "{boxed:#?}");
    assert!(boxed.iter().any(|line| line.contains("completed: \"Sunny in Oslo.\"")), "{boxed:#?}");
}

#[tokio::test]
async fn a_boxed_agent_streams_as_the_typed_agent_does() {
    let mut typed_conversation = Conversation::new();
    let typed: Vec<StreamEvent> =
        weather_agent().turn(&mut typed_conversation, "hi").stream().collect().await;
    let agents = boxed_agents();
    let mut conversation = Conversation::new();
    let boxed: Vec<StreamEvent> =
        agents["weather"].turn(&mut conversation, "hi").stream().collect().await;
    assert_eq!(boxed, typed);
    assert_eq!(conversation.log(), typed_conversation.log());
    let text: String = boxed
        .iter()
        .filter_map(|event| match event {
            StreamEvent::Text(text) => Some(text.as_str()),
            StreamEvent::Withdrawn { .. } => Some("|"),
            _ => None,
        })
        .collect();
    assert_eq!(text, "ok|Sunny in Oslo.");
    assert!(
        boxed.iter().any(
            |event| matches!(event, StreamEvent::ToolCall(call) if call.name == "get_weather")
        )
    );
    match boxed.last() {
        Some(StreamEvent::Finished(Ok(message))) => {
            assert_eq!(message.joined_text(), "Sunny in Oslo.")
        }
        other => panic!("the stream must end with the outcome, not {other:?}"),
    }
}
