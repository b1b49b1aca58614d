//! Between agentix's request and answer and genai's: messages, tool calls both ways, the system
//! prompt, sampling parameters, usage, and the prompt cache's breakpoints.

use agentix::{
    AssistantMessage, Message, Part, ToolCall,
    message::Role,
    model::{ModelParams, ModelRequest, Usage},
};
use genai::adapter::AdapterKind;
use genai::chat::{
    CacheControl, ChatMessage, ChatOptions, ChatRequest, ChatResponseFormat, ChatRole, ContentPart,
    CustomPart, JsonSpec, MessageContent, MessageOptions, Tool, ToolResponse,
};
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::json;

use crate::schema;

/// How a provider is asked: which one, and whether it takes cache breakpoints.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Dialect {
    pub(crate) kind: AdapterKind,
}

impl Dialect {
    /// Whether requests carry explicit cache breakpoints: Anthropic's caching is opt-in, per
    /// block; OpenAI, Gemini and the rest cache a repeated prefix on their own.
    fn marks_cache(self) -> bool {
        matches!(self.kind, AdapterKind::Anthropic)
    }
}

/// The genai request for `request`: `[system, history…, the turn…]`, with tools. For a provider
/// whose cache is opt-in, three cache breakpoints (of the four Anthropic allows): the system
/// prompt, the last message of the stable history (what the next turn repeats, whatever this
/// one injected), and the last message (what the turn's next step repeats). Every message is
/// written as content blocks, so that a breakpoint moving to a later message leaves the bytes
/// before it as they were.
pub(crate) fn chat_request(request: &ModelRequest, dialect: Dialect) -> ChatRequest {
    let marks = dialect.marks_cache();
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    let mut chat = ChatRequest::default();
    if let Some(system) = &request.system {
        if marks {
            let system = ChatMessage::system(system.to_string());
            messages.push(system.with_options(
                MessageOptions::default().with_cache_control(CacheControl::Ephemeral),
            ));
        } else {
            chat = chat.with_system(system.to_string());
        }
    }
    let last = request.messages.len();
    for (index, message) in request.messages.iter().enumerate() {
        let mut chat_message = chat_message(message, marks);
        // The end of the earlier turns, which the next turn repeats; and the end of the request,
        // which the turn's next step repeats (a tool loop reads its growing tail from the cache).
        if marks && (index + 1 == request.history || index + 1 == last) {
            chat_message = chat_message.with_options(
                MessageOptions::default().with_cache_control(CacheControl::Ephemeral),
            );
        }
        messages.push(chat_message);
    }
    chat.messages = messages;
    let final_answer = crate::answer::tool(request, dialect.kind);
    if !request.tools.is_empty() || final_answer.is_some() {
        let tools = request.tools.iter().chain(&final_answer).map(|spec| {
            let (schema, strict) = schema::for_provider(&spec.parameters, dialect.kind);
            let mut tool = Tool::new(spec.name.clone())
                .with_description(spec.description.clone())
                .with_schema(schema);
            if strict {
                tool = tool.with_strict(true);
            }
            tool
        });
        chat = chat.with_tools(tools);
    }
    chat
}

/// One message, as genai writes it. `blocks`: text as content blocks rather than a plain string
/// (but for a system message, whose text genai moves into the request's system blocks).
fn chat_message(message: &Message, blocks: bool) -> ChatMessage {
    let blocks = blocks && message.role != Role::System;
    let text = |text: &str| {
        if blocks {
            ContentPart::Custom(CustomPart {
                model_iden: None,
                data: json!({ "type": "text", "text": text }),
            })
        } else {
            ContentPart::Text(text.to_owned())
        }
    };
    let parts: Vec<ContentPart> = message
        .content
        .iter()
        .map(|part| match part {
            Part::Text(body) => text(body),
            Part::ToolCall(call) => ContentPart::ToolCall(genai::chat::ToolCall {
                call_id: call.id.clone(),
                fn_name: call.name.clone(),
                fn_arguments: call.arguments.clone(),
                thought_signatures: None,
            }),
            Part::ToolResult(result) => ContentPart::ToolResponse(ToolResponse {
                call_id: result.call_id.clone(),
                fn_name: Some(result.name.clone()),
                content: result.output.clone(),
            }),
        })
        .collect();
    let role = match message.role {
        Role::System => ChatRole::System,
        Role::User => ChatRole::User,
        Role::Assistant => ChatRole::Assistant,
        Role::Tool => ChatRole::Tool,
    };
    ChatMessage::new(role, MessageContent::from_parts(parts))
}

