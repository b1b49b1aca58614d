//! A first agent on a real model: a provider chosen by `AGENTIX_MODEL` (`openai:gpt-4.1-mini`,
//! `anthropic:claude-sonnet-4-5`, `gemini:gemini-2.5-flash`, `ollama:llama3.2`…) with its key in
//! the provider's usual variable. Without them the example says so and runs on a loopback stub
//! that speaks OpenAI's chat completions, so it always runs — through the same adapter.
//!
//! The agent streams two turns with a tool, and an `after_model` hook meters what each call
//! cost, cached tokens included, into the conversation's scope.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use agentix::event::AfterModel;
use agentix::{
    Agent, AssistantMessage, Conversation, StreamEvent, Turn, Verdict, hook, model::Usage,
    scope::ScopeValue,
};
use agentix_genai::{GenaiModel, UnknownModel};
use axum::Json;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use examples::weather::GetWeather;

/// What the agent's model calls cost so far, kept in the conversation's scope.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Spend {
    /// Model calls.
    pub calls: u32,
    /// Tokens read and written, over every call.
    pub usage: Usage,
}

impl ScopeValue for Spend {
    const KEY: &'static str = "spend";
}

/// `after_model`: adds the call's usage to the conversation's [`Spend`].
#[hook(after_model)]
async fn meter(_answer: &AssistantMessage, turn: &mut Turn) -> Verdict<AfterModel> {
    let call = turn.last_usage().unwrap_or_default();
    let mut spend = turn.scope().get::<Spend>().copied().unwrap_or_default();
    spend.calls += 1;
    spend.usage += call;
    turn.scope_mut().insert(spend);
    Verdict::Continue
}

/// The model the example runs on, and what it says about the choice.
pub struct Choice {
    /// The model.
    pub model: GenaiModel,
    /// Why this one, for the reader.
    pub note: String,
    /// The loopback stub, when the example runs on it.
    pub stub: Option<Stub>,
}

/// Picks the model from the environment (`var` reads a variable): `AGENTIX_MODEL` with its key
/// (and `AGENTIX_ENDPOINT` for an OpenAI-compatible server of your own), or the stub.
pub async fn choose(var: impl Fn(&str) -> Option<String>) -> Result<Choice, UnknownModel> {
    let how = "set AGENTIX_MODEL (openai:gpt-4.1-mini, anthropic:claude-sonnet-4-5, \
               gemini:gemini-2.5-flash, ollama:llama3.2…) and the provider's key to use a real model";
    let Some(spec) = var("AGENTIX_MODEL") else {
        return stub(format!("No AGENTIX_MODEL: {how}. Running on a loopback stub instead.")).await;
    };
    let mut builder = GenaiModel::builder(&spec);
    let endpoint = var("AGENTIX_ENDPOINT");
    if let Some(endpoint) = &endpoint {
        builder = builder.endpoint(endpoint);
    }
    let key_variable = builder.key_variable()?;
    match key_variable.map(|name| (name, var(name))) {
        Some((_, Some(key))) => builder = builder.api_key(key),
        // A server of your own may want no key (vLLM, LM Studio): send a placeholder.
        Some((_, None)) if endpoint.is_some() => builder = builder.api_key("none"),
        Some((name, None)) => {
            let note = format!("{spec} needs {name}: {how}. Running on a loopback stub instead.");
            return stub(note).await;
        }
        None => {}
    }
    let at = endpoint.map(|endpoint| format!(" at {endpoint}")).unwrap_or_default();
    Ok(Choice { model: builder.build()?, note: format!("Running on {spec}{at}."), stub: None })
}

async fn stub(note: String) -> Result<Choice, UnknownModel> {
    let stub = Stub::start().await;
    let model =
        GenaiModel::builder("openai:gpt-4.1-mini").endpoint(stub.base()).api_key("stub").build()?;
    Ok(Choice { model, note, stub: Some(stub) })
}

/// Runs two streamed turns on `model`, printing the text as it arrives (`print` adds no line
/// breaks), the tool calls, and what each turn cost. Returns the conversation.
pub async fn run(model: GenaiModel, print: &dyn Fn(&str)) -> Result<Conversation, agentix::Error> {
    let agent = Agent::builder(model.clone())
        .system("You are a concise assistant. Use get_weather for the weather.")
        .tool(GetWeather)
        .hook(meter)
        // Budgets in the model's own tokens: OpenAI's tokenizer for its models, an estimate
        // the provider's reported usage corrects for the others.
        .token_counter(model.token_counter())
        .build();
    let mut conversation = Conversation::new();
    for question in ["What's the weather in Oslo?", "And in Bergen? One sentence."] {
        print(&format!("\n> {question}\n"));
        let outcome = {
            let mut events = std::pin::pin!(agent.turn(&mut conversation, question).stream());
            let mut outcome = None;
            while let Some(event) = events.next().await {
                match event {
                    StreamEvent::Text(text) => print(&text),
                    StreamEvent::ToolCall(call) => {
                        print(&format!("[calls {}({})]\n", call.name, call.arguments))
                    }
                    StreamEvent::ToolResult(result) => print(&format!("[{}]\n", result.output)),
                    StreamEvent::Withdrawn { .. } => print("\n[withdrawn]\n"),
                    StreamEvent::Finished(finished) => outcome = Some(finished),
                    _ => {}
                }
            }
            outcome.expect("a turn always finishes")
        };
        outcome?;
        let spend = conversation.scope().get::<Spend>().copied().unwrap_or_default();
        print(&format!(
            "\n[{} calls so far: {} tokens in ({} from the cache, {} written to it), {} out]\n",
            spend.calls,
            spend.usage.input_tokens,
            spend.usage.cache_read_tokens,
            spend.usage.cache_write_tokens,
            spend.usage.output_tokens
        ));
    }
    Ok(conversation)
}

