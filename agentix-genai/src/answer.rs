//! A typed answer (`ModelParams::output`) from a provider without native structured output:
//! the request offers a `final_answer` tool whose arguments are the answer's schema, and the
//! model's call of it comes back as the answer's text — the loop never sees the tool.

use agentix::{AssistantMessage, Part, model::ModelRequest, tool::ToolSpec};
use genai::adapter::AdapterKind;

/// The tool a model without native structured output answers through.
pub(crate) const FINAL_ANSWER: &str = "final_answer";

/// Whether `kind` holds the model to an answer's schema itself (through genai): OpenAI's
/// `json_schema`, Gemini's response schema, Anthropic's output format. genai 0.7.2 passes
/// Ollama's `format` a schema for none.
pub(crate) fn native(kind: AdapterKind) -> bool {
    matches!(
        kind,
        AdapterKind::OpenAI
            | AdapterKind::OpenAIResp
            | AdapterKind::Gemini
            | AdapterKind::Anthropic
    )
}

/// Whether `request`'s answer comes through the `final_answer` tool to `kind`.
pub(crate) fn through_tool(request: &ModelRequest, kind: AdapterKind) -> bool {
    request.params.output.is_some() && !native(kind)
}

/// The `final_answer` tool for `request`'s answer, if it comes through one.
pub(crate) fn tool(request: &ModelRequest, kind: AdapterKind) -> Option<ToolSpec> {
    let output = request.params.output.as_ref().filter(|_| !native(kind))?;
    Some(ToolSpec {
        name: FINAL_ANSWER.to_owned(),
        description: format!(
            "Give your final answer ({}) by calling this tool, its arguments the answer; \
             call other tools first if you need them.",
            output.name
        ),
        parameters: output.schema.clone(),
    })
}

/// `message` with its call of `final_answer`, if it has one, made the answer's text (the
/// answer is final: the message's other calls go with it).
pub(crate) fn read(message: &mut AssistantMessage) {
    let answer = message.tool_calls().find(|call| call.name == FINAL_ANSWER);
    if let Some(call) = answer {
        let text = call.arguments.to_string();
        message.content = vec![Part::Text(text)];
    }
}