/// The options for one call: the request's sampling parameters, the shape of its answer (the
/// provider's native structured output, its schema adapted as a tool's is for `kind`), and what
/// to capture of a stream (its usage and whole tool calls, reassembled from their fragments).
pub(crate) fn chat_options(
    base: &ChatOptions,
    params: &ModelParams,
    kind: AdapterKind,
) -> ChatOptions {
    let mut options = base
        .clone()
        .with_capture_usage(true)
        .with_capture_tool_calls(true)
        .with_capture_content(true);
    if let Some(temperature) = params.temperature {
        options = options.with_temperature(f64::from(temperature));
    }
    if let Some(max_tokens) = params.max_tokens {
        options = options.with_max_tokens(max_tokens);
    }
    if let Some(budget) = params.thinking_budget {
        options = options.with_reasoning_effort(genai::chat::ReasoningEffort::Budget(budget));
    }
    if let Some(output) = params.output.as_ref().filter(|_| crate::answer::native(kind)) {
        let (schema, _) = schema::for_provider(&output.schema, kind);
        options = options.with_response_format(ChatResponseFormat::JsonSpec(JsonSpec::new(
            output.name.clone(),
            schema,
        )));
    }
    options
}

/// The answer genai read: its text in order, then its tool calls, each made agentix's by `call`.
pub(crate) fn assistant_message(
    content: MessageContent,
    mut call: impl FnMut(genai::chat::ToolCall) -> ToolCall,
) -> AssistantMessage {
    let mut message = AssistantMessage::default();
    let mut text = String::new();
    let mut calls = Vec::new();
    for part in content {
        match part {
            ContentPart::Text(piece) => text.push_str(&piece),
            ContentPart::ToolCall(made) => calls.push(call(made)),
            _ => {}
        }
    }
    if !text.is_empty() {
        message.content.push(Part::Text(text));
    }
    message.content.extend(calls.into_iter().map(Part::ToolCall));
    message
}

/// Ids for the calls of a provider that gives them none (Gemini). genai makes one up,
/// `call#NAME#N`, numbered from 0 in each response — or in each event of a stream, so two calls
/// of one answer can share it. The adapter renumbers them from a counter of its own, keeping the
/// form genai knows (it sends such ids back as no id, and Gemini matches answers to calls by
/// their order).
#[derive(Debug, Default)]
pub(crate) struct CallIds {
    next: AtomicU64,
}

impl CallIds {
    pub(crate) fn tool_call(&self, call: genai::chat::ToolCall) -> ToolCall {
        let id = match made_up(&call.call_id) {
            Some(name) => {
                format!("call#{name}#{}", self.next.fetch_add(1, Ordering::Relaxed))
            }
            None => call.call_id,
        };
        ToolCall::new(id, call.fn_name, call.fn_arguments)
    }
}

/// The tool name in an id genai made up (`call#NAME#N`).
fn made_up(id: &str) -> Option<&str> {
    let (name, number) = id.strip_prefix("call#")?.rsplit_once('#')?;
    (!name.is_empty() && !number.is_empty() && number.bytes().all(|byte| byte.is_ascii_digit()))
        .then_some(name)
}

/// The usage a provider reported, cache reads and writes included.
pub(crate) fn usage(usage: &genai::chat::Usage) -> Usage {
    let count =
        |tokens: Option<i32>| tokens.and_then(|tokens| u32::try_from(tokens).ok()).unwrap_or(0);
    let details = usage.prompt_tokens_details.as_ref();
    Usage {
        input_tokens: count(usage.prompt_tokens),
        output_tokens: count(usage.completion_tokens),
        cache_read_tokens: count(details.and_then(|details| details.cached_tokens)),
        cache_write_tokens: count(details.and_then(|details| details.cache_creation_tokens)),
    }
}
