//! Loopback servers that speak the providers' wire formats, for the adapter's tests: wiremock
//! mocks for answers whose requests are checked, and a small axum server for streams that must
//! arrive over time or break off, and for a provider that answers from a script.

#![allow(dead_code)] // each test file uses its own part of this.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentix::{Agent, AssistantMessage, Conversation, Error, Part, StreamEvent, model::ModelError};
use agentix_genai::GenaiModel;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde_json::{Value, json};

/// The key the tests' models send.
pub const KEY: &str = "test-key";

/// A model of `spec` whose requests go to `base` with the test key.
pub fn model(spec: &str, base: &str) -> GenaiModel {
    GenaiModel::builder(spec).endpoint(base).api_key(KEY).build().expect("a known provider")
}

/// One reply of the stub: a status, headers, and a body sent in pieces, `pause` apart; `cut`
/// drops the connection after the pieces instead of ending the body.
#[derive(Clone, Debug)]
pub struct Reply {
    pub status: u16,
    pub content_type: &'static str,
    pub headers: Vec<(&'static str, String)>,
    pub pieces: Vec<String>,
    pub pause: Duration,
    pub cut: bool,
}

impl Reply {
    pub fn json(body: Value) -> Self {
        Reply::raw(200, "application/json", body.to_string())
    }

    pub fn raw(status: u16, content_type: &'static str, body: String) -> Self {
        Reply {
            status,
            content_type,
            headers: Vec::new(),
            pieces: vec![body],
            pause: Duration::ZERO,
            cut: false,
        }
    }

    /// Server-sent events, one piece per event.
    pub fn sse(events: Vec<String>) -> Self {
        Reply {
            status: 200,
            content_type: "text/event-stream",
            headers: Vec::new(),
            pieces: events,
            pause: Duration::from_millis(2),
            cut: false,
        }
    }

    /// Newline-delimited JSON (Ollama's stream), one piece per line.
    pub fn ndjson(lines: Vec<Value>) -> Self {
        Reply {
            status: 200,
            content_type: "application/x-ndjson",
            headers: Vec::new(),
            pieces: lines.iter().map(|line| format!("{line}\n")).collect(),
            pause: Duration::from_millis(2),
            cut: false,
        }
    }

    pub fn cut(mut self) -> Self {
        self.cut = true;
        self
    }
}

/// What the stub received: the path and the body.
#[derive(Clone, Debug)]
pub struct Received {
    pub path: String,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Received {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("a JSON request")
    }
}

/// Answers a request from a script.
type Script = Box<dyn FnMut(&Value) -> Reply + Send>;

#[derive(Default)]
struct Stub {
    replies: Mutex<VecDeque<Reply>>,
    /// Answers the requests that come after the replies ran out.
    script: Mutex<Option<Script>>,
    received: Mutex<Vec<Received>>,
}

/// A stub server on 127.0.0.1: its base URL (`http://127.0.0.1:PORT/v1/`) and what it received.
pub struct Server {
    pub base: String,
    /// The server's root (`http://127.0.0.1:PORT/`), where Ollama's API lives.
    pub root: String,
    stub: Arc<Stub>,
}

impl Server {
    /// A server that answers with `replies`, in order.
    pub async fn start(replies: Vec<Reply>) -> Self {
        let stub = Arc::new(Stub { replies: Mutex::new(replies.into()), ..Stub::default() });
        Self::serve(stub).await
    }

    /// A server that answers each request with `answer(request)`.
    pub async fn scripted(answer: impl FnMut(&Value) -> Reply + Send + 'static) -> Self {
        let stub = Arc::new(Stub::default());
        *stub.script.lock().unwrap() = Some(Box::new(answer));
        Self::serve(stub).await
    }

    async fn serve(stub: Arc<Stub>) -> Self {
        let app = axum::Router::new().fallback(answer).with_state(Arc::clone(&stub));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Server { base: format!("http://{addr}/v1/"), root: format!("http://{addr}/"), stub }
    }

