//! Tool schemas as each provider takes them, checked on the wire: OpenAI's strict mode, Gemini's
//! schemas without references, and the schema as it is for the others — an MCP server's tools
//! taking the same path as a native tool's.

mod support;

use std::sync::{Arc, Mutex};

use agentix::prelude::*;
use serde_json::{Value, json};
use support::{
    Reply, Server, anthropic_json, gemini_json, ollama_json, openai_json, refers, responses_json,
};

/// Where to stay. (Derived through agentix's re-exports, as a user without a `schemars` of their
/// own would.)
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(crate = "agentix::serde")]
#[schemars(crate = "agentix::schemars")]
struct Booking {
    /// The city.
    city: String,
    /// How many nights, if the user said.
    nights: Option<u32>,
    /// Guests besides the user.
    #[serde(default)]
    guests: u32,
    /// Where exactly.
    address: Address,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(crate = "agentix::serde")]
#[schemars(crate = "agentix::schemars")]
struct Address {
    street: String,
    zip: Option<String>,
}

/// `book`: keeps what it was asked.
#[derive(Default)]
struct Book {
    booked: Arc<Mutex<Vec<String>>>,
}

impl Tool for Book {
    const NAME: &'static str = "book";
    type Args = Booking;
    type Output = String;
    type Error = std::convert::Infallible;

    fn description(&self) -> &str {
        "Books a room."
    }

    async fn call(&self, args: Booking, _turn: &Turn) -> Result<String, Self::Error> {
        let booked = format!(
            "{} for {:?} nights, {} guests, at {} ({:?})",
            args.city, args.nights, args.guests, args.address.street, args.address.zip
        );
        self.booked.lock().unwrap().push(booked.clone());
        Ok(booked)
    }
}

/// The schema the agent gives the model for `Book`, before any provider's adaptation.
fn own_schema() -> Value {
    agentix::tool::ToolSpec::of(&Book::default()).parameters
}

/// The first request a turn of `spec` sends, answered by `reply`.
async fn first_request(spec: &str, reply: Reply) -> Value {
    let server = Server::start(vec![reply]).await;
    let agent = Agent::builder(server.model(spec)).tool(Book::default()).build();
    agent.run(&mut Conversation::new(), "Book Oslo").await.unwrap();
    server.received()[0].json()
}

/// OpenAI's strict form of the `Booking` schema.
fn assert_strict(parameters: &Value) {
    assert!(!refers(parameters), "no references: {parameters:#}");
    assert_eq!(parameters["additionalProperties"], false);
    assert_eq!(
        parameters["required"],
        json!(["city", "nights", "guests", "address"]),
        "every property required"
    );
    assert_eq!(
        parameters["properties"]["nights"]["type"],
        json!(["integer", "null"]),
        "an optional one nullable"
    );
    assert_eq!(
        parameters["properties"]["guests"]["type"],
        json!(["integer", "null"]),
        "a defaulted one too"
    );
    assert_eq!(parameters["properties"]["city"]["type"], "string", "a required one as it was");
    let address = &parameters["properties"]["address"];
    assert_eq!(address["additionalProperties"], false, "at every level");
    assert_eq!(address["required"], json!(["street", "zip"]));
    assert_eq!(address["properties"]["zip"]["type"], json!(["string", "null"]));
    let said = parameters.to_string();
    assert!(!said.contains("\"default\""), "strict mode refuses `default`: {said}");
    assert!(!said.contains("uint32"), "nor formats it does not know: {said}");
    let guests = parameters["properties"]["guests"]["description"].as_str().unwrap();
    assert!(guests.ends_with("(default: 0)"), "the default is said instead: {guests}");
}

#[tokio::test]
async fn openai_chat_completions_declares_tools_strict() {
    assert!(refers(&own_schema()), "the tool's own schema refers to Address");
    let sent = first_request(
        "openai:gpt-4.1-mini",
        Reply::json(openai_json(&AssistantMessage::text("ok"), json!({}))),
    )
    .await;
    let function = &sent["tools"][0]["function"];
    assert_eq!(function["strict"], true);
    assert_strict(&function["parameters"]);
}

