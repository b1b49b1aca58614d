//! Anthropic messages on the wire: a loopback server answers as Anthropic's API reference says it
//! does, JSON and server-sent events, and the requests the adapter sends are checked.

mod support;

use std::time::Duration;

use agentix::{
    Agent, AssistantMessage, Conversation, Error, Model, StreamEvent, ToolCall,
    model::{ModelRequest, Usage},
};
use futures::StreamExt;
use serde_json::{Value, json};
use support::{
    KEY, Reply, Server, anthropic_json, anthropic_sse, assert_errors, assert_malformed, both_sunny,
    cut_stream_turn, error_of, model, parallel_calls_turn, provider_error, rate_limited, refused,
    streamed_calls, turn_error, two_calls,
};
use tests::Weather;
use wiremock::matchers::{body_partial_json, header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const MODEL: &str = "anthropic:claude-sonnet-4-5";

/// What Anthropic reports of a call that read 1 800 tokens from the cache and wrote 200 to it.
fn usage() -> Value {
    json!({ "input_tokens": 40, "cache_creation_input_tokens": 200, "cache_read_input_tokens": 1800, "output_tokens": 12 })
}

fn weather_call(id: &str, city: &str) -> ToolCall {
    ToolCall::new(id, "get_weather", json!({ "city": city }))
}

#[tokio::test]
async fn a_turn_with_a_tool_call_over_json() {
    let server = MockServer::start().await;
    let call =
        AssistantMessage::text("Let me look.").with_tool_call(weather_call("toolu_1", "Oslo"));
    let answer = AssistantMessage::text("It is sunny in Oslo.");
    // The second request carries the tool's result: it gets the answer, the first the call.
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .and(body_partial_json(json!({ "messages": [{}, {}, { "role": "user", "content": [{ "type": "tool_result" }] }] })))
        .respond_with(ResponseTemplate::new(200).set_body_json(anthropic_json(&answer, usage())))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .and(header("x-api-key", KEY))
        .and(header("anthropic-version", "2023-06-01"))
        .respond_with(ResponseTemplate::new(200).set_body_json(anthropic_json(&call, usage())))
        .mount(&server)
        .await;

    let agent = Agent::builder(model(MODEL, &format!("{}/v1/", server.uri())))
        .system("You report the weather.")
        .tool(Weather::default())
        .build();
    let mut conversation = Conversation::new();
    let reply = agent.run(&mut conversation, "Weather in Oslo?").await.unwrap();
    assert_eq!(reply.joined_text(), "It is sunny in Oslo.");
    conversation.validate().unwrap();

    let requests = server.received_requests().await.unwrap();
    assert_eq!(requests.len(), 2);
    let first: Value = requests[0].body_json().unwrap();
    assert_eq!(first["model"], "claude-sonnet-4-5");
    assert!(first["max_tokens"].as_u64().unwrap() > 0, "Anthropic requires max_tokens");
    // The system prompt is a cache breakpoint, a block of its own.
    assert_eq!(
        first["system"],
        json!([{ "type": "text", "text": "You report the weather.", "cache_control": { "type": "ephemeral" } }])
    );
    // The request's end is a breakpoint too: the turn's next step repeats it.
    assert_eq!(
        first["messages"],
        json!([{ "role": "user", "content": [
            { "type": "text", "text": "Weather in Oslo?", "cache_control": { "type": "ephemeral" } },
        ]}])
    );
    assert_eq!(first["tools"][0]["name"], "get_weather");
    assert_eq!(first["tools"][0]["input_schema"]["properties"]["city"]["type"], "string");

    let second: Value = requests[1].body_json().unwrap();
    assert_eq!(
        second["messages"][1],
        json!({ "role": "assistant", "content": [
            { "type": "text", "text": "Let me look." },
            { "type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": { "city": "Oslo" } },
        ]})
    );
    assert_eq!(
        second["messages"][2],
        json!({ "role": "user", "content": [{
            "type": "tool_result", "content": "sunny in Oslo", "tool_use_id": "toolu_1",
            "cache_control": { "type": "ephemeral" },
        }]})
    );
}

#[tokio::test]
async fn usage_counts_the_tokens_read_from_and_written_to_the_cache() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(anthropic_json(&AssistantMessage::text("hi"), usage())),
        )
        .mount(&server)
        .await;
    let model = model(MODEL, &format!("{}/v1/", server.uri()));
    let request = ModelRequest {
        messages: vec![agentix::Message::user("hello")],
        params: agentix::model::ModelParams {
            temperature: Some(0.5),
            max_tokens: Some(300),
            thinking_budget: None,
            ..Default::default()
        },
        ..ModelRequest::default()
    };
    let response = model.complete(&request).await.unwrap();
    // Anthropic's input_tokens leaves the cached ones out; agentix's counts every token read.
    assert_eq!(
        response.usage,
        Usage {
            input_tokens: 2040,
            output_tokens: 12,
            cache_read_tokens: 1800,
            cache_write_tokens: 200
        }
    );
    let sent: Value = server.received_requests().await.unwrap()[0].body_json().unwrap();
    assert_eq!(sent["temperature"], 0.5);
    assert_eq!(sent["max_tokens"], 300);
}

