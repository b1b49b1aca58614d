//! Loopback servers that speak the providers' wire formats, for the adapter's tests: wiremock
//! mocks for answers whose requests are checked, and a small axum server for streams that must
//! arrive over time or break off, and for a provider that answers from a script.

#![allow(dead_code)] // each test file uses its own part of this.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentix::{AssistantMessage, Part};
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
        Server { base: format!("http://{addr}/v1/"), stub }
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
