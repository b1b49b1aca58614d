//! The shape of a final answer on the wire (`ModelParams::output`): each provider's native
//! structured output, the schema adapted as a tool's is — OpenAI's `json_schema`, strict, on
//! chat completions and the responses API; Gemini's response schema, references inlined;
//! Anthropic's output format — and, for a provider without it (Ollama through genai 0.7.2), a
//! `final_answer` tool whose call comes back as the answer. Strict mode's edge cases: an
//! optional field, an enum, a nested struct. Per provider, the model's first two answers do not
//! read (not JSON; a field missing), and the turn gives the third, parsed, after two retries
//! sent back on the wire.

mod support;

use agentix::prelude::*;
use futures::StreamExt;
use serde_json::{Value, json};
use support::{
    Reply, Server, anthropic_json, gemini_json, ollama_json, ollama_lines, openai_json, refers,
    responses_json,
};

/// An invoice read out of text.
#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(crate = "agentix::serde")]
#[schemars(crate = "agentix::schemars")]
struct Invoice {
    /// Who sent it.
    vendor: String,
    /// What it comes to.
    total: Amount,
    /// When it is due, if it says.
    due: Option<String>,
    /// Paid or not.
    status: Status,
}

#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(crate = "agentix::serde")]
#[schemars(crate = "agentix::schemars")]
struct Amount {
    value: f64,
    currency: String,
}

#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(crate = "agentix::serde", rename_all = "snake_case")]
#[schemars(crate = "agentix::schemars")]
enum Status {
    Paid,
    Open,
}

/// The requests a turn of `spec`, asked for an `Invoice`, sends when the model answers
/// `answers` in order (each made into the provider's reply by `reply`): the first two do not
/// read as an `Invoice`, the third does. The turn gives that one, after two retries — each
/// observed, and each sent back on the wire with the refused answer and why — and every
/// request carries the schema (`has_schema`).
async fn three_answers(
    spec: &str,
    answers: [AssistantMessage; 3],
    reply: impl Fn(&AssistantMessage) -> Reply,
    has_schema: impl Fn(&Value) -> bool,
) -> Vec<Value> {
    let server = Server::start(answers.iter().map(reply).collect()).await;
    let agent = Agent::builder(server.model(spec)).output::<Invoice>().build();
    let withdrawn = std::sync::atomic::AtomicUsize::new(0);
    let observer = |observation: &agentix::observe::Observation<'_>| {
        if let agentix::observe::Observation::Withdrawn {
            hook: Some("the answer's check"), ..
        } = observation
        {
            withdrawn.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    };
    let mut conversation = Conversation::new();
    let invoice = agent
        .turn(&mut conversation, "Invoice: ACME, 12 EUR, open")
        .observe(&observer)
        .answer()
        .await
        .unwrap();
    assert_eq!(invoice, acme());
    assert_eq!(withdrawn.into_inner(), 2, "two retries");
    let sent: Vec<Value> = server.received().iter().map(|request| request.json()).collect();
    assert_eq!(sent.len(), 3);
    assert!(sent.iter().all(&has_schema), "every request carries the schema");
    let second = sent[1].to_string();
    assert!(second.contains("That answer was refused: the answer is not JSON"), "{second}");
    let third = sent[2].to_string();
    assert!(third.contains("missing field `status`"), "{third}");
    // The log keeps one answer: the one that read.
    let answers =
        conversation.log().iter().filter(|entry| matches!(entry, agentix::Entry::Assistant { .. }));
    assert_eq!(answers.count(), 1);
    sent
}

/// Not JSON; then JSON without the status; then the invoice.
fn texts() -> [AssistantMessage; 3] {
    [
        AssistantMessage::text("ACME billed 12 EUR."),
        AssistantMessage::text(
            r#"{"vendor":"ACME","total":{"value":12,"currency":"EUR"},"due":null}"#,
        ),
        AssistantMessage::text(ANSWER),
    ]
}

/// OpenAI's strict form of the `Invoice` schema.
fn assert_strict(schema: &Value) {
    assert!(!refers(schema), "no references: {schema:#}");
    assert_eq!(schema["additionalProperties"], false);
    assert_eq!(schema["required"], json!(["vendor", "total", "due", "status"]));
    assert_eq!(
        schema["properties"]["due"]["type"],
        json!(["string", "null"]),
        "optional: nullable"
    );
    let total = &schema["properties"]["total"];
    assert_eq!(total["additionalProperties"], false, "a nested struct strict too");
    assert_eq!(total["required"], json!(["value", "currency"]));
    assert_eq!(schema["properties"]["status"]["enum"], json!(["paid", "open"]), "{schema:#}");
}

const ANSWER: &str =
    r#"{"vendor":"ACME","total":{"value":12,"currency":"EUR"},"due":null,"status":"open"}"#;

#[tokio::test]
async fn openai_chat_completions_gets_a_strict_json_schema() {
    let reply = |message: &AssistantMessage| Reply::json(openai_json(message, json!({})));
    let has_schema = |sent: &Value| sent["response_format"]["type"] == "json_schema";
    let sent = &three_answers("openai:gpt-4.1-mini", texts(), reply, has_schema).await[0];
    let format = &sent["response_format"];
    assert_eq!(format["type"], "json_schema");
    assert_eq!(format["json_schema"]["name"], "Invoice");
    assert_eq!(format["json_schema"]["strict"], true);
    assert_strict(&format["json_schema"]["schema"]);
}

