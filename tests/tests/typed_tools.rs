//! `#[tool]`: the tool the model is shown (name, description, the schema of its parameters) and
//! the tool the agent runs (arguments read from the model's JSON, the output or failure it reads
//! back), through the real agent loop.

use agentix::prelude::*;
use agentix::{ToolFailure, ToolSpec};
use serde_json::json;

/// Current weather for a city.
///
/// Second paragraph, for the model too.
#[tool]
async fn get_weather(
    /// The city, as the user wrote it.
    city: String,
    /// Degrees Fahrenheit rather than Celsius.
    fahrenheit: Option<bool>,
) -> Result<String, String> {
    if city.is_empty() {
        return Err("no city given".to_owned());
    }
    let unit = if fahrenheit == Some(true) { "F" } else { "C" };
    Ok(format!("sunny in {city}, 21{unit}"))
}

/// Where the user is, for tools that need it.
#[derive(Clone, Debug)]
struct Home(String);

/// Adds two numbers, and says where it ran.
#[tool(name = "add")]
async fn sum(
    turn: &Turn,
    /// The first.
    a: i64,
    /// The second.
    #[serde(rename = "second")]
    b: i64,
) -> Sum {
    let home = turn.scope().resource::<Home>().map_or("nowhere".to_owned(), |home| home.0.clone());
    Sum { total: a + b, at: home }
}

/// What `add` answers.
#[derive(Serialize)]
struct Sum {
    total: i64,
    at: String,
}

/// Search arguments, a struct of the user's own.
#[derive(Deserialize, Serialize, JsonSchema)]
struct Query {
    /// What to look for.
    text: String,
    /// How many results at most.
    limit: u8,
}

/// Searches the notes.
#[tool]
async fn search(args: Query) -> Vec<String> {
    (0..args.limit).map(|n| format!("{} #{n}", args.text)).collect()
}

#[test]
fn the_model_sees_the_name_the_doc_comment_and_a_schema_of_the_parameters() {
    let spec = ToolSpec::of(&get_weather());
    assert_eq!(spec.name, "get_weather");
    assert_eq!(
        spec.description,
        "Current weather for a city.\n\nSecond paragraph, for the model too."
    );
    let schema = &spec.parameters;
    assert_eq!(schema["type"], "object");
    assert_eq!(schema.get("description"), None, "the tool has the description, once");
    assert_eq!(schema["additionalProperties"], false, "unknown fields are refused: {schema}");
    assert_eq!(schema["required"], json!(["city"]), "an Option may be left out: {schema}");
    assert_eq!(schema["properties"]["city"]["type"], "string");
    assert_eq!(schema["properties"]["city"]["description"], "The city, as the user wrote it.");
    assert_eq!(
        schema["properties"]["fahrenheit"]["description"],
        "Degrees Fahrenheit rather than Celsius."
    );

    let add = ToolSpec::of(&sum());
    assert_eq!(add.name, "add", "name = overrides the function's name");
    let properties = add.parameters["properties"].as_object().unwrap();
    assert_eq!(properties.keys().collect::<Vec<_>>(), ["a", "second"], "the turn is no argument");
    assert_eq!(properties["second"]["description"], "The second.");

    let query = ToolSpec::of(&search());
    assert_eq!(query.parameters["properties"]["limit"]["description"], "How many results at most.");
    assert_eq!(query.parameters["required"], json!(["text", "limit"]));
}

#[tokio::test]
async fn the_agent_runs_a_tool_with_the_arguments_the_model_sent() {
    let model = ScriptedModel::new()
        .tool_calls([
            ("get_weather", json!({ "city": "Oslo" })),
            ("get_weather", json!({ "city": "Oslo", "fahrenheit": true })),
            ("get_weather", json!({ "city": "" })),
            ("add", json!({ "a": 2, "second": 3 })),
            ("search", json!({ "text": "rust", "limit": 2 })),
        ])
        .text("done");
    let agent = Agent::builder(&model).tool(get_weather).tool(sum).tool(search).build();
    let mut conversation = Conversation::new();
    conversation.scope_mut().insert_resource(Home("Bergen".to_owned()));
    agent.run(&mut conversation, "go").await.unwrap();
    let results: Vec<ToolResult> =
        model.requests().last().unwrap().tool_results().cloned().collect();
    let outputs: Vec<&str> = results.iter().map(|result| result.output.as_str()).collect();
    assert_eq!(
        outputs,
        [
            "sunny in Oslo, 21C",
            "sunny in Oslo, 21F",
            "tool failed: no city given",
            r#"{"total":5,"at":"Bergen"}"#,
            r#"["rust #0","rust #1"]"#,
        ]
    );
    assert_eq!(
        results[2].error,
        Some(ToolFailure::Failed { message: "no city given".to_owned() }),
        "an Err is the tool's failure"
    );
    assert!(results.iter().enumerate().all(|(n, result)| n == 2 || !result.is_error()));
}

#[tokio::test]
async fn arguments_the_schema_does_not_allow_never_reach_the_tool() {
    let model = ScriptedModel::new()
        .tool_calls([
            ("get_weather", json!({ "city": "Oslo", "country": "NO" })),
            ("get_weather", json!({ "fahrenheit": true })),
            ("add", json!({ "a": 2, "b": 3 })),
            ("search", json!({ "text": "rust", "limit": 300 })),
        ])
        .text("done");
    let agent = Agent::builder(&model).tool(get_weather).tool(sum).tool(search).build();
    let mut conversation = Conversation::new();
    agent.run(&mut conversation, "go").await.unwrap();
    let results: Vec<ToolResult> =
        model.requests().last().unwrap().tool_results().cloned().collect();
    let complaints: Vec<String> = results
        .iter()
        .map(|result| match &result.error {
            Some(ToolFailure::InvalidArguments { message }) => message.clone(),
            other => panic!("expected invalid arguments, got {other:?}"),
        })
        .collect();
    assert!(complaints[0].contains("unknown field `country`"), "{}", complaints[0]);
    assert!(complaints[1].contains("missing field `city`"), "{}", complaints[1]);
    assert!(complaints[2].contains("unknown field `b`"), "the renamed field: {}", complaints[2]);
    assert!(complaints[3].contains("300"), "{}", complaints[3]);
}

#[tokio::test]
async fn the_function_stays_callable() {
    assert_eq!(get_weather::call("Rome".to_owned(), None).await.unwrap(), "sunny in Rome, 21C");
    let args: GetWeatherArgs = serde_json::from_value(json!({ "city": "Rome" })).unwrap();
    assert_eq!(args.city, "Rome");
    assert_eq!(args.fahrenheit, None);
    assert_eq!(
        serde_json::to_value(&args).unwrap(),
        json!({ "city": "Rome" }),
        "a left-out Option stays out when the arguments are written back"
    );
}
