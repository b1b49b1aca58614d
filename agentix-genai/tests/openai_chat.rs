//! OpenAI chat completions on the wire: a loopback server answers as OpenAI's API reference says
//! it does, JSON and server-sent events, and the requests the adapter sends are checked.

mod support;

use std::time::Duration;

use agentix::{
    Agent, AssistantMessage, Conversation, Error, Message, Model, StreamEvent, ToolCall,
    model::{ModelError, ModelRequest, Usage},
};
use futures::StreamExt;
use serde_json::{Value, json};
use support::{
    KEY, Reply, Server, assert_errors, both_sunny, cut_stream_turn, error_of, model, openai_error,
    openai_json, openai_sse, parallel_calls_turn, provider_error, rate_limited, refused,
    streamed_calls, turn_error, two_calls,
};

const MODEL: &str = "openai:gpt-4.1-mini";
use tests::Weather;
use wiremock::matchers::{body_partial_json, header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn usage() -> Value {
    json!({ "prompt_tokens": 120, "completion_tokens": 8, "total_tokens": 128, "prompt_tokens_details": { "cached_tokens": 96 } })
}

fn weather_call(id: &str, city: &str) -> ToolCall {
    ToolCall::new(id, "get_weather", json!({ "city": city }))
}

#[tokio::test]
async fn a_turn_with_a_tool_call_over_json() {
    let server = MockServer::start().await;
    let call = AssistantMessage::default().with_tool_call(weather_call("call_1", "Oslo"));
    let answer = AssistantMessage::text("It is sunny in Oslo.");
    // The second request carries the tool's result: it gets the answer, the first the call.
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .and(header("authorization", format!("Bearer {KEY}").as_str()))
        .and(body_partial_json(
            json!({ "messages": [{}, {}, {}, { "role": "tool", "tool_call_id": "call_1" }] }),
        ))
        .respond_with(ResponseTemplate::new(200).set_body_json(openai_json(&answer, usage())))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(openai_json(&call, usage())))
        .mount(&server)
        .await;

    let model = model("openai:gpt-4.1-mini", &format!("{}/v1/", server.uri()));
    let agent =
        Agent::builder(model).system("You report the weather.").tool(Weather::default()).build();
    let mut conversation = Conversation::new();
    let reply = agent.run(&mut conversation, "Weather in Oslo?").await.unwrap();
    assert_eq!(reply.joined_text(), "It is sunny in Oslo.");
    conversation.validate().unwrap();

    let requests = server.received_requests().await.unwrap();
    assert_eq!(requests.len(), 2);
    let first: Value = requests[0].body_json().unwrap();
    assert_eq!(first["model"], "gpt-4.1-mini");
    assert_eq!(
        first["messages"][0],
        json!({ "role": "system", "content": "You report the weather." })
    );
    assert_eq!(first["messages"][1], json!({ "role": "user", "content": "Weather in Oslo?" }));
    assert_eq!(first["tools"][0]["function"]["name"], "get_weather");
    let second: Value = requests[1].body_json().unwrap();
    let assistant = &second["messages"][2];
    assert_eq!(assistant["role"], "assistant");
    assert_eq!(assistant["tool_calls"][0]["id"], "call_1");
    assert_eq!(assistant["tool_calls"][0]["function"]["name"], "get_weather");
    let arguments: Value =
        serde_json::from_str(assistant["tool_calls"][0]["function"]["arguments"].as_str().unwrap())
            .unwrap();
    assert_eq!(arguments, json!({ "city": "Oslo" }), "arguments go back as a JSON string");
    assert_eq!(
        second["messages"][3],
        json!({ "role": "tool", "tool_call_id": "call_1", "content": "sunny in Oslo" })
    );
}

#[tokio::test]
async fn usage_with_cached_tokens_and_the_requests_model_and_parameters() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(openai_json(&AssistantMessage::text("hi"), usage())),
        )
        .mount(&server)
        .await;
    let model = model("openai:gpt-4.1-mini", &format!("{}/v1/", server.uri()));
    let request = ModelRequest {
        messages: vec![Message::user("hello")],
        model: Some("openai:gpt-4.1".into()),
        params: agentix::model::ModelParams {
            temperature: Some(0.25),
            max_tokens: Some(64),
            thinking_budget: None,
            ..Default::default()
        },
        ..ModelRequest::default()
    };
    let response = model.complete(&request).await.unwrap();
    assert_eq!(response.message.joined_text(), "hi");
    assert_eq!(
        response.usage,
        Usage { input_tokens: 120, output_tokens: 8, cache_read_tokens: 96, cache_write_tokens: 0 }
    );
    let sent: Value = server.received_requests().await.unwrap()[0].body_json().unwrap();
    assert_eq!(sent["model"], "gpt-4.1", "the request's own model");
    assert_eq!(sent["temperature"], 0.25);
    assert_eq!(sent["max_tokens"], 64);
}

#[tokio::test]
async fn a_streamed_turn_with_parallel_calls_split_across_events() {
    let replies = vec![
        Reply::sse(openai_sse(&two_calls(["call_1", "call_2"]), usage())),
        Reply::sse(openai_sse(&both_sunny(), usage())),
    ];
    let (events, server) = parallel_calls_turn(MODEL, replies).await;
    let ids: Vec<&str> = streamed_calls(&events).iter().map(|call| call.id.as_str()).collect();
    assert_eq!(ids, ["call_1", "call_2"], "the provider's ids");
    assert_eq!(server.received()[0].json()["stream"], true);
}

