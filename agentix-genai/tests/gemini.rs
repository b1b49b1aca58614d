//! Gemini `generateContent` on the wire: a loopback server answers as Google's API reference says
//! it does, JSON and server-sent events (`streamGenerateContent?alt=sse`), and the requests the
//! adapter sends are checked.

mod support;

use std::time::Duration;

use agentix::{
    AssistantMessage, Error, Model,
    model::{ModelRequest, Usage},
};
use serde_json::{Value, json};
use support::{
    KEY, Reply, Server, assert_errors, assert_malformed, both_sunny, cut_stream_turn, gemini_json,
    gemini_sse, parallel_calls_turn, provider_error, rate_limited, refused, streamed_calls,
    tool_turn, turn_error, two_calls,
};

const MODEL: &str = "gemini:gemini-2.5-flash";

fn usage() -> Value {
    json!({ "promptTokenCount": 120, "candidatesTokenCount": 8, "totalTokenCount": 128, "cachedContentTokenCount": 96 })
}

fn weather_call(city: &str) -> agentix::ToolCall {
    // Gemini sends no id: the one the call gets is made up, so the tests build the message
    // with a placeholder and compare names and arguments.
    agentix::ToolCall::new("unused", "get_weather", json!({ "city": city }))
}

#[tokio::test]
async fn a_turn_with_a_tool_call_over_json() {
    let call = AssistantMessage::default().with_tool_call(weather_call("Oslo"));
    let received = tool_turn(
        MODEL,
        vec![
            Reply::json(gemini_json(&call, usage())),
            Reply::json(gemini_json(&AssistantMessage::text("It is sunny in Oslo."), usage())),
        ],
    )
    .await;
    assert_eq!(received[0].path, "/v1/models/gemini-2.5-flash:generateContent");
    assert_eq!(received[0].headers["x-goog-api-key"], KEY);
    let first = received[0].json();
    assert_eq!(
        first["systemInstruction"],
        json!({ "parts": [{ "text": "You report the weather." }] })
    );
    assert_eq!(
        first["contents"],
        json!([{ "role": "user", "parts": [{ "text": "Weather in Oslo?" }] }])
    );
    let declaration = &first["tools"][0]["functionDeclarations"][0];
    assert_eq!(declaration["name"], "get_weather");
    assert_eq!(declaration["parametersJsonSchema"]["properties"]["city"]["type"], "string");

    let second = received[1].json();
    let contents = second["contents"].as_array().unwrap();
    assert_eq!(contents[1]["role"], "model");
    assert_eq!(
        contents[1]["parts"][0]["functionCall"],
        json!({ "name": "get_weather", "args": { "city": "Oslo" } })
    );
    assert_eq!(contents[2]["role"], "user");
    let response = &contents[2]["parts"][0]["functionResponse"];
    assert_eq!(response["name"], "get_weather");
    assert_eq!(response["response"]["content"], "sunny in Oslo");
}

