//! Messages and their content parts: what the model reads and writes.

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Serialize};

/// Who speaks a message. Injected content carries [`Role::User`]: the model must trust it no more
/// than the human's own words.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The system prompt.
    System,
    /// The human, and content injected on the human's behalf.
    User,
    /// The model.
    Assistant,
    /// Tool results, answering the assistant's tool calls.
    Tool,
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        })
    }
}

/// One piece of a message's content.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Part {
    /// Plain text.
    Text(String),
    /// A request from the model to run a tool.
    ToolCall(ToolCall),
    /// The answer to a tool call.
    ToolResult(ToolResult),
}

impl Part {
    /// A text part.
    pub fn text(text: impl Into<String>) -> Self {
        Part::Text(text.into())
    }

    /// The text of a text part.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Part::Text(text) => Some(text),
            _ => None,
        }
    }
}

impl From<String> for Part {
    fn from(text: String) -> Self {
        Part::Text(text)
    }
}

impl From<&str> for Part {
    fn from(text: &str) -> Self {
        Part::Text(text.to_owned())
    }
}

/// A message as a model request carries it: a role and its parts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Who speaks.
    pub role: Role,
    /// What is said.
    pub content: Vec<Part>,
}

impl Message {
    /// A message of one text part.
    pub fn new(role: Role, text: impl Into<String>) -> Self {
        Message { role, content: vec![Part::text(text)] }
    }

    /// A user message of one text part.
    pub fn user(text: impl Into<String>) -> Self {
        Message::new(Role::User, text)
    }

    /// The message's text parts, joined; borrowed when there is exactly one.
    pub fn text(&self) -> Cow<'_, str> {
        join_text(&self.content)
    }
}

impl From<&str> for Message {
    fn from(text: &str) -> Self {
        Message::user(text)
    }
}

impl From<String> for Message {
    fn from(text: String) -> Self {
        Message::user(text)
    }
}

impl From<AssistantMessage> for Message {
    fn from(message: AssistantMessage) -> Self {
        Message { role: Role::Assistant, content: message.content }
    }
}

/// What the model said: text, tool calls, or both. The value of `after_model` and `before_final`,
/// and what a STOP carries.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AssistantMessage {
    /// Text and tool-call parts, in the order the model produced them.
    pub content: Vec<Part>,
}

impl AssistantMessage {
    /// A message of one text part.
    pub fn text(text: impl Into<String>) -> Self {
        AssistantMessage { content: vec![Part::text(text)] }
    }

    /// Adds a tool call.
    pub fn with_tool_call(mut self, call: ToolCall) -> Self {
        self.content.push(Part::ToolCall(call));
        self
    }

    /// The text parts, joined; borrowed when there is exactly one.
    pub fn joined_text(&self) -> Cow<'_, str> {
        join_text(&self.content)
    }

    /// The tool calls, in order.
    pub fn tool_calls(&self) -> impl Iterator<Item = &ToolCall> {
        self.content.iter().filter_map(|part| match part {
            Part::ToolCall(call) => Some(call),
            _ => None,
        })
    }

    /// Whether the model asked for any tool.
    pub fn calls_tools(&self) -> bool {
        self.tool_calls().next().is_some()
    }

    /// Whether the message says nothing: no text (or only empty text) and no tool calls.
    pub fn is_empty(&self) -> bool {
        self.content.iter().all(|part| matches!(part, Part::Text(text) if text.is_empty()))
    }

    /// The id two of the message's tool calls share, if any do: the log pairs each result with
    /// its call by id, so ids are unique within a message.
    pub fn duplicate_call_id(&self) -> Option<&str> {
        // A message calls few tools: comparing each pair beats building a set.
        for (index, part) in self.content.iter().enumerate() {
            let Part::ToolCall(call) = part else { continue };
            for later in &self.content[index + 1..] {
                if let Part::ToolCall(other) = later
                    && other.id == call.id
                {
                    return Some(&call.id);
                }
            }
        }
        None
    }
}

fn join_text(parts: &[Part]) -> Cow<'_, str> {
    let mut texts = parts.iter().filter_map(Part::as_text);
    let Some(first) = texts.next() else {
        return Cow::Borrowed("");
    };
    match texts.next() {
        None => Cow::Borrowed(first),
        Some(second) => {
            let mut joined = format!("{first}{second}");
            texts.for_each(|text| joined.push_str(text));
            Cow::Owned(joined)
        }
    }
}

/// The model's request to run a tool. The value of `before_tool`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// Pairs the call with its result: unique within the step.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments: as the model wrote them, unless a `before_tool` hook edited them.
    pub arguments: serde_json::Value,
}

impl ToolCall {
    /// A tool call.
    pub fn new(
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: serde_json::Value,
    ) -> Self {
        ToolCall { id: id.into(), name: name.into(), arguments }
    }
}

