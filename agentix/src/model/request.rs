//! What a model call carries: the request as rendered, the answer, its usage, and how it
//! failed. Data: the log, the audit and a journal keep them.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::message::{AssistantMessage, Message, Part, ToolCall, ToolResult};
use crate::tool::spec::ToolSpec;

/// A piece of a streamed answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Chunk {
    /// More text.
    Text(String),
    /// A whole tool call.
    ToolCall(ToolCall),
    /// What the call cost, once known.
    Usage(Usage),
}

impl Chunk {
    /// A whole response as chunks: its parts in order, then its usage.
    pub fn of(response: ModelResponse) -> Vec<Chunk> {
        let mut chunks: Vec<Chunk> = response
            .message
            .content
            .into_iter()
            .filter_map(|part| match part {
                Part::Text(text) => Some(Chunk::Text(text)),
                Part::ToolCall(call) => Some(Chunk::ToolCall(call)),
                Part::ToolResult(_) => None,
            })
            .collect();
        chunks.push(Chunk::Usage(response.usage));
        chunks
    }
}

/// One model call, as rendered for this step: `[system, history…, user message, injections,
/// this turn's steps…]`. The value of `before_model`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelRequest {
    /// The system prompt.
    pub system: Option<Arc<str>>,
    /// The conversation, rendered.
    pub messages: Vec<Message>,
    /// The tools the model may call; fixed per agent so the prompt cache holds.
    pub tools: Arc<[ToolSpec]>,
    /// The model to use, where the adapter serves several; `None` uses the adapter's default.
    pub model: Option<String>,
    /// Sampling parameters.
    pub params: ModelParams,
    /// How many of the leading `messages` are earlier turns: the stable history, byte-identical
    /// from one request to the next however the turn injects. A provider with a prompt cache
    /// marks its end (and the system prompt's) as cache breakpoints.
    #[serde(default)]
    pub history: usize,
}

impl ModelRequest {
    /// The tool results the request carries, in order: what the model is about to read of its
    /// tools.
    pub fn tool_results(&self) -> impl Iterator<Item = &ToolResult> {
        self.messages.iter().flat_map(|message| &message.content).filter_map(|part| match part {
            Part::ToolResult(result) => Some(result),
            _ => None,
        })
    }
}

/// Sampling parameters; `None` leaves the provider's default.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelParams {
    /// Sampling temperature.
    pub temperature: Option<f32>,
    /// Cap on the response's tokens.
    pub max_tokens: Option<u32>,
    /// Tokens the model may spend thinking before it answers, where the provider takes a
    /// budget (Anthropic's extended thinking, Gemini's thinking budget); a `before_model` hook
    /// sets it per call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking_budget: Option<u32>,
    /// The shape the final answer must take: a JSON schema the provider holds the model to,
    /// where it can (OpenAI's `json_schema`, Gemini's response schema, Anthropic's output
    /// format, Ollama's `format`). `None`: text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<std::sync::Arc<OutputSchema>>,
}

/// The JSON schema a final answer must match, and its name (OpenAI's `json_schema` wants one).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OutputSchema {
    /// What the answer is called: letters, digits, `_` and `-`.
    pub name: String,
    /// The answer's schema: an object's.
    pub schema: serde_json::Value,
}

impl OutputSchema {
    /// The schema of `T`, named after it.
    pub fn of<T: schemars::JsonSchema>() -> Self {
        let name: String = T::schema_name()
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' })
            .collect();
        let schema = serde_json::to_value(schemars::schema_for!(T)).unwrap_or_default();
        OutputSchema { name, schema }
    }
}

/// What an agent's answer can be typed as: a value that describes itself with a JSON schema
/// (which requests carry, and a provider holds the model to) and reads from JSON.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be an agent's output type",
    label = "not an output type",
    note = "an output type derives `JsonSchema`, `Serialize` and `Deserialize` (all three in `agentix::prelude`) and is `Send + Sync + 'static`"
)]
pub trait OutputType:
    schemars::JsonSchema + Serialize + serde::de::DeserializeOwned + Send + Sync + 'static
{
}

impl<T> OutputType for T where
    T: schemars::JsonSchema + Serialize + serde::de::DeserializeOwned + Send + Sync + 'static
{
}