#[tokio::test]
async fn openai_responses_declares_tools_strict() {
    let answer = responses_json(
        &AssistantMessage::text("ok"),
        json!({ "input_tokens": 1, "output_tokens": 1, "total_tokens": 2 }),
    );
    let sent = first_request("openai_resp:gpt-5-mini", Reply::json(answer)).await;
    assert_eq!(sent["tools"][0]["strict"], true);
    assert_strict(&sent["tools"][0]["parameters"]);
}

#[tokio::test]
async fn gemini_gets_its_references_inlined() {
    let sent = first_request(
        "gemini:gemini-2.5-flash",
        Reply::json(gemini_json(&AssistantMessage::text("ok"), json!({}))),
    )
    .await;
    let parameters = &sent["tools"][0]["functionDeclarations"][0]["parametersJsonSchema"];
    assert!(!refers(parameters), "no references: {parameters:#}");
    assert!(parameters.get("$defs").is_none());
    let address = &parameters["properties"]["address"];
    assert_eq!(
        address["properties"]["street"]["type"], "string",
        "the definition in place of its reference"
    );
    assert_eq!(address["required"], json!(["street"]));
    assert_eq!(parameters["required"], json!(["city", "address"]), "not made strict");
}

#[tokio::test]
async fn anthropic_and_ollama_take_the_schema_as_it_is() {
    let answer = anthropic_json(
        &AssistantMessage::text("ok"),
        json!({ "input_tokens": 1, "output_tokens": 1 }),
    );
    let sent = first_request("anthropic:claude-sonnet-4-5", Reply::json(answer)).await;
    assert_eq!(sent["tools"][0]["input_schema"], own_schema());
    let sent = first_request(
        "ollama:llama3.2",
        Reply::json(ollama_json(&AssistantMessage::text("ok"), 1, 1)),
    )
    .await;
    assert_eq!(sent["tools"][0]["function"]["parameters"], own_schema());
}

/// The model's answers to a booking under strict mode: a call of `tool` with every property,
/// null for those it leaves out (`guests` has a default, not an `Option`, and would not read a
/// null), then its final answer.
fn null_filled_call(tool: &str) -> Vec<Reply> {
    let arguments = json!({ "city": "Oslo", "nights": null, "guests": null, "address": { "street": "Karl Johans gate 1", "zip": null } });
    let call = AssistantMessage::default().with_tool_call(ToolCall::new("call_1", tool, arguments));
    vec![
        Reply::json(openai_json(&call, json!({}))),
        Reply::json(openai_json(&AssistantMessage::text("Booked."), json!({}))),
    ]
}

#[tokio::test]
async fn the_nulls_strict_mode_makes_the_model_send_do_not_reach_the_tool() {
    let server = Server::start(null_filled_call("book")).await;
    let book = Book::default();
    let booked = Arc::clone(&book.booked);
    let agent = Agent::builder(server.model("openai:gpt-4.1-mini")).tool(book).build();
    let mut conversation = Conversation::new();
    let reply = agent.run(&mut conversation, "Book Oslo").await.unwrap();
    assert_eq!(reply.joined_text(), "Booked.");
    assert_eq!(
        *booked.lock().unwrap(),
        ["Oslo for None nights, 0 guests, at Karl Johans gate 1 (None)"]
    );
    // The log keeps the call as the tool read it.
    let logged = conversation.log().iter().find_map(|entry| match entry {
        agentix::Entry::Assistant { message, .. } => message.tool_calls().next().cloned(),
        _ => None,
    });
    assert_eq!(
        logged.unwrap().arguments,
        json!({ "city": "Oslo", "address": { "street": "Karl Johans gate 1" } })
    );
}

/// Labels for a note: a map, which strict mode cannot describe.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(crate = "agentix::serde")]
#[schemars(crate = "agentix::schemars")]
struct Labels {
    labels: std::collections::BTreeMap<String, String>,
}

