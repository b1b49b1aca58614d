//! Ollama's `/api/chat` on the wire: a loopback server answers as Ollama's API reference says it
//! does, a whole JSON answer or newline-delimited JSON, and the requests the adapter sends are
//! checked.

mod support;

use agentix::{
    AssistantMessage, Error, Model,
    model::{ModelRequest, Usage},
};
use serde_json::json;
use support::{
    Reply, Server, assert_errors, assert_malformed, both_sunny, cut_stream_turn, ollama_json,
    ollama_lines, parallel_calls_turn, provider_error, streamed_calls, tool_turn, turn_error,
    two_calls,
};

const MODEL: &str = "ollama:llama3.2";

fn weather_call(city: &str) -> agentix::ToolCall {
    // Ollama's calls carry no id: the one a call gets is made up.
    agentix::ToolCall::new("unused", "get_weather", json!({ "city": city }))
}

#[tokio::test]
async fn a_turn_with_a_tool_call_over_json() {
    let call = AssistantMessage::default().with_tool_call(weather_call("Oslo"));
    let received = tool_turn(
        MODEL,
        vec![
            Reply::json(ollama_json(&call, 40, 12)),
            Reply::json(ollama_json(&AssistantMessage::text("It is sunny in Oslo."), 60, 8)),
        ],
    )
    .await;
    assert_eq!(received[0].path, "/api/chat");
    let first = received[0].json();
    assert_eq!(first["model"], "llama3.2");
    assert_eq!(first["stream"], false);
    assert_eq!(
        first["messages"][0],
        json!({ "role": "system", "content": "You report the weather." })
    );
    assert_eq!(first["messages"][1], json!({ "role": "user", "content": "Weather in Oslo?" }));
    assert_eq!(first["tools"][0]["function"]["name"], "get_weather");
    assert_eq!(first["tools"][0]["function"]["parameters"]["properties"]["city"]["type"], "string");

    let second = received[1].json();
    let assistant = &second["messages"][2];
    assert_eq!(assistant["role"], "assistant");
    assert_eq!(assistant["tool_calls"][0]["function"]["name"], "get_weather");
    assert_eq!(
        assistant["tool_calls"][0]["function"]["arguments"],
        json!({ "city": "Oslo" }),
        "arguments as an object"
    );
    assert_eq!(second["messages"][3]["role"], "tool");
    assert_eq!(second["messages"][3]["content"], "sunny in Oslo");
}

#[tokio::test]
async fn usage_and_the_requests_parameters() {
    let server =
        Server::start(vec![Reply::json(ollama_json(&AssistantMessage::text("hi"), 26, 10))]).await;
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
    assert_eq!(response.usage, Usage { input_tokens: 26, output_tokens: 10, ..Usage::default() });
    let sent = server.received()[0].json();
    assert_eq!(sent["options"]["temperature"], 0.25);
    assert_eq!(sent["options"]["num_predict"], 64);
}

#[tokio::test]
async fn a_streamed_turn_over_newline_delimited_json_with_parallel_calls() {
    // Ollama gives its calls no ids: the placeholders are not sent.
    let replies = vec![
        Reply::ndjson(ollama_lines(&two_calls(["unused", "unused"]), 40, 12)),
        Reply::ndjson(ollama_lines(&both_sunny(), 60, 8)),
    ];
    let (events, server) = parallel_calls_turn(MODEL, replies).await;
    let ids: Vec<&str> = streamed_calls(&events).iter().map(|call| call.id.as_str()).collect();
    assert_ne!(ids[0], ids[1], "each call gets an id of its own");
    assert_eq!(server.received()[0].json()["stream"], true);
}

#[tokio::test]
async fn an_empty_answer_is_the_turns_typed_error() {
    for streamed in [false, true] {
        let empty = AssistantMessage::default();
        let reply = if streamed {
            Reply::ndjson(ollama_lines(&empty, 5, 0))
        } else {
            Reply::json(ollama_json(&empty, 5, 0))
        };
        assert_eq!(
            turn_error(MODEL, reply, streamed).await,
            Error::EmptyAnswer,
            "streamed: {streamed}"
        );
    }
}

fn ollama_error(status: u16, message: &str) -> Reply {
    Reply::raw(status, "application/json", json!({ "error": message }).to_string())
}

#[tokio::test]
async fn errors_are_typed_with_the_provider_and_the_status() {
    let error = |status: u16, message: &str| provider_error("ollama", status, message);
    let missing = "model \"llama9\" not found, try pulling it first";
    let broken = "llama runner process has terminated: exit status 2";
    assert_errors(
        MODEL,
        vec![
            (ollama_error(404, missing), error(404, missing)),
            (ollama_error(500, broken), error(500, broken)),
            // An Ollama behind an authenticating proxy.
            (ollama_error(401, "unauthorized"), error(401, "unauthorized")),
        ],
    )
    .await;
    assert_malformed(MODEL, "ollama", "{\"model\": \"llama3.2\", \"message\": {").await;
}

#[tokio::test]
async fn a_stream_cut_midway_withdraws_the_text_it_showed_and_keeps_the_log_valid() {
    let mut lines =
        ollama_lines(&AssistantMessage::text("This answer never gets to its end."), 5, 9);
    lines.truncate(3);
    cut_stream_turn(MODEL, Reply::ndjson(lines)).await;
}