#[tokio::test]
async fn a_streamed_turn_with_parallel_calls_whose_inputs_arrive_in_fragments() {
    let replies = vec![
        Reply::sse(anthropic_sse(&two_calls(["toolu_1", "toolu_2"]), usage())),
        Reply::sse(anthropic_sse(&both_sunny(), usage())),
    ];
    let (events, server) = parallel_calls_turn(MODEL, replies).await;
    let ids: Vec<&str> = streamed_calls(&events).iter().map(|call| call.id.as_str()).collect();
    assert_eq!(ids, ["toolu_1", "toolu_2"], "the provider's ids");
    let requests = server.received();
    assert_eq!(requests[0].path, "/v1/messages");
    assert_eq!(requests[0].json()["stream"], true);
    assert_eq!(requests[0].headers["x-api-key"], KEY);
    // Both results go back, in the order of the calls.
    let results = &requests[1].json()["messages"];
    let ids: Vec<&str> = results
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|message| message["content"].as_array().unwrap())
        .filter(|block| block["type"] == "tool_result")
        .map(|block| block["tool_use_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["toolu_1", "toolu_2"]);
}

/// An `after_model` hook that keeps the usage the turn reports: the last call's and the turn's.
#[derive(Default)]
struct RecordUsage {
    seen: std::sync::Arc<std::sync::Mutex<Vec<Seen>>>,
}

/// The usage an `after_model` hook read: the last call's, and the turn's so far.
type Seen = (Option<Usage>, Usage);

#[agentix::hook]
impl agentix::Hook for RecordUsage {
    async fn after_model(
        &self,
        _message: &mut AssistantMessage,
        turn: &mut agentix::Turn,
    ) -> agentix::Verdict<agentix::event::AfterModel> {
        self.seen.lock().unwrap().push((turn.last_usage(), turn.usage()));
        agentix::Verdict::Continue
    }
}

#[tokio::test]
async fn a_streamed_answers_usage_reaches_an_after_model_hook() {
    let server = Server::start(vec![Reply::sse(anthropic_sse(
        &AssistantMessage::text("Hello there."),
        usage(),
    ))])
    .await;
    let record = RecordUsage::default();
    let seen = std::sync::Arc::clone(&record.seen);
    let agent = Agent::builder(model(MODEL, &server.base)).hook(record).build();
    let mut conversation = Conversation::new();
    let events: Vec<StreamEvent> = agent.turn(&mut conversation, "hi").stream().collect().await;
    assert!(matches!(events.last(), Some(StreamEvent::Finished(Ok(_)))), "{events:?}");
    let expected = Usage {
        input_tokens: 2040,
        output_tokens: 12,
        cache_read_tokens: 1800,
        cache_write_tokens: 200,
    };
    assert_eq!(*seen.lock().unwrap(), [(Some(expected), expected)]);
}

#[tokio::test]
async fn an_empty_answer_is_empty_and_a_refusal_says_why() {
    for streamed in [false, true] {
        let end = |stop: &str| {
            let mut message = AssistantMessage::default();
            if stop == "refusal" {
                message = AssistantMessage::text("I was about to");
            }
            let usage = json!({ "input_tokens": 5, "output_tokens": 0 });
            let reply = if streamed {
                let events = anthropic_sse(&message, usage);
                Reply::sse(
                    events.into_iter().map(|event| event.replace("end_turn", stop)).collect(),
                )
            } else {
                let mut body = anthropic_json(&message, usage);
                body["stop_reason"] = json!(stop);
                Reply::json(body)
            };
            turn_error(MODEL, reply, streamed)
        };
        assert_eq!(end("end_turn").await, Error::EmptyAnswer, "streamed: {streamed}");
        assert_eq!(end("refusal").await, refused("anthropic", "refusal"), "streamed: {streamed}");
    }
}

fn anthropic_error(status: u16, kind: &str, message: &str) -> Reply {
    let body = json!({ "type": "error", "error": { "type": kind, "message": message } });
    Reply::raw(status, "application/json", body.to_string())
}

#[tokio::test]
async fn provider_errors_are_typed_with_the_provider_the_status_and_when_to_retry() {
    let error = |status: u16, message: &str| provider_error("anthropic", status, message);
    let limit = "Number of request tokens has exceeded your rate limit.";
    let mut limited = anthropic_error(429, "rate_limit_error", limit);
    limited.headers.push(("retry-after", "30".into()));
    assert_errors(
        MODEL,
        vec![
            (
                anthropic_error(401, "authentication_error", "invalid x-api-key"),
                error(401, "invalid x-api-key"),
            ),
            (
                anthropic_error(404, "not_found_error", "model: claude-9"),
                error(404, "model: claude-9"),
            ),
            (limited, rate_limited("anthropic", limit, Duration::from_secs(30))),
            (anthropic_error(529, "overloaded_error", "Overloaded"), error(529, "Overloaded")),
            (
                anthropic_error(500, "api_error", "Internal server error"),
                error(500, "Internal server error"),
            ),
        ],
    )
    .await;
    assert_malformed(MODEL, "anthropic", "{\"id\": \"msg_1\", \"content\": [").await;
}

#[tokio::test]
async fn an_error_event_in_the_stream_ends_the_turn_with_the_providers_message() {
    let mut events = anthropic_sse(&AssistantMessage::text("Half an answer"), usage());
    events.truncate(3);
    events.push(
        "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"
            .into(),
    );
    let error = error_of(MODEL, Reply::sse(events), true).await;
    // What the error says stands for Anthropic's 529.
    assert_eq!(error, provider_error("anthropic", 529, "Overloaded"));
}

#[tokio::test]
async fn a_stream_cut_midway_withdraws_the_text_it_showed_and_keeps_the_log_valid() {
    let mut events =
        anthropic_sse(&AssistantMessage::text("This answer never gets to its end."), usage());
    events.truncate(5);
    cut_stream_turn(MODEL, Reply::sse(events)).await;
}

#[tokio::test]
async fn a_system_message_a_hook_adds_reaches_anthropics_system_blocks() {
    let server = Server::start(vec![Reply::json(anthropic_json(
        &AssistantMessage::text("ok"),
        json!({ "input_tokens": 1, "output_tokens": 1 }),
    ))])
    .await;
    let request = ModelRequest {
        system: Some("You are terse.".into()),
        messages: vec![
            agentix::Message {
                role: agentix::message::Role::System,
                content: vec!["Answer in French.".into()],
            },
            agentix::Message::user("hi"),
        ],
        ..ModelRequest::default()
    };
    server.model(MODEL).complete(&request).await.unwrap();
    let system = server.received()[0].json()["system"].clone();
    let texts: Vec<&str> =
        system.as_array().unwrap().iter().map(|block| block["text"].as_str().unwrap()).collect();
    assert_eq!(texts, ["You are terse.", "Answer in French."], "{system}");
}