/// A loopback server that speaks OpenAI's chat completions, JSON and server-sent events: it
/// calls `get_weather` for a question that names a city, then answers from the tool's result.
/// Its usage is honest about one thing a real provider does: the tokens of the prefix a request
/// shares with the one before are reported as read from the cache (4 characters a token).
pub struct Stub {
    addr: SocketAddr,
    server: tokio::task::JoinHandle<()>,
}

impl Stub {
    /// Starts the stub on a free port of 127.0.0.1.
    pub async fn start() -> Self {
        let app = axum::Router::new()
            .route("/v1/chat/completions", axum::routing::post(complete))
            .with_state(Arc::new(Mutex::new(String::new())));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a loopback port");
        let addr = listener.local_addr().expect("a bound address");
        let server = tokio::spawn(async move {
            axum::serve(listener, app).await.expect("the stub serves");
        });
        Stub { addr, server }
    }

    /// The base URL the adapter's endpoint takes.
    pub fn base(&self) -> String {
        format!("http://{}/v1/", self.addr)
    }
}

impl Drop for Stub {
    fn drop(&mut self) {
        self.server.abort();
    }
}

/// The previous request's messages, for the stub's cache.
type Previous = Arc<Mutex<String>>;

async fn complete(State(previous): State<Previous>, Json(request): Json<Value>) -> Response {
    let messages = request["messages"].to_string();
    let cached = {
        let mut previous = previous.lock().expect("the stub's cache");
        let shared = previous.bytes().zip(messages.bytes()).take_while(|(a, b)| a == b).count();
        *previous = messages.clone();
        shared / 4
    };
    let prompt = messages.len() / 4;
    let last = request["messages"].as_array().and_then(|all| all.last()).cloned();
    let last = last.unwrap_or_default();
    let (text, call) = if last["role"] == "tool" {
        let result = last["content"].as_str().unwrap_or_default();
        (format!("Right now: {result}°C."), None)
    } else {
        let asked = last["content"].as_str().unwrap_or_default();
        match asked
            .split(|c: char| !c.is_alphanumeric())
            .find(|word| ["Oslo", "Bergen", "Paris", "Rome", "London"].contains(word))
        {
            Some(city) => (String::new(), Some(city.to_owned())),
            None => ("I can tell you the weather in a city.".into(), None),
        }
    };
    let usage = json!({
        "prompt_tokens": prompt,
        "completion_tokens": text.len() / 4 + 1,
        "total_tokens": prompt + text.len() / 4 + 1,
        "prompt_tokens_details": { "cached_tokens": cached },
    });
    let id = format!("call_{}", prompt);
    let tool_calls = call.map(|city| {
        json!([{ "id": id, "type": "function", "function": { "name": "get_weather", "arguments": json!({ "city": city }).to_string() } }])
    });
    if request["stream"] == true {
        stream(&text, tool_calls, usage)
    } else {
        let mut message = json!({ "role": "assistant", "content": text });
        if let Some(tool_calls) = &tool_calls {
            message["tool_calls"] = tool_calls.clone();
        }
        let finish = if tool_calls.is_some() { "tool_calls" } else { "stop" };
        Json(json!({
            "id": "chatcmpl-stub", "object": "chat.completion", "created": 0, "model": "stub",
            "choices": [{ "index": 0, "message": message, "finish_reason": finish }],
            "usage": usage,
        }))
        .into_response()
    }
}

/// The answer as OpenAI streams it: the text a few words at a time, then the calls, the finish
/// reason, the usage, and `[DONE]`.
fn stream(text: &str, tool_calls: Option<Value>, usage: Value) -> Response {
    let chunk = |delta: Value, finish: Value| {
        let chunk = json!({ "id": "chatcmpl-stub", "object": "chat.completion.chunk", "created": 0, "model": "stub", "choices": [{ "index": 0, "delta": delta, "finish_reason": finish }] });
        format!("data: {chunk}\n\n")
    };
    let mut events: Vec<String> = text
        .split_inclusive(' ')
        .map(|word| chunk(json!({ "content": word }), Value::Null))
        .collect();
    let finish = if tool_calls.is_some() { "tool_calls" } else { "stop" };
    if let Some(Value::Array(calls)) = tool_calls {
        for (index, mut call) in calls.into_iter().enumerate() {
            call["index"] = json!(index);
            events.push(chunk(json!({ "tool_calls": [call] }), Value::Null));
        }
    }
    events.push(chunk(json!({}), json!(finish)));
    let usage = json!({ "id": "chatcmpl-stub", "object": "chat.completion.chunk", "created": 0, "model": "stub", "choices": [], "usage": usage });
    events.push(format!("data: {usage}\n\n"));
    events.push("data: [DONE]\n\n".into());
    let body = futures::stream::iter(events.into_iter().map(Ok::<_, std::convert::Infallible>));
    Response::builder()
        .header("content-type", "text/event-stream")
        .body(axum::body::Body::from_stream(body))
        .expect("a valid response")
}
