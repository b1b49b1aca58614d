//! OpenAI's responses API on the wire: a loopback server answers as OpenAI's API reference says
//! it does, JSON and typed server-sent events, and the requests the adapter sends are checked.

mod support;

use std::time::Duration;

use agentix::{
    AssistantMessage, Error, Model, ToolCall,
    model::{ModelRequest, Usage},
};
use serde_json::{Value, json};
use support::{
    KEY, Reply, Server, assert_errors, assert_malformed, both_sunny, cut_stream_turn, openai_error,
    parallel_calls_turn, provider_error, rate_limited, refused, responses_json, responses_sse,
    streamed_calls, tool_turn, turn_error, two_calls,
};

const MODEL: &str = "openai_resp:gpt-5-mini";

fn usage() -> Value {
    json!({
        "input_tokens": 120, "input_tokens_details": { "cached_tokens": 96 },
        "output_tokens": 8, "output_tokens_details": { "reasoning_tokens": 0 }, "total_tokens": 128,
    })
}

fn weather_call(id: &str, city: &str) -> ToolCall {
    ToolCall::new(id, "get_weather", json!({ "city": city }))
}

#[tokio::test]
async fn a_turn_with_a_tool_call_over_json() {
    let call = AssistantMessage::default().with_tool_call(weather_call("call_1", "Oslo"));
    let received = tool_turn(
        MODEL,
        vec![
            Reply::json(responses_json(&call, usage())),
            Reply::json(responses_json(&AssistantMessage::text("It is sunny in Oslo."), usage())),
        ],
    )
    .await;
    assert_eq!(received[0].path, "/v1/responses");
    assert_eq!(received[0].headers["authorization"], format!("Bearer {KEY}"));
    let first = received[0].json();
    assert_eq!(first["model"], "gpt-5-mini");
    assert_eq!(
        first["instructions"], "You report the weather.",
        "the system prompt is the instructions"
    );
    assert_eq!(first["input"], json!([{ "role": "user", "content": "Weather in Oslo?" }]));
    assert_eq!(first["store"], false, "each request carries the whole conversation");
    assert_eq!(first["tools"][0]["type"], "function");
    assert_eq!(first["tools"][0]["name"], "get_weather");
    assert_eq!(first["tools"][0]["strict"], true);

    let second = received[1].json();
    let input = second["input"].as_array().unwrap();
    let call =
        input.iter().find(|item| item["type"] == "function_call").expect("the call goes back");
    assert_eq!(call["call_id"], "call_1");
    assert_eq!(call["name"], "get_weather");
    let arguments: Value = serde_json::from_str(call["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(arguments, json!({ "city": "Oslo" }));
    let output =
        input.iter().find(|item| item["type"] == "function_call_output").expect("and its output");
    assert_eq!(output["call_id"], "call_1");
    assert_eq!(output["output"], "sunny in Oslo");
}

#[tokio::test]
async fn usage_with_cached_tokens() {
    let server =
        Server::start(vec![Reply::json(responses_json(&AssistantMessage::text("hi"), usage()))])
            .await;
    let request = ModelRequest {
        messages: vec![agentix::Message::user("hello")],
        params: agentix::model::ModelParams {
            temperature: None,
            max_tokens: Some(64),
            thinking_budget: None,
            ..Default::default()
        },
        ..ModelRequest::default()
    };
    let response = server.model(MODEL).complete(&request).await.unwrap();
    assert_eq!(response.message.joined_text(), "hi");
    assert_eq!(
        response.usage,
        Usage { input_tokens: 120, output_tokens: 8, cache_read_tokens: 96, cache_write_tokens: 0 }
    );
    assert_eq!(server.received()[0].json()["max_output_tokens"], 64);
}

#[tokio::test]
async fn a_streamed_turn_with_parallel_calls_split_across_events() {
    let replies = vec![
        Reply::sse(responses_sse(&two_calls(["call_1", "call_2"]), usage())),
        Reply::sse(responses_sse(&both_sunny(), usage())),
    ];
    let (events, server) = parallel_calls_turn(MODEL, replies).await;
    let ids: Vec<&str> = streamed_calls(&events).iter().map(|call| call.id.as_str()).collect();
    assert_eq!(ids, ["call_1", "call_2"], "the provider's ids");
    assert_eq!(server.received()[0].json()["stream"], true);
}

#[tokio::test]
async fn an_empty_answer_is_the_turns_typed_error() {
    for streamed in [false, true] {
        let empty = AssistantMessage::default();
        let reply = if streamed {
            Reply::sse(responses_sse(&empty, usage()))
        } else {
            Reply::json(responses_json(&empty, usage()))
        };
        assert_eq!(
            turn_error(MODEL, reply, streamed).await,
            Error::EmptyAnswer,
            "streamed: {streamed}"
        );
    }
}

#[tokio::test]
async fn a_refusal_says_why() {
    let mut body = responses_json(&AssistantMessage::text("unused"), usage());
    body["output"][0]["content"] =
        json!([{ "type": "refusal", "refusal": "I can't help with that." }]);
    assert_eq!(
        turn_error(MODEL, Reply::json(body), false).await,
        refused("openai_resp", "I can't help with that.")
    );
}

#[tokio::test]
async fn provider_errors_are_typed_with_the_provider_the_status_and_when_to_retry() {
    let error = |status: u16, message: &str| provider_error("openai_resp", status, message);
    let key = "Incorrect API key provided.";
    let missing = "The model `gpt-9` does not exist or you do not have access to it.";
    let broken = "The server had an error while processing your request.";
    let mut limited = openai_error(429, "Rate limit reached.", "requests");
    limited.headers.push(("retry-after", "2".into()));
    assert_errors(
        MODEL,
        vec![
            (openai_error(401, key, "invalid_request_error"), error(401, key)),
            (openai_error(404, missing, "invalid_request_error"), error(404, missing)),
            (limited, rate_limited("openai_resp", "Rate limit reached.", Duration::from_secs(2))),
            (openai_error(500, broken, "server_error"), error(500, broken)),
        ],
    )
    .await;
    assert_malformed(MODEL, "openai_resp", "{\"id\": \"resp_1\", \"output\": [").await;
}

#[tokio::test]
async fn a_stream_cut_midway_withdraws_the_text_it_showed_and_keeps_the_log_valid() {
    let mut events =
        responses_sse(&AssistantMessage::text("This answer never gets to its end."), usage());
    events.truncate(5);
    cut_stream_turn(MODEL, Reply::sse(events)).await;
}
