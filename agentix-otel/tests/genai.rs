//! A real provider's call, through agentix-genai to a loopback server speaking OpenAI's wire
//! format: one `chat` span, the loop's, with what only the provider knows recorded on it —
//! genai opens no span of its own.

mod support;

use agentix::{Agent, Conversation, StreamEvent};
use agentix_genai::GenaiModel;
use futures::StreamExt;
use serde_json::json;
use support::{collect, int, one, operations, text};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn completion() -> serde_json::Value {
    json!({
        "id": "chatcmpl-42",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": "gpt-4.1-mini-2025-04-14",
        "choices": [{
            "index": 0,
            "message": { "role": "assistant", "content": "Sunny." },
            "finish_reason": "stop",
        }],
        "usage": { "prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15,
                   "prompt_tokens_details": { "cached_tokens": 8 } },
    })
}

fn streamed() -> String {
    let chunk = |delta: serde_json::Value, finish: serde_json::Value| {
        let event = json!({
            "id": "chatcmpl-43", "object": "chat.completion.chunk", "created": 1_700_000_000,
            "model": "gpt-4.1-mini-2025-04-14",
            "choices": [{ "index": 0, "delta": delta, "finish_reason": finish }],
        });
        format!("data: {event}\n\n")
    };
    let usage = json!({
        "id": "chatcmpl-43", "object": "chat.completion.chunk", "created": 1_700_000_000,
        "model": "gpt-4.1-mini-2025-04-14", "choices": [],
        "usage": { "prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15 },
    });
    [
        chunk(json!({ "role": "assistant", "content": "" }), json!(null)),
        chunk(json!({ "content": "Sun" }), json!(null)),
        chunk(json!({ "content": "ny." }), json!(null)),
        chunk(json!({}), json!("stop")),
        format!("data: {usage}\n\n"),
        "data: [DONE]\n\n".to_owned(),
    ]
    .concat()
}

async fn openai() -> (MockServer, GenaiModel) {
    let server = MockServer::start().await;
    let model = GenaiModel::builder("openai:gpt-4.1-mini")
        .endpoint(format!("{}/v1/", server.uri()))
        .api_key("test-key")
        .build()
        .unwrap();
    (server, model)
}

#[tokio::test]
async fn a_providers_call_is_one_chat_span_with_what_the_provider_said() {
    let (server, model) = openai().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(completion()))
        .mount(&server)
        .await;
    let collected = collect();
    let agent = Agent::builder(model).build();
    agent.run(&mut Conversation::new(), "Weather?").await.unwrap();

    let spans = collected.spans();
    let names: Vec<&str> = spans.iter().map(|span| span.name.as_ref()).collect();
    assert_eq!(names, ["invoke_agent", "chat gpt-4.1-mini"], "one span per call, no second");
    let turn = one(&spans, "invoke_agent");
    assert_eq!(text(turn, "gen_ai.provider.name"), "openai");
    assert_eq!(text(turn, "gen_ai.request.model"), "gpt-4.1-mini");
    let chat = one(&spans, "chat gpt-4.1-mini");
    assert_eq!(text(chat, "gen_ai.provider.name"), "openai");
    // genai 0.7 reads no id from a chat completion (it does from OpenAI's Responses API).
    assert_eq!(support::attr(chat, "gen_ai.response.id"), None);
    assert_eq!(text(chat, "gen_ai.response.model"), "gpt-4.1-mini-2025-04-14");
    assert_eq!(text(chat, "gen_ai.response.finish_reasons"), r#"["stop"]"#);
    assert_eq!(text(chat, "server.address"), "127.0.0.1");
    assert_eq!(int(chat, "server.port"), i64::from(server.address().port()));
    assert_eq!(int(chat, "gen_ai.usage.input_tokens"), 12);
    assert_eq!(int(chat, "gen_ai.usage.output_tokens"), 3);
    assert_eq!(int(chat, "gen_ai.usage.cache_read.input_tokens"), 8);

    // The metrics carry what the span learned from the provider.
    let tokens = collected.histogram(agentix_otel::TOKEN_USAGE);
    assert_eq!(tokens.len(), 2, "input and output: {tokens:?}");
    for (attributes, count, _) in &tokens {
        assert_eq!(*count, 1);
        let port = server.address().port().to_string();
        for (key, value) in [
            ("gen_ai.provider.name", "openai"),
            ("gen_ai.request.model", "gpt-4.1-mini"),
            ("gen_ai.response.model", "gpt-4.1-mini-2025-04-14"),
            ("server.address", "127.0.0.1"),
            ("server.port", port.as_str()),
        ] {
            assert_eq!(support::point_attr(attributes, key).as_deref(), Some(value), "{key}");
        }
    }
}

#[tokio::test]
async fn a_streamed_providers_call_is_one_span_too() {
    let (server, model) = openai().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("content-type", "text/event-stream")
                .set_body_string(streamed()),
        )
        .mount(&server)
        .await;
    let collected = collect();
    let agent = Agent::builder(model).build();
    let events: Vec<StreamEvent> =
        agent.turn(&mut Conversation::new(), "Weather?").stream().collect().await;
    assert!(matches!(events.last(), Some(StreamEvent::Finished(Ok(_)))), "{events:?}");

    let spans = collected.spans();
    let chats = operations(&spans, "chat");
    assert_eq!(chats.len(), 1);
    let chat = chats[0];
    assert_eq!(text(chat, "gen_ai.provider.name"), "openai");
    assert_eq!(text(chat, "gen_ai.response.finish_reasons"), r#"["stop"]"#);
    assert_eq!(text(chat, "server.address"), "127.0.0.1");
    assert!(support::attr(chat, "gen_ai.response.time_to_first_chunk").is_some());
    assert_eq!(int(chat, "gen_ai.usage.output_tokens"), 3);
}