/// The answer to one tool call. The value of `after_tool` and `tool_error`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    /// The [`ToolCall::id`] this answers.
    pub call_id: String,
    /// The tool that was called.
    pub name: String,
    /// What the model reads: the tool's serialized output, or a description of the failure.
    pub output: String,
    /// Why the call did not succeed; `None` for a success. A `tool_error` hook that recovers the
    /// call clears it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ToolFailure>,
}

impl ToolResult {
    /// The result of a call whose tool panicked: the loop and a journal answer it alike.
    #[cold]
    pub(crate) fn panicked(call: &ToolCall, payload: &(dyn std::any::Any + Send)) -> Self {
        let message = crate::support::panic_message(payload);
        ToolResult::failure(call, ToolFailure::Panicked { message })
    }

    /// A successful result.
    pub fn success(call: &ToolCall, output: impl Into<String>) -> Self {
        ToolResult {
            call_id: call.id.clone(),
            name: call.name.clone(),
            output: output.into(),
            error: None,
        }
    }

    /// A failed result; the model reads the failure's description.
    pub fn failure(call: &ToolCall, failure: ToolFailure) -> Self {
        ToolResult {
            call_id: call.id.clone(),
            name: call.name.clone(),
            output: failure.to_string(),
            error: Some(failure),
        }
    }

    /// Whether the call did not succeed (the error flag the model sees).
    pub fn is_error(&self) -> bool {
        self.error.is_some()
    }
}

/// Why a tool call did not produce a successful result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ToolFailure {
    /// The model named a tool this agent does not have.
    UnknownTool {
        /// The tools the agent does have.
        available: Vec<String>,
    },
    /// The arguments did not deserialize into the tool's argument type.
    InvalidArguments {
        /// The deserializer's complaint.
        message: String,
    },
    /// The tool ran and returned an error.
    Failed {
        /// The tool's error, displayed.
        message: String,
    },
    /// The tool panicked.
    Panicked {
        /// The panic's message.
        message: String,
    },
    /// The tool did not return within the conversation's `tool_timeout`; whether it took
    /// effect is not known.
    TimedOut {
        /// The timeout, in milliseconds in the log.
        #[serde(rename = "after_ms", with = "crate::support::millis")]
        after: std::time::Duration,
    },
    /// A `before_tool` hook, or the approver, refused the call; the tool did not run.
    Rejected {
        /// Who refused: a hook's name, or `approver`.
        by: String,
        /// Why.
        reason: String,
    },
    /// The turn ended before the call could run.
    NotRun {
        /// Why the turn ended.
        reason: String,
    },
    /// The turn ended while the call ran, before its tool returned: whether it took effect is
    /// not known.
    Interrupted {
        /// Why the turn ended.
        reason: String,
    },
    /// The tool ran and returned, beside a call whose `after_tool` or `tool_error` hook ended
    /// the turn before this call's hooks settled what it returned: the log does not keep it
    /// (those hooks may be the ones that redact it).
    Withheld {
        /// Why the turn ended.
        reason: String,
    },
}

impl ToolFailure {
    /// Whether the tool was attempted: failures of this kind reach `tool_error` hooks. A refused
    /// or unrun call never reached the tool.
    pub fn was_attempted(&self) -> bool {
        !matches!(self, ToolFailure::Rejected { .. } | ToolFailure::NotRun { .. })
    }
}

impl fmt::Display for ToolFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ToolFailure::UnknownTool { available } if available.is_empty() => {
                write!(f, "unknown tool; this agent has no tools")
            }
            ToolFailure::UnknownTool { available } => {
                write!(f, "unknown tool; available tools: {}", available.join(", "))
            }
            ToolFailure::InvalidArguments { message } => write!(f, "invalid arguments: {message}"),
            ToolFailure::Failed { message } => write!(f, "tool failed: {message}"),
            ToolFailure::Panicked { message } => write!(f, "tool panicked: {message}"),
            ToolFailure::TimedOut { after } => write!(f, "tool did not return within {after:?}"),
            ToolFailure::Rejected { by, reason } => write!(f, "call rejected by {by}: {reason}"),
            ToolFailure::NotRun { reason } => write!(f, "call not run: {reason}"),
            ToolFailure::Interrupted { reason } => {
                write!(f, "call interrupted before the tool returned: {reason}")
            }
            ToolFailure::Withheld { reason } => {
                write!(f, "the tool ran; its result is withheld, the turn having ended: {reason}")
            }
        }
    }
}

/// Content a hook injected for this turn.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Injection {
    /// The hook that injected it.
    pub hook: Cow<'static, str>,
    /// The content; it reaches the model with the user's role.
    pub part: Part,
    /// Whether the hook is durable: its content joins the log as the hook's output.
    #[serde(default)]
    pub durable: bool,
}