    /// The model `spec` served by this server, at the base its provider's API lives under.
    pub fn model(&self, spec: &str) -> GenaiModel {
        let base = if spec.starts_with("ollama:") { &self.root } else { &self.base };
        model(spec, base)
    }

    pub fn received(&self) -> Vec<Received> {
        self.stub.received.lock().unwrap().clone()
    }
}

async fn answer(State(stub): State<Arc<Stub>>, request: axum::extract::Request) -> Response {
    let path = request.uri().to_string();
    let headers = request.headers().clone();
    let body = axum::body::to_bytes(request.into_body(), usize::MAX).await.unwrap();
    let json: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    stub.received.lock().unwrap().push(Received { path, headers, body });
    let reply = match stub.replies.lock().unwrap().pop_front() {
        Some(reply) => reply,
        None => match stub.script.lock().unwrap().as_mut() {
            Some(script) => script(&json),
            None => Reply::raw(
                500,
                "application/json",
                r#"{"error":{"message":"the stub has no reply left"}}"#.into(),
            ),
        },
    };
    let (pieces, pause, cut) = (reply.pieces, reply.pause, reply.cut);
    let body = async_stream::stream! {
        for piece in pieces {
            tokio::time::sleep(pause).await;
            yield Ok::<_, std::io::Error>(piece);
        }
        if cut {
            yield Err(std::io::Error::new(std::io::ErrorKind::ConnectionReset, "cut"));
        }
    };
    let mut response = Response::builder()
        .status(StatusCode::from_u16(reply.status).unwrap())
        .header("content-type", reply.content_type);
    for (name, value) in reply.headers {
        response = response.header(name, value);
    }
    response.body(Body::from_stream(body)).unwrap()
}

/// The error `reply` makes of a whole turn of `spec`, streamed or not; the log stays valid and
/// holds no answer.
pub async fn turn_error(spec: &str, reply: Reply, streamed: bool) -> Error {
    let server = Server::start(vec![reply]).await;
    let agent = Agent::builder(server.model(spec)).build();
    let mut conversation = Conversation::new();
    let error = if streamed {
        let events: Vec<StreamEvent> =
            futures::StreamExt::collect(agent.turn(&mut conversation, "hi").stream()).await;
        match events.last() {
            Some(StreamEvent::Finished(Err(error))) => error.clone(),
            other => panic!("expected the turn to fail, got {other:?}"),
        }
    } else {
        agent.run(&mut conversation, "hi").await.unwrap_err()
    };
    conversation.validate().unwrap();
    assert!(
        !conversation.log().iter().any(|entry| matches!(entry, agentix::Entry::Assistant { .. })),
        "a failed call logs no answer"
    );
    error
}

/// The model error `reply` makes of a whole turn of `spec`, streamed or not.
pub async fn error_of(spec: &str, reply: Reply, streamed: bool) -> ModelError {
    match turn_error(spec, reply, streamed).await {
        Error::Model(error) => error,
        other => panic!("expected a model error, got {other:?}"),
    }
}

/// A refusal by `provider`, for `reason`.
pub fn refused(provider: &str, reason: &str) -> Error {
    Error::Model(ModelError::Refused { provider: provider.into(), reason: reason.into() })
}

/// Runs a turn of `spec` with the weather tool and a system prompt, asking about Oslo, answered
/// by `replies` (a call, then "It is sunny in Oslo."); checks the answer, the valid log and
/// that two requests were sent, and returns them for what is particular to the provider.
pub async fn tool_turn(spec: &str, replies: Vec<Reply>) -> Vec<Received> {
    let server = Server::start(replies).await;
    let agent = Agent::builder(server.model(spec))
        .system("You report the weather.")
        .tool(tests::Weather::default())
        .build();
    let mut conversation = Conversation::new();
    let reply = agent.run(&mut conversation, "Weather in Oslo?").await.unwrap();
    assert_eq!(reply.joined_text(), "It is sunny in Oslo.", "{spec}");
    conversation.validate().unwrap();
    let received = server.received();
    assert_eq!(received.len(), 2, "{spec}: a request for the call, one for the answer");
    received
}

/// Checks that a whole answer of `body` that is not valid JSON fails a turn of `spec` with
/// `InvalidResponse` from `provider`.
pub async fn assert_malformed(spec: &str, provider: &str, body: &str) {
    let error = error_of(spec, Reply::raw(200, "application/json", body.into()), false).await;
    assert!(
        matches!(&error, ModelError::InvalidResponse { provider: named, .. } if named == provider),
        "{spec}: {error:?}"
    );
}

/// The text pieces a streamed turn showed, in order.
pub fn streamed_texts(events: &[StreamEvent]) -> Vec<&str> {
    events
        .iter()
        .filter_map(|event| match event {
            StreamEvent::Text(text) => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

/// The tool calls a streamed turn showed, in order.
pub fn streamed_calls(events: &[StreamEvent]) -> Vec<&agentix::ToolCall> {
    events
        .iter()
        .filter_map(|event| match event {
            StreamEvent::ToolCall(call) => Some(call),
            _ => None,
        })
        .collect()
}

/// Runs a streamed turn of `spec` asking about two cities, answered by `replies` (parallel
/// calls for Oslo and Bergen after "Checking both.", then "Sunny in Oslo and in Bergen."), and
/// checks what every provider must give: the text in pieces and whole, both calls whole and
/// run in order, a finished turn, a valid log. Returns the events and the server, for what is
/// particular to the provider.
pub async fn parallel_calls_turn(spec: &str, replies: Vec<Reply>) -> (Vec<StreamEvent>, Server) {
    let server = Server::start(replies).await;
    let weather = tests::Weather::default();
    let asked = Arc::clone(&weather.calls);
    let agent = Agent::builder(server.model(spec)).tool(weather).build();
    let mut conversation = Conversation::new();
    let events: Vec<StreamEvent> =
        futures::StreamExt::collect(agent.turn(&mut conversation, "Oslo and Bergen?").stream())
            .await;
    let texts = streamed_texts(&events);
    assert!(texts.len() > 4, "{spec}: the text arrived in pieces: {texts:?}");
    assert_eq!(texts.concat(), "Checking both.Sunny in Oslo and in Bergen.", "{spec}");
    let calls: Vec<(&str, &Value)> =
        streamed_calls(&events).iter().map(|call| (call.name.as_str(), &call.arguments)).collect();
    let (oslo, bergen) = (json!({ "city": "Oslo" }), json!({ "city": "Bergen" }));
    assert_eq!(calls, [("get_weather", &oslo), ("get_weather", &bergen)], "{spec}: whole calls");
    assert_eq!(*asked.lock().unwrap(), ["Oslo", "Bergen"], "{spec}");
    assert!(
        matches!(events.last(), Some(StreamEvent::Finished(Ok(answer))) if answer.joined_text() == "Sunny in Oslo and in Bergen."),
        "{spec}: {:?}",
        events.last()
    );
    conversation.validate().unwrap();
    (events, server)
}

/// The message of [`parallel_calls_turn`]'s first answer: text, then two calls with `ids`.
pub fn two_calls(ids: [&str; 2]) -> AssistantMessage {
    AssistantMessage::text("Checking both.")
        .with_tool_call(agentix::ToolCall::new(ids[0], "get_weather", json!({ "city": "Oslo" })))
        .with_tool_call(agentix::ToolCall::new(ids[1], "get_weather", json!({ "city": "Bergen" })))
}

/// The message of [`parallel_calls_turn`]'s second answer.
pub fn both_sunny() -> AssistantMessage {
    AssistantMessage::text("Sunny in Oslo and in Bergen.")
}

/// Checks that each reply fails a turn of `spec` with its error, on both paths.
pub async fn assert_errors(spec: &str, cases: Vec<(Reply, ModelError)>) {
    for streamed in [false, true] {
        for (reply, expected) in &cases {
            let error = error_of(spec, reply.clone(), streamed).await;
            assert_eq!(&error, expected, "{spec}, streamed: {streamed}");
        }
    }
}

/// An OpenAI error answer (chat completions and responses alike).
pub fn openai_error(status: u16, message: &str, kind: &str) -> Reply {
    let body =
        json!({ "error": { "message": message, "type": kind, "param": null, "code": null } });
    Reply::raw(status, "application/json", body.to_string())
}

/// A provider's HTTP error: `provider` answered `status` with `message`.
pub fn provider_error(provider: &str, status: u16, message: &str) -> ModelError {
    ModelError::Provider {
        provider: provider.into(),
        status,
        message: message.into(),
        retry_after: None,
    }
}

/// A 429 from `provider` saying `message` and to retry after `wait`.
pub fn rate_limited(provider: &str, message: &str, wait: Duration) -> ModelError {
    ModelError::Provider {
        provider: provider.into(),
        status: 429,
        message: message.into(),
        retry_after: Some(wait),
    }
}

/// Runs a streamed turn of `spec` on `stream`, broken off after its last piece, and checks it
/// with [`assert_broke_off`].
pub async fn cut_stream_turn(spec: &str, stream: Reply) {
    let server = Server::start(vec![stream.cut()]).await;
    let agent = Agent::builder(server.model(spec)).build();
    let mut conversation = Conversation::new();
    let events: Vec<StreamEvent> =
        futures::StreamExt::collect(agent.turn(&mut conversation, "hi").stream()).await;
    assert_broke_off(&events, &conversation);
}

/// Checks a streamed turn that broke off: it showed text, then withdrew it, and ended with a
/// model error; the log is valid and holds no answer.
pub fn assert_broke_off(events: &[StreamEvent], conversation: &Conversation) {
    let shown = events.iter().position(|event| matches!(event, StreamEvent::Text(_)));
    let withdrawn =
        events.iter().position(|event| matches!(event, StreamEvent::Withdrawn { hook: None, .. }));
    assert!(
        matches!((shown, withdrawn), (Some(shown), Some(withdrawn)) if shown < withdrawn),
        "text shown, then withdrawn: {events:?}"
    );
    assert!(
        matches!(events.last(), Some(StreamEvent::Finished(Err(Error::Model(_))))),
        "the turn ends with the broken stream's error, not {:?}",
        events.last()
    );
    conversation.validate().unwrap();
    assert!(
        !conversation.log().iter().any(|entry| matches!(entry, agentix::Entry::Assistant { .. }))
    );
}

// ---- the providers' answers, from their API references ----

/// The tool calls of `message` as `(id, name, arguments)`.
fn calls(message: &AssistantMessage) -> Vec<(String, String, Value)> {
    message
        .tool_calls()
        .map(|call| (call.id.clone(), call.name.clone(), call.arguments.clone()))
        .collect()
}

fn text(message: &AssistantMessage) -> String {
    message.content.iter().filter_map(Part::as_text).collect()
}

/// OpenAI chat completions: a whole answer.
pub fn openai_json(message: &AssistantMessage, usage: Value) -> Value {
    let calls = calls(message);
    let text = text(message);
    let tool_calls: Vec<Value> = calls
        .iter()
        .map(|(id, name, arguments)| {
            json!({ "id": id, "type": "function", "function": { "name": name, "arguments": arguments.to_string() } })
        })
        .collect();
    let mut reply = json!({ "role": "assistant", "content": if text.is_empty() { Value::Null } else { json!(text) } });
    if !tool_calls.is_empty() {
        reply["tool_calls"] = json!(tool_calls);
    }
    json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": "gpt-4.1-mini",
        "choices": [{
            "index": 0,
            "message": reply,
            "finish_reason": if calls.is_empty() { "stop" } else { "tool_calls" },
        }],
        "usage": usage,
    })
}

/// OpenAI chat completions, streamed: the text a few characters per event, each call's
/// arguments split over several events, then the finish reason, the usage, and `[DONE]`.
pub fn openai_sse(message: &AssistantMessage, usage: Value) -> Vec<String> {
    let chunk = |delta: Value, finish: Value| {
        let event = json!({
            "id": "chatcmpl-1",
            "object": "chat.completion.chunk",
            "created": 1_700_000_000,
            "model": "gpt-4.1-mini",
            "choices": [{ "index": 0, "delta": delta, "finish_reason": finish }],
        });
        format!("data: {event}\n\n")
    };
    let mut events = vec![chunk(json!({ "role": "assistant", "content": "" }), Value::Null)];
    let text = text(message);
    for piece in pieces(&text, 4) {
        events.push(chunk(json!({ "content": piece }), Value::Null));
    }
    for (index, (id, name, arguments)) in calls(message).into_iter().enumerate() {
        let start = json!({ "tool_calls": [{ "index": index, "id": id, "type": "function", "function": { "name": name, "arguments": "" } }] });
        events.push(chunk(start, Value::Null));
        for piece in pieces(&arguments.to_string(), 5) {
            let delta =
                json!({ "tool_calls": [{ "index": index, "function": { "arguments": piece } }] });
            events.push(chunk(delta, Value::Null));
        }
    }
    let finish = if message.calls_tools() { "tool_calls" } else { "stop" };
    events.push(chunk(json!({}), json!(finish)));
    let usage = json!({ "id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1_700_000_000, "model": "gpt-4.1-mini", "choices": [], "usage": usage });
    events.push(format!("data: {usage}\n\n"));
    events.push("data: [DONE]\n\n".into());
    events
}

/// Anthropic messages: a whole answer.
pub fn anthropic_json(message: &AssistantMessage, usage: Value) -> Value {
    let mut content = Vec::new();
    let text = text(message);
    if !text.is_empty() {
        content.push(json!({ "type": "text", "text": text }));
    }
    for (id, name, input) in calls(message) {
        content.push(json!({ "type": "tool_use", "id": id, "name": name, "input": input }));
    }
    json!({
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": content,
        "stop_reason": if message.calls_tools() { "tool_use" } else { "end_turn" },
        "stop_sequence": null,
        "usage": usage,
    })
}

/// Anthropic messages, streamed: `message_start`, a content block per text and call (each
/// call's input as `input_json_delta` fragments), `message_delta` with the stop reason, and
/// `message_stop`.
pub fn anthropic_sse(message: &AssistantMessage, usage: Value) -> Vec<String> {
    let event = |name: &str, data: Value| format!("event: {name}\ndata: {data}\n\n");
    let mut start_usage = usage.clone();
    start_usage["output_tokens"] = json!(1);
    let mut events = vec![event(
        "message_start",
        json!({ "type": "message_start", "message": {
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [], "stop_reason": null, "stop_sequence": null, "usage": start_usage,
        }}),
    )];
    let mut index = 0;
    let text = text(message);
    if !text.is_empty() {
        events.push(event("content_block_start", json!({ "type": "content_block_start", "index": index, "content_block": { "type": "text", "text": "" } })));
        for piece in pieces(&text, 4) {
            events.push(event("content_block_delta", json!({ "type": "content_block_delta", "index": index, "delta": { "type": "text_delta", "text": piece } })));
        }
        events.push(event(
            "content_block_stop",
            json!({ "type": "content_block_stop", "index": index }),
        ));
        index += 1;
    }
    for (id, name, input) in calls(message) {
        events.push(event("content_block_start", json!({ "type": "content_block_start", "index": index, "content_block": { "type": "tool_use", "id": id, "name": name, "input": {} } })));
        for piece in pieces(&input.to_string(), 5) {
            events.push(event("content_block_delta", json!({ "type": "content_block_delta", "index": index, "delta": { "type": "input_json_delta", "partial_json": piece } })));
        }
        events.push(event(
            "content_block_stop",
            json!({ "type": "content_block_stop", "index": index }),
        ));
        index += 1;
    }
    let stop = if message.calls_tools() { "tool_use" } else { "end_turn" };
    events.push(event("message_delta", json!({ "type": "message_delta", "delta": { "stop_reason": stop, "stop_sequence": null }, "usage": { "output_tokens": usage["output_tokens"] } })));
    events.push(event("message_stop", json!({ "type": "message_stop" })));
    events
}

/// `text` in pieces of `size` characters.
pub fn pieces(text: &str, size: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars.chunks(size).map(|piece| piece.iter().collect()).collect()
}

/// Whether a request asks for a stream.
pub fn streamed(request: &Value) -> bool {
    request.get("stream").and_then(Value::as_bool).unwrap_or(false)
}

/// Gemini `generateContent`: a whole answer. Gemini gives its calls no ids.
pub fn gemini_json(message: &AssistantMessage, usage: Value) -> Value {
    let mut parts = Vec::new();
    let text = text(message);
    if !text.is_empty() {
        parts.push(json!({ "text": text }));
    }
    for (_, name, args) in calls(message) {
        parts.push(json!({ "functionCall": { "name": name, "args": args } }));
    }
    json!({
        "candidates": [{ "content": { "parts": parts, "role": "model" }, "finishReason": "STOP", "index": 0 }],
        "usageMetadata": usage,
        "modelVersion": "gemini-2.5-flash",
        "responseId": "resp-1",
    })
}

/// Gemini `streamGenerateContent?alt=sse`: each event a partial `GenerateContentResponse` —
/// the text a few characters at a time, each call whole in its own event, and the usage with
/// the finish reason in the last.
pub fn gemini_sse(message: &AssistantMessage, usage: Value) -> Vec<String> {
    let event = |parts: Value, finish: Option<&str>, usage: Option<&Value>| {
        let mut candidate = json!({ "content": { "parts": parts, "role": "model" }, "index": 0 });
        if let Some(finish) = finish {
            candidate["finishReason"] = json!(finish);
        }
        let mut response = json!({ "candidates": [candidate], "modelVersion": "gemini-2.5-flash", "responseId": "resp-1" });
        if let Some(usage) = usage {
            response["usageMetadata"] = usage.clone();
        }
        format!("data: {response}\r\n\r\n")
    };
    let mut events: Vec<String> = pieces(&text(message), 4)
        .into_iter()
        .map(|piece| event(json!([{ "text": piece }]), None, None))
        .collect();
    for (_, name, args) in calls(message) {
        events.push(event(json!([{ "functionCall": { "name": name, "args": args } }]), None, None));
    }
    events.push(event(json!([{ "text": "" }]), Some("STOP"), Some(&usage)));
    events
}

/// Ollama `/api/chat`: a whole answer, arguments as JSON objects, no call ids.
pub fn ollama_json(message: &AssistantMessage, prompt: u32, output: u32) -> Value {
    let tool_calls: Vec<Value> = calls(message)
        .into_iter()
        .map(|(_, name, arguments)| json!({ "function": { "name": name, "arguments": arguments } }))
        .collect();
    let mut reply = json!({ "role": "assistant", "content": text(message) });
    if !tool_calls.is_empty() {
        reply["tool_calls"] = json!(tool_calls);
    }
    json!({
        "model": "llama3.2",
        "created_at": "2025-01-01T00:00:00Z",
        "message": reply,
        "done": true,
        "done_reason": "stop",
        "total_duration": 1_000_000,
        "prompt_eval_count": prompt,
        "eval_count": output,
    })
}

/// Ollama `/api/chat`, streamed: newline-delimited JSON, the text a few characters per line,
/// the calls whole in a line of their own, and a last line with `done` and the counts.
pub fn ollama_lines(message: &AssistantMessage, prompt: u32, output: u32) -> Vec<Value> {
    let line = |message: Value| json!({ "model": "llama3.2", "created_at": "2025-01-01T00:00:00Z", "message": message, "done": false });
    let mut lines: Vec<Value> = pieces(&text(message), 4)
        .into_iter()
        .map(|piece| line(json!({ "role": "assistant", "content": piece })))
        .collect();
    let tool_calls: Vec<Value> = calls(message)
        .into_iter()
        .map(|(_, name, arguments)| json!({ "function": { "name": name, "arguments": arguments } }))
        .collect();
    if !tool_calls.is_empty() {
        lines.push(line(json!({ "role": "assistant", "content": "", "tool_calls": tool_calls })));
    }
    lines.push(json!({
        "model": "llama3.2",
        "created_at": "2025-01-01T00:00:00Z",
        "message": { "role": "assistant", "content": "" },
        "done": true,
        "done_reason": "stop",
        "total_duration": 1_000_000,
        "prompt_eval_count": prompt,
        "eval_count": output,
    }));
    lines
}

/// OpenAI responses: the output items of `message` (a message item with its text, then a
/// `function_call` item per call).
fn responses_output(message: &AssistantMessage) -> Vec<Value> {
    let mut output = Vec::new();
    let text = text(message);
    if !text.is_empty() {
        output.push(json!({
            "type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
            "content": [{ "type": "output_text", "text": text, "annotations": [] }],
        }));
    }
    for (index, (id, name, arguments)) in calls(message).into_iter().enumerate() {
        output.push(json!({
            "type": "function_call", "id": format!("fc_{index}"), "call_id": id, "name": name,
            "arguments": arguments.to_string(), "status": "completed",
        }));
    }
    output
}

fn responses_body(message: &AssistantMessage, usage: &Value, status: &str) -> Value {
    json!({
        "id": "resp_1",
        "object": "response",
        "created_at": 1_700_000_000,
        "status": status,
        "model": "gpt-5-mini",
        "output": if status == "completed" { json!(responses_output(message)) } else { json!([]) },
        "usage": if status == "completed" { usage.clone() } else { Value::Null },
    })
}

/// OpenAI responses: a whole answer.
pub fn responses_json(message: &AssistantMessage, usage: Value) -> Value {
    responses_body(message, &usage, "completed")
}

/// OpenAI responses, streamed: `response.created`, each output item added, its text or its
/// arguments in deltas, done, and `response.completed` with the usage.
pub fn responses_sse(message: &AssistantMessage, usage: Value) -> Vec<String> {
    let event =
        |data: Value| format!("event: {}\ndata: {data}\n\n", data["type"].as_str().unwrap());
    let mut events = vec![event(
        json!({ "type": "response.created", "sequence_number": 0, "response": responses_body(message, &usage, "in_progress") }),
    )];
    for (index, item) in responses_output(message).into_iter().enumerate() {
        let mut opened = item.clone();
        if item["type"] == "message" {
            opened["content"] = json!([]);
            events.push(event(json!({ "type": "response.output_item.added", "output_index": index, "item": opened })));
            events.push(event(json!({ "type": "response.content_part.added", "item_id": item["id"], "output_index": index, "content_index": 0, "part": { "type": "output_text", "text": "", "annotations": [] } })));
            let text = item["content"][0]["text"].as_str().unwrap();
            for piece in pieces(text, 4) {
                events.push(event(json!({ "type": "response.output_text.delta", "item_id": item["id"], "output_index": index, "content_index": 0, "delta": piece })));
            }
            events.push(event(json!({ "type": "response.output_text.done", "item_id": item["id"], "output_index": index, "content_index": 0, "text": text })));
        } else {
            opened["arguments"] = json!("");
            opened["status"] = json!("in_progress");
            events.push(event(json!({ "type": "response.output_item.added", "output_index": index, "item": opened })));
            let arguments = item["arguments"].as_str().unwrap();
            for piece in pieces(arguments, 5) {
                events.push(event(json!({ "type": "response.function_call_arguments.delta", "item_id": item["id"], "output_index": index, "delta": piece })));
            }
            events.push(event(json!({ "type": "response.function_call_arguments.done", "item_id": item["id"], "output_index": index, "arguments": arguments })));
        }
        events.push(event(
            json!({ "type": "response.output_item.done", "output_index": index, "item": item }),
        ));
    }
    events.push(event(json!({ "type": "response.completed", "response": responses_body(message, &usage, "completed") })));
    events
}

/// Whether a JSON schema refers to a definition anywhere (`$ref`).
pub fn refers(schema: &Value) -> bool {
    match schema {
        Value::Object(map) => map.contains_key("$ref") || map.values().any(refers),
        Value::Array(items) => items.iter().any(refers),
        _ => false,
    }
}