/// A model's answer.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelResponse {
    /// What the model said.
    pub message: AssistantMessage,
    /// What the call cost.
    pub usage: Usage,
}

impl From<AssistantMessage> for ModelResponse {
    fn from(message: AssistantMessage) -> Self {
        ModelResponse { message, usage: Usage::default() }
    }
}

/// Token counts of one call, as the provider reports them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Tokens read, cached or not.
    pub input_tokens: u32,
    /// Tokens written.
    pub output_tokens: u32,
    /// Of the tokens read, those read from the provider's prompt cache.
    #[serde(default)]
    pub cache_read_tokens: u32,
    /// Of the tokens read, those written to the provider's prompt cache for later calls.
    #[serde(default)]
    pub cache_write_tokens: u32,
}

/// Sums, saturating: a count a provider reports wrong cannot overflow a turn's meter.
impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, other: Usage) {
        self.input_tokens = self.input_tokens.saturating_add(other.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(other.output_tokens);
        self.cache_read_tokens = self.cache_read_tokens.saturating_add(other.cache_read_tokens);
        self.cache_write_tokens = self.cache_write_tokens.saturating_add(other.cache_write_tokens);
    }
}

/// Why a model call failed. It serializes, and reads back exactly: a journal that records a
/// failed call replays the model's own error.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ModelError {
    /// A [`ScriptedModel`](crate::ScriptedModel) was called more times than it has responses.
    #[error("the scripted model has no response left for call {call}")]
    ScriptExhausted {
        /// The 1-based number of the call that found the script empty.
        call: usize,
    },
    /// The provider could not be reached, or its answer could not be read.
    #[error("transport error: {0}")]
    Transport(String),
    /// The provider answered with an error status.
    #[error("{provider} answered {status}: {message}{}", retry_after.map(|after| format!(" (retry after {after:?})")).unwrap_or_default())]
    Provider {
        /// The provider, as its adapter names it (`openai`, `anthropic`…).
        provider: String,
        /// The HTTP status.
        status: u16,
        /// The provider's message.
        message: String,
        /// When to try again, if the provider said (a 429's `retry-after`).
        retry_after: Option<std::time::Duration>,
    },
    /// The provider's answer could not be read: malformed JSON, a stream that broke off.
    #[error("{provider}'s answer could not be read: {message}")]
    InvalidResponse {
        /// The provider.
        provider: String,
        /// What was wrong with it.
        message: String,
    },
    /// The provider declined to answer: the model refused, or a safety filter blocked the
    /// prompt or the answer.
    #[error("{provider} declined to answer: {reason}")]
    Refused {
        /// The provider.
        provider: String,
        /// The provider's own words: the refusal, or the reason it gave (`SAFETY`, `refusal`).
        reason: String,
    },
    /// The model did not answer within the conversation's `model_timeout`.
    #[error("the model did not answer within {after:?}")]
    TimedOut {
        /// The conversation's `model_timeout`.
        after: std::time::Duration,
    },
    /// The model's answer calls two tools under one id: its results could not be told apart.
    #[error("the model's answer calls two tools under the id `{id}`")]
    DuplicateCallId {
        /// The id.
        id: String,
    },
    /// A hook inside the `wrap_model` chain panicked; the call was abandoned.
    #[error("model call abandoned: a wrap_model hook panicked")]
    Aborted,
    /// Any other failure, described.
    #[error("{0}")]
    Other(String),
}

impl ModelError {
    /// A model call's outcome however it ended within its bound: its own answer or error, or
    /// a panic or a timeout as an error. The loop and a journal settle a call alike.
    #[inline(always)]
    pub(crate) fn settle(
        ended: Result<
            crate::support::Caught<Result<ModelResponse, ModelError>>,
            std::time::Duration,
        >,
    ) -> Result<ModelResponse, ModelError> {
        match ended {
            Ok(Ok(answer)) => answer,
            Ok(Err(payload)) => Err(ModelError::Other(format!(
                "the model panicked: {}",
                crate::support::panic_message(payload.as_ref())
            ))),
            Err(after) => Err(ModelError::TimedOut { after }),
        }
    }
}