#[tokio::test]
async fn openai_responses_gets_a_strict_json_schema_as_its_text_format() {
    let usage = json!({ "input_tokens": 1, "output_tokens": 1, "total_tokens": 2 });
    let reply = |message: &AssistantMessage| Reply::json(responses_json(message, usage.clone()));
    let has_schema = |sent: &Value| sent["text"]["format"]["type"] == "json_schema";
    let sent = &three_answers("openai_resp:gpt-5-mini", texts(), reply, has_schema).await[0];
    let format = &sent["text"]["format"];
    assert_eq!(format["type"], "json_schema");
    assert_eq!(format["name"], "Invoice");
    assert_eq!(format["strict"], true);
    assert_strict(&format["schema"]);
}

#[tokio::test]
async fn gemini_gets_a_response_schema_with_its_references_inlined() {
    let reply = |message: &AssistantMessage| Reply::json(gemini_json(message, json!({})));
    let has_schema = |sent: &Value| sent["generationConfig"]["responseJsonSchema"].is_object();
    let sent = &three_answers("gemini:gemini-2.5-flash", texts(), reply, has_schema).await[0];
    let config = &sent["generationConfig"];
    assert_eq!(config["responseMimeType"], "application/json");
    let schema = &config["responseJsonSchema"];
    assert!(!refers(schema), "inlined: {schema:#}");
    assert_eq!(schema["properties"]["total"]["properties"]["currency"]["type"], "string");
    assert_eq!(schema["required"], json!(["vendor", "total", "status"]), "not made strict");
}

#[tokio::test]
async fn anthropic_gets_its_output_format() {
    let usage = json!({ "input_tokens": 1, "output_tokens": 1 });
    let reply = |message: &AssistantMessage| Reply::json(anthropic_json(message, usage.clone()));
    let has_schema = |sent: &Value| sent["output_config"]["format"]["type"] == "json_schema";
    let sent = &three_answers("anthropic:claude-sonnet-4-5", texts(), reply, has_schema).await[0];
    let format = &sent["output_config"]["format"];
    assert_eq!(format["type"], "json_schema");
    assert_eq!(format["schema"]["properties"]["vendor"]["type"], "string", "{format:#}");
}

#[tokio::test]
async fn a_request_without_an_output_shape_carries_none() {
    let server =
        Server::start(vec![Reply::json(openai_json(&AssistantMessage::text("ok"), json!({})))])
            .await;
    let agent = Agent::builder(server.model("openai:gpt-4.1-mini")).build();
    agent.run(&mut Conversation::new(), "hi").await.unwrap();
    assert!(server.received()[0].json().get("response_format").is_none());
}

fn acme() -> Invoice {
    Invoice {
        vendor: "ACME".into(),
        total: Amount { value: 12.0, currency: "EUR".into() },
        due: None,
        status: Status::Open,
    }
}

/// The model's call of `final_answer`, with the invoice as its arguments.
fn answered_by_tool() -> AssistantMessage {
    let arguments: Value = serde_json::from_str(ANSWER).unwrap();
    AssistantMessage::default().with_tool_call(ToolCall::new("c1", "final_answer", arguments))
}

#[tokio::test]
async fn ollama_is_offered_a_final_answer_tool_whose_call_is_the_answer() {
    let server = Server::start(vec![Reply::json(ollama_json(&answered_by_tool(), 1, 1))]).await;
    let agent = Agent::builder(server.model("ollama:llama3.2")).output::<Invoice>().build();
    let mut conversation = Conversation::new();
    let invoice =
        agent.turn(&mut conversation, "Invoice: ACME, 12 EUR, open").answer().await.unwrap();
    assert_eq!(invoice, acme());
    let sent = server.received()[0].json();
    assert!(sent.get("format").is_none(), "no native schema: {sent:#}");
    let tool = &sent["tools"][0]["function"];
    assert_eq!(tool["name"], "final_answer");
    assert_eq!(tool["parameters"]["properties"]["vendor"]["type"], "string");
    // The loop never saw the tool: the log's answer is the invoice's JSON, no call in it.
    let Some(agentix::Entry::Assistant { message, .. }) = conversation.log().last() else {
        panic!()
    };
    assert!(!message.calls_tools());
    assert_eq!(serde_json::from_str::<Invoice>(&message.joined_text()).unwrap(), acme());
}

#[tokio::test]
async fn ollama_retries_an_answer_that_skips_the_tool_or_misfills_it() {
    let misfilled =
        json!({ "vendor": "ACME", "total": { "value": 12, "currency": "EUR" }, "due": null });
    let answers = [
        AssistantMessage::text("ACME billed 12 EUR."),
        AssistantMessage::default().with_tool_call(ToolCall::new("c1", "final_answer", misfilled)),
        answered_by_tool(),
    ];
    let reply = |message: &AssistantMessage| Reply::json(ollama_json(message, 1, 1));
    let has_schema = |sent: &Value| sent["tools"][0]["function"]["name"] == "final_answer";
    three_answers("ollama:llama3.2", answers, reply, has_schema).await;
}

#[tokio::test]
async fn a_streamed_final_answer_call_is_the_answer_too() {
    let server = Server::start(vec![Reply::ndjson(ollama_lines(&answered_by_tool(), 1, 1))]).await;
    let agent = Agent::builder(server.model("ollama:llama3.2")).output::<Invoice>().build();
    let mut conversation = Conversation::new();
    let events: Vec<agentix::StreamEvent> =
        agent.turn(&mut conversation, "Invoice?").stream().collect().await;
    let Some(agentix::StreamEvent::Finished(Ok(message))) = events.last() else {
        panic!("{events:?}")
    };
    assert_eq!(serde_json::from_str::<Invoice>(&message.joined_text()).unwrap(), acme());
    assert!(!events.iter().any(|event| matches!(event, agentix::StreamEvent::ToolCall(_))));
}
