//! What every variant of the turn benchmarks runs: the model, the tool and the hooks' work.

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use agentix::{
    AssistantMessage, Model, Tool, ToolCall, Turn,
    message::Role,
    model::{ModelError, ModelRequest, ModelResponse},
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

pub(crate) static COUNTER: AtomicU64 = AtomicU64::new(0);

/// The light work each hook does: a counter update and a string check.
pub(crate) fn work(text: &str) {
    COUNTER.fetch_add(1, Ordering::Relaxed);
    black_box(text.contains("needle"));
}

/// Where a bench model keeps the requests it received, when asked to.
pub(crate) type Recorder = Arc<Mutex<Vec<ModelRequest>>>;

/// Answers with a tool call, then — once it sees the tool's result — with text.
pub(crate) struct BenchModel {
    call: AssistantMessage,
    answer: AssistantMessage,
    recorder: Option<Recorder>,
}

impl BenchModel {
    pub(crate) fn new(recorder: Option<Recorder>) -> Self {
        BenchModel {
            call: AssistantMessage::default().with_tool_call(ToolCall::new(
                "c1",
                "get_weather",
                json!({ "city": "Oslo" }),
            )),
            answer: AssistantMessage::text("It is sunny in Oslo."),
            recorder,
        }
    }

    fn respond(&self, request: &ModelRequest) -> ModelResponse {
        if let Some(recorder) = &self.recorder {
            recorder.lock().unwrap().push(request.clone());
        }
        let answered = request.messages.last().is_some_and(|message| message.role == Role::Tool);
        if answered { self.answer.clone() } else { self.call.clone() }.into()
    }
}

impl Model for BenchModel {
    async fn complete(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        Ok(self.respond(request))
    }
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct City {
    pub(crate) city: String,
}

pub(crate) struct Weather;

impl Tool for Weather {
    const NAME: &'static str = "get_weather";
    type Args = City;
    type Output = String;
    type Error = std::convert::Infallible;

    fn description(&self) -> &str {
        "Current weather for a city."
    }

    async fn call(&self, args: City, _turn: &Turn) -> Result<String, Self::Error> {
        Ok(format!("sunny in {}", args.city))
    }
}