fn openai_answer(message: Value, finish: &str) -> Reply {
    Reply::json(json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-4.1-mini",
        "choices": [{ "index": 0, "message": message, "finish_reason": finish }],
        "usage": { "prompt_tokens": 5, "completion_tokens": 0, "total_tokens": 5 },
    }))
}

#[tokio::test]
async fn an_empty_answer_is_empty_and_a_refusal_says_why() {
    let refusal =
        json!({ "role": "assistant", "content": null, "refusal": "I can't help with that." });
    assert_eq!(
        turn_error(MODEL, openai_answer(refusal, "stop"), false).await,
        refused("openai", "I can't help with that.")
    );
    let filtered = json!({ "role": "assistant", "content": null });
    assert_eq!(
        turn_error(MODEL, openai_answer(filtered, "content_filter"), false).await,
        refused("openai", "content_filter")
    );
    let empty = json!({ "role": "assistant", "content": "" });
    assert_eq!(turn_error(MODEL, openai_answer(empty, "stop"), false).await, Error::EmptyAnswer);
    let mut filtered = openai_sse(&AssistantMessage::text("Here is how to"), usage());
    let at = filtered.len() - 3;
    filtered[at] = filtered[at].replace("\"stop\"", "\"content_filter\"");
    assert_eq!(
        turn_error(MODEL, Reply::sse(filtered), true).await,
        refused("openai", "content_filter")
    );
}

#[tokio::test]
async fn provider_errors_are_typed_with_the_provider_the_status_and_when_to_retry() {
    let error = |status: u16, message: &str| provider_error("openai", status, message);
    let limited = |header: &'static str, value: &str| {
        let mut reply = openai_error(429, "Rate limit reached.", "requests");
        reply.headers.push((header, value.into()));
        reply
    };
    let waited = |wait: Duration| rate_limited("openai", "Rate limit reached.", wait);
    let key = "Incorrect API key provided.";
    let missing = "The model `gpt-9` does not exist.";
    let broken = "The server had an error.";
    assert_errors(
        MODEL,
        vec![
            (openai_error(401, key, "invalid_request_error"), error(401, key)),
            (openai_error(404, missing, "invalid_request_error"), error(404, missing)),
            (limited("retry-after-ms", "1500"), waited(Duration::from_millis(1500))),
            (limited("retry-after", "7"), waited(Duration::from_secs(7))),
            (openai_error(500, broken, "server_error"), error(500, broken)),
        ],
    )
    .await;
    assert_eq!(
        waited(Duration::from_secs(7)).to_string(),
        "openai answered 429: Rate limit reached. (retry after 7s)"
    );
    let malformed = error_of(
        MODEL,
        Reply::raw(200, "application/json", "{\"id\": \"chatcmpl-1\", \"choices\": [".into()),
        false,
    )
    .await;
    assert!(
        matches!(&malformed, ModelError::InvalidResponse { provider, message } if provider == "openai" && message.contains("EOF")),
        "{malformed:?}"
    );
}

#[tokio::test]
async fn a_stream_cut_midway_withdraws_the_text_it_showed_and_keeps_the_log_valid() {
    let mut events =
        openai_sse(&AssistantMessage::text("This answer never gets to its end."), usage());
    events.truncate(4);
    cut_stream_turn(MODEL, Reply::sse(events)).await;
}

#[tokio::test]
async fn groq_deepseek_and_xai_speak_the_same_format() {
    for spec in ["groq:llama-3.3-70b-versatile", "deepseek:deepseek-chat", "xai:grok-3"] {
        let call = AssistantMessage::default().with_tool_call(weather_call("call_1", "Oslo"));
        let answer = AssistantMessage::text("Sunny in Oslo.");
        let server = Server::start(vec![
            Reply::json(openai_json(&call, usage())),
            Reply::json(openai_json(&answer, usage())),
            Reply::sse(openai_sse(&call, usage())),
            Reply::sse(openai_sse(&answer, usage())),
        ])
        .await;
        let agent = Agent::builder(server.model(spec)).tool(Weather::default()).build();
        let mut conversation = Conversation::new();
        let reply = agent.run(&mut conversation, "Weather in Oslo?").await.unwrap();
        assert_eq!(reply.joined_text(), "Sunny in Oslo.", "{spec}");
        let events: Vec<StreamEvent> =
            agent.turn(&mut conversation, "And now?").stream().collect().await;
        assert!(
            matches!(events.last(), Some(StreamEvent::Finished(Ok(answer))) if answer.joined_text() == "Sunny in Oslo."),
            "{spec}: {:?}",
            events.last()
        );
        conversation.validate().unwrap();
        let received = server.received();
        assert_eq!(received.len(), 4, "{spec}");
        let name = spec.split_once(':').unwrap().1;
        for request in &received {
            assert_eq!(request.path, "/v1/chat/completions", "{spec}");
            assert_eq!(request.json()["model"], name, "{spec}");
            assert_eq!(request.headers["authorization"], format!("Bearer {KEY}"), "{spec}");
        }
        assert_eq!(
            received[1].json()["messages"][1]["tool_calls"][0]["id"],
            "call_1",
            "{spec}: the call goes back"
        );
    }
}