struct Label;

impl Tool for Label {
    const NAME: &'static str = "label";
    type Args = Labels;
    type Output = String;
    type Error = std::convert::Infallible;

    fn description(&self) -> &str {
        "Labels a note."
    }

    async fn call(&self, args: Labels, _turn: &Turn) -> Result<String, Self::Error> {
        Ok(format!("{} labels", args.labels.len()))
    }
}

#[tokio::test]
async fn a_tool_strict_mode_cannot_describe_goes_to_openai_as_it_is() {
    let server =
        Server::start(vec![Reply::json(openai_json(&AssistantMessage::text("ok"), json!({})))])
            .await;
    let agent = Agent::builder(server.model("openai:gpt-4.1-mini"))
        .tool(Label)
        .tool(Book::default())
        .build();
    agent.run(&mut Conversation::new(), "Label it").await.unwrap();
    let tools = server.received()[0].json()["tools"].clone();
    let label = &tools[0]["function"];
    assert_eq!(label["name"], "label");
    assert_eq!(label["strict"], false, "not strict");
    assert_eq!(label["parameters"], agentix::tool::ToolSpec::of(&Label).parameters, "and as it is");
    assert_eq!(tools[1]["function"]["strict"], true, "the other tool is strict still");
}

/// `book`, served by an agent over MCP (in this process, on an in-memory pipe), reached as the
/// MCP server `hotel`: its schema comes to the model from the server's `tools/list`.
async fn booking_over_mcp(book: Book) -> agentix_mcp::McpTools {
    let served = Agent::builder(agentix_mcp::NoModel).tool(book).build();
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    tokio::spawn(agentix_mcp::McpService::new(served).serve_with(theirs));
    agentix_mcp::McpServer::named("hotel").connect_with(ours, "a pipe").await.unwrap()
}

#[tokio::test]
async fn an_mcp_servers_tool_schema_is_adapted_per_provider_as_a_native_ones_is() {
    let server =
        Server::start(vec![Reply::json(openai_json(&AssistantMessage::text("ok"), json!({})))])
            .await;
    let tools = booking_over_mcp(Book::default()).await;
    let agent = Agent::builder(server.model("openai:gpt-4.1-mini")).tools(tools).build();
    agent.run(&mut Conversation::new(), "Book Oslo").await.unwrap();
    let sent = server.received()[0].json();
    let function = &sent["tools"][0]["function"];
    assert_eq!(function["name"], "hotel__book");
    assert_eq!(function["strict"], true);
    assert_strict(&function["parameters"]);

    let server =
        Server::start(vec![Reply::json(gemini_json(&AssistantMessage::text("ok"), json!({})))])
            .await;
    let tools = booking_over_mcp(Book::default()).await;
    let agent = Agent::builder(server.model("gemini:gemini-2.5-flash")).tools(tools).build();
    agent.run(&mut Conversation::new(), "Book Oslo").await.unwrap();
    let sent = server.received()[0].json();
    let parameters = &sent["tools"][0]["functionDeclarations"][0]["parametersJsonSchema"];
    assert!(!refers(parameters), "inlined: {parameters:#}");
    assert_eq!(parameters["properties"]["address"]["properties"]["street"]["type"], "string");
}

#[tokio::test]
async fn the_nulls_strict_mode_makes_the_model_send_do_not_reach_an_mcp_servers_tool() {
    let server = Server::start(null_filled_call("hotel__book")).await;
    let book = Book::default();
    let booked = Arc::clone(&book.booked);
    let tools = booking_over_mcp(book).await;
    let agent = Agent::builder(server.model("openai:gpt-4.1-mini")).tools(tools).build();
    let reply = agent.run(&mut Conversation::new(), "Book Oslo").await.unwrap();
    assert_eq!(reply.joined_text(), "Booked.");
    assert_eq!(
        *booked.lock().unwrap(),
        ["Oslo for None nights, 0 guests, at Karl Johans gate 1 (None)"]
    );
}