#[tokio::test]
async fn usage_with_cached_tokens_and_the_requests_parameters() {
    let server =
        Server::start(vec![Reply::json(gemini_json(&AssistantMessage::text("hi"), usage()))]).await;
    let request = ModelRequest {
        messages: vec![agentix::Message::user("hello")],
        params: agentix::model::ModelParams {
            temperature: Some(0.25),
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
    let sent = server.received()[0].json();
    assert_eq!(sent["generationConfig"]["temperature"], 0.25);
    assert_eq!(sent["generationConfig"]["maxOutputTokens"], 64);
    assert!(sent["generationConfig"].get("thinkingConfig").is_none(), "no budget, none sent");
}

#[tokio::test]
async fn a_thinking_budget_set_on_the_request_reaches_gemini() {
    let server =
        Server::start(vec![Reply::json(gemini_json(&AssistantMessage::text("hi"), usage()))]).await;
    let request = ModelRequest {
        messages: vec![agentix::Message::user("hello")],
        params: agentix::model::ModelParams { thinking_budget: Some(2048), ..Default::default() },
        ..ModelRequest::default()
    };
    server.model(MODEL).complete(&request).await.unwrap();
    let sent = server.received()[0].json();
    assert_eq!(sent["generationConfig"]["thinkingConfig"]["thinkingBudget"], 2048);
}

#[tokio::test]
async fn a_streamed_turn_with_parallel_calls() {
    // Gemini gives its calls no ids: the placeholders are not sent.
    let replies = vec![
        Reply::sse(gemini_sse(&two_calls(["unused", "unused"]), usage())),
        Reply::sse(gemini_sse(&both_sunny(), usage())),
    ];
    let (events, server) = parallel_calls_turn(MODEL, replies).await;
    let ids: Vec<&str> = streamed_calls(&events).iter().map(|call| call.id.as_str()).collect();
    assert_ne!(ids[0], ids[1], "each call gets an id of its own");
    let received = server.received();
    assert_eq!(received[0].path, "/v1/models/gemini-2.5-flash:streamGenerateContent?alt=sse");
    // Both answers go back in one user turn, in the order of the calls.
    let contents = received[1].json()["contents"].clone();
    let answers: Vec<&str> = contents[2]["parts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|part| part["functionResponse"]["response"]["content"].as_str().unwrap())
        .collect();
    assert_eq!(answers, ["sunny in Oslo", "sunny in Bergen"]);
}

#[tokio::test]
async fn an_empty_answer_is_empty_and_a_blocked_prompt_or_answer_says_why() {
    let blocked = json!({
        "promptFeedback": { "blockReason": "SAFETY" },
        "usageMetadata": { "promptTokenCount": 7, "totalTokenCount": 7 },
        "modelVersion": "gemini-2.5-flash",
    });
    let answer = |finish: &str| {
        json!({
            "candidates": [{ "content": { "parts": [], "role": "model" }, "finishReason": finish, "index": 0 }],
            "usageMetadata": { "promptTokenCount": 7, "totalTokenCount": 7 },
        })
    };
    assert_eq!(
        turn_error(MODEL, Reply::json(blocked), false).await,
        refused("gemini", "the prompt was blocked (SAFETY)")
    );
    assert_eq!(
        turn_error(MODEL, Reply::json(answer("SAFETY")), false).await,
        refused("gemini", "SAFETY")
    );
    assert_eq!(turn_error(MODEL, Reply::json(answer("STOP")), false).await, Error::EmptyAnswer);
    let mut stream = gemini_sse(&AssistantMessage::text("Here is how to"), usage());
    let last = stream.len() - 1;
    stream[last] = stream[last].replace("\"STOP\"", "\"SAFETY\"");
    assert_eq!(turn_error(MODEL, Reply::sse(stream), true).await, refused("gemini", "SAFETY"));
}

fn gemini_error(code: u16, status: &str, message: &str) -> Reply {
    let body = json!({ "error": { "code": code, "message": message, "status": status } });
    Reply::raw(code, "application/json", body.to_string())
}

#[tokio::test]
async fn provider_errors_are_typed_with_the_provider_the_status_and_when_to_retry() {
    let error = |status: u16, message: &str| provider_error("gemini", status, message);
    let unauthenticated = "Request had invalid authentication credentials.";
    let missing = "models/gemini-9 is not found for API version v1beta, or is not supported for generateContent.";
    let exhausted = "Resource has been exhausted (e.g. check quota).";
    let internal = "An internal error has occurred.";
    // Google says when to retry in the body.
    let limited = json!({ "error": {
        "code": 429, "message": exhausted, "status": "RESOURCE_EXHAUSTED",
        "details": [{ "@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "31s" }],
    }});
    assert_errors(
        MODEL,
        vec![
            (gemini_error(401, "UNAUTHENTICATED", unauthenticated), error(401, unauthenticated)),
            (gemini_error(404, "NOT_FOUND", missing), error(404, missing)),
            (
                Reply::raw(429, "application/json", limited.to_string()),
                rate_limited("gemini", exhausted, Duration::from_secs(31)),
            ),
            (gemini_error(500, "INTERNAL", internal), error(500, internal)),
        ],
    )
    .await;
    assert_malformed(MODEL, "gemini", "{\"candidates\": [{").await;
}

#[tokio::test]
async fn a_stream_cut_midway_withdraws_the_text_it_showed_and_keeps_the_log_valid() {
    let mut events =
        gemini_sse(&AssistantMessage::text("This answer never gets to its end."), usage());
    events.truncate(3);
    cut_stream_turn(MODEL, Reply::sse(events)).await;
}
