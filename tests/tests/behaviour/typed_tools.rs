//! `#[tool]`: the tool the model is shown (name, description, the schema of its parameters) and
//! the tool the agent runs (arguments read from the model's JSON, the output or failure it reads
//! back), through the real agent loop.

use agentix::prelude::*;
use agentix::{Part, message::ToolFailure, tool::ToolSpec};
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

/// A number the model writes as text.
mod number_as_text {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(value: &u32, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&value.to_string())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u32, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

fn two() -> u32 {
    2
}

/// Pads a text, with the parameters' own serde and schemars attributes.
#[tool]
#[doc(alias = "indent")]
async fn pad(
    /// The text.
    text: String,
    /// How many times to repeat the padding.
    #[serde(default = "two")]
    times: u32,
    /// The padding's width, as text.
    #[serde(with = "number_as_text")]
    #[schemars(with = "String")]
    width: u32,
    /// A prefix, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    prefix: Option<String>,
) -> String {
    let padding = " ".repeat((times * width) as usize);
    format!("{}{padding}{text}", prefix.unwrap_or_default())
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

/// The tool results of the model's last request: what it read back.
fn last_results(model: &ScriptedModel) -> Vec<ToolResult> {
    model.requests().last().unwrap().tool_results().cloned().collect()
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
    let results = last_results(&model);
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
async fn a_parameters_own_serde_and_schemars_attributes_are_the_ones_used() {
    let spec = ToolSpec::of(&pad());
    assert_eq!(spec.parameters["properties"]["width"]["type"], "string", "schemars(with)");
    assert_eq!(spec.parameters["required"], json!(["text", "width"]), "serde(default)");
    let model = ScriptedModel::new()
        .tool_calls([
            ("pad", json!({ "text": "a", "width": "1" })),
            ("pad", json!({ "text": "b", "width": "2", "times": 1, "prefix": ">" })),
            ("pad", json!({ "text": "c", "width": 3 })),
        ])
        .text("done");
    let agent = Agent::builder(&model).tool(pad).build();
    agent.run(&mut Conversation::new(), "go").await.unwrap();
    let results = last_results(&model);
    assert_eq!(results[0].output, "  a");
    assert_eq!(results[1].output, ">  b");
    assert!(
        matches!(&results[2].error, Some(ToolFailure::InvalidArguments { message }) if message.contains("string")),
        "the field's own deserializer ran: {:?}",
        results[2]
    );
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
    let results = last_results(&model);
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

/// Keeps every weather lookup in Norway, whatever city the model asked for.
#[hook(before_tool, tool = get_weather)]
async fn stay_in_norway(args: &mut GetWeatherArgs) {
    if args.city != "Oslo" && args.city != "Bergen" {
        args.city = "Oslo".to_owned();
    }
    args.fahrenheit = Some(false);
}

/// Refuses to look up the weather of a city the user did not name.
#[hook(before_tool, tool = get_weather, when = asks_for_rome)]
async fn no_rome(_args: &GetWeatherArgs, turn: &mut Turn) -> Verdict<BeforeTool> {
    turn.scope_mut().insert(Refusals(1));
    Verdict::reject("not Rome")
}

fn asks_for_rome(args: &GetWeatherArgs, _turn: &Turn) -> bool {
    args.city == "Rome"
}

/// How many calls `no_rome` refused.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
struct Refusals(u32);

impl agentix::scope::ScopeValue for Refusals {
    const KEY: &'static str = "refusals";
}

/// Reads every call, of every tool.
#[hook(before_tool)]
async fn sees_every_call(call: &ToolCall, turn: &mut Turn) {
    let seen = turn.scope().get::<Seen>().map_or(0, |seen| seen.0);
    let _ = call;
    turn.scope_mut().insert(Seen(seen + 1));
}

/// How many calls `sees_every_call` saw.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
struct Seen(u32);

impl agentix::scope::ScopeValue for Seen {
    const KEY: &'static str = "seen";
}

/// Every hook decision the observer heard of, as `event hook`.
#[derive(Default)]
struct Heard(std::sync::Mutex<Vec<String>>);

impl agentix::Observer for Heard {
    fn observe(&self, observation: &agentix::observe::Observation<'_>) {
        if let agentix::observe::Observation::Hook { event, hook, .. } = observation {
            self.0.lock().unwrap().push(format!("{event} {hook}"));
        }
    }
}

#[tokio::test]
async fn a_per_tool_hook_edits_its_tools_typed_arguments_and_the_log_records_the_edit() {
    let model = ScriptedModel::new()
        .tool_calls([
            ("get_weather", json!({ "city": "Paris", "fahrenheit": true })),
            ("add", json!({ "a": 1, "second": 2 })),
            ("get_weather", json!({ "city": "Bergen" })),
            ("search", json!({ "text": "Paris", "limit": 1 })),
        ])
        .text("done");
    let agent = Agent::builder(&model)
        .tool(get_weather)
        .tool(sum)
        .tool(search)
        .hook(sees_every_call)
        .hook(stay_in_norway)
        .build();
    let mut conversation = Conversation::new();
    let heard = Heard::default();
    agent.turn(&mut conversation, "go").observe(&heard).await.unwrap();

    let results = last_results(&model);
    let outputs: Vec<&str> = results.iter().map(|result| result.output.as_str()).collect();
    assert_eq!(
        outputs,
        [
            "sunny in Oslo, 21C",
            r#"{"total":3,"at":"nowhere"}"#,
            "sunny in Bergen, 21C",
            r#"["Paris #0"]"#
        ],
        "only get_weather's calls were edited"
    );
    let logged: Vec<&ToolCall> = conversation
        .log()
        .iter()
        .filter_map(|entry| match entry {
            Entry::Assistant { message, .. } => Some(message.tool_calls()),
            _ => None,
        })
        .flatten()
        .collect();
    assert_eq!(logged[0].arguments, json!({ "city": "Oslo", "fahrenheit": false }), "as edited");
    assert_eq!(logged[1].arguments, json!({ "a": 1, "second": 2 }), "another tool's, as sent");
    assert_eq!(logged[2].arguments, json!({ "city": "Bergen", "fahrenheit": false }));
    assert_eq!(
        conversation.scope().get::<Seen>(),
        Some(&Seen(4)),
        "a hook without tool = sees all"
    );
    let heard = heard.0.into_inner().unwrap();
    let per_tool: Vec<&String> =
        heard.iter().filter(|line| line.contains("stay_in_norway")).collect();
    assert_eq!(per_tool.len(), 2, "other tools' calls pass it by without a trace: {heard:?}");
}

#[tokio::test]
async fn a_per_tool_hook_can_refuse_and_reads_its_when_condition_typed() {
    let model = ScriptedModel::new()
        .tool_calls([
            ("get_weather", json!({ "city": "Rome", "fahrenheit": null })),
            ("get_weather", json!({ "city": "Oslo", "fahrenheit": null })),
        ])
        .text("done");
    let agent = Agent::builder(&model).tool(get_weather).hook(no_rome).build();
    let mut conversation = Conversation::new();
    agent.run(&mut conversation, "go").await.unwrap();
    let results = last_results(&model);
    assert_eq!(
        results[0].error,
        Some(ToolFailure::Rejected { by: "no_rome".to_owned(), reason: "not Rome".to_owned() })
    );
    assert_eq!(results[1].output, "sunny in Oslo, 21C");
    assert_eq!(conversation.scope().get::<Refusals>(), Some(&Refusals(1)));
    // A hook that takes the arguments by shared reference leaves the call as the model sent it.
    let Entry::Assistant { message, .. } = &conversation.log()[1] else {
        panic!("{:?}", conversation.log())
    };
    let calls: Vec<&ToolCall> = message.tool_calls().collect();
    assert_eq!(calls[1].arguments, json!({ "city": "Oslo", "fahrenheit": null }));
}

#[tokio::test]
async fn arguments_that_do_not_fit_pass_a_per_tool_hook_by_and_the_tool_refuses_them() {
    let model =
        ScriptedModel::new().tool_call("get_weather", json!({ "town": "Paris" })).text("done");
    let agent = Agent::builder(&model).tool(get_weather).hook(stay_in_norway).build();
    let mut conversation = Conversation::new();
    agent.run(&mut conversation, "go").await.unwrap();
    let result = last_results(&model).remove(0);
    assert!(
        matches!(&result.error, Some(ToolFailure::InvalidArguments { message }) if message.contains("town")),
        "{result:?}"
    );
}

/// Keeps the first result of a search, and says how many there were.
#[hook(after_tool, tool = search)]
async fn first_result_only(results: &mut Vec<String>, turn: &Turn) {
    let _ = turn.scope();
    let total = results.len();
    results.truncate(1);
    results.push(format!("({total} in all)"));
}

/// Explains a failed weather lookup to the model.
#[hook(tool_error, tool = get_weather)]
async fn explain(error: &mut String) {
    error.push_str(": ask the user which city they mean");
}

/// Ends the turn on a sum that is too large.
#[hook(after_tool, tool = sum)]
async fn no_large_sums(sum: &Sum) -> Verdict<AfterTool> {
    if sum.total > 100 { Verdict::halt("too large") } else { Verdict::Continue }
}

/// Panics on a sum of zero.
#[hook(after_tool, tool = sum)]
async fn no_zero(sum: &Sum) {
    assert_ne!(sum.total, 0, "zero");
}

/// Records the text every successful result reaches the after_tool hooks with.
#[hook(after_tool)]
async fn rendered(result: &ToolResult, turn: &mut Turn) {
    let mut seen = turn.scope().get::<Rendered>().cloned().unwrap_or(Rendered(Vec::new()));
    seen.0.push(result.output.clone());
    turn.scope_mut().insert(seen);
}

/// What `rendered` saw.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
struct Rendered(Vec<String>);

impl agentix::scope::ScopeValue for Rendered {
    const KEY: &'static str = "rendered";
}

#[tokio::test]
async fn per_tool_result_hooks_edit_the_typed_output_and_error_before_the_model_reads_them() {
    let model = ScriptedModel::new()
        .tool_calls([
            ("search", json!({ "text": "rust", "limit": 3 })),
            ("get_weather", json!({ "city": "" })),
            ("get_weather", json!({ "city": "Oslo" })),
        ])
        .text("done");
    let agent = Agent::builder(&model)
        .tool(get_weather)
        .tool(search)
        .hook(first_result_only)
        .hook(explain)
        .hook(rendered)
        .build();
    let mut conversation = Conversation::new();
    agent.run(&mut conversation, "go").await.unwrap();
    let results = last_results(&model);
    assert_eq!(results[0].output, r#"["rust #0","(3 in all)"]"#);
    assert_eq!(
        results[1].error,
        Some(ToolFailure::Failed {
            message: "no city given: ask the user which city they mean".to_owned()
        })
    );
    assert_eq!(results[2].output, "sunny in Oslo, 21C", "another call of the tool, untouched");
    assert_eq!(
        conversation.scope().get::<Rendered>(),
        Some(&Rendered(vec![results[0].output.clone(), results[2].output.clone()])),
        "a hook on every call's result sees the rendered text after the per-tool hooks"
    );
}

#[tokio::test]
async fn a_per_tool_result_hook_that_halts_or_panics_ends_the_turn_and_the_call_stays_logged() {
    for (a, hook, event) in [(200, "no_large_sums", "halted"), (0, "no_zero", "panicked")] {
        let model = ScriptedModel::new()
            .tool_calls([
                ("add", json!({ "a": a, "second": 0 })),
                ("search", json!({ "text": "x", "limit": 1 })),
            ])
            .text("done");
        let agent =
            Agent::builder(&model).tool(sum).tool(search).hook(no_large_sums).hook(no_zero).build();
        let mut conversation = Conversation::new();
        let error = agent.run(&mut conversation, "go").await.unwrap_err();
        match (&error, event) {
            (agentix::Error::Halted { event, hook: by, reason }, "halted") => {
                assert_eq!(
                    (*event, *by, reason.as_str()),
                    (agentix::event::EventKind::AfterTool, hook, "too large")
                );
            }
            (agentix::Error::HookPanicked { event, hook: by, message }, "panicked") => {
                assert_eq!((*event, *by), (agentix::event::EventKind::AfterTool, hook));
                assert!(message.contains("zero"), "{message}");
            }
            other => panic!("{other:?}"),
        }
        let results = conversation
            .log()
            .iter()
            .find_map(|entry| match entry {
                Entry::ToolResults { results, .. } => Some(results.clone()),
                _ => None,
            })
            .expect("the step is logged");
        assert_eq!(results.len(), 2, "every call answered");
        assert!(!results[0].is_error(), "the tool ran, and is logged as run: {:?}", results[0]);
        assert!(results[0].output.contains(&format!("\"total\":{a}")), "{:?}", results[0]);
        assert!(
            matches!(results[1].error, Some(ToolFailure::NotRun { .. })),
            "the call after it did not run: {:?}",
            results[1]
        );
    }
}

/// Sends calls that ask for a city to `get_weather`, and sums to `add`, whatever tool the model
/// named: a hook without `tool =` may rename a call.
#[hook(before_tool)]
async fn reroute(call: &mut ToolCall) {
    if call.arguments.get("city").is_some() {
        call.name = "get_weather".to_owned();
    } else if call.arguments.get("second").is_some() {
        call.name = "add".to_owned();
    }
}

#[tokio::test]
async fn a_per_tool_hook_runs_on_the_tool_the_call_names_after_earlier_hooks_renamed_it() {
    let model = ScriptedModel::new()
        .tool_calls([
            // Renamed from another tool of the set, and from a tool the set does not have:
            // both reach `stay_in_norway` as `get_weather`'s calls.
            ("search", json!({ "city": "Paris" })),
            ("lookup", json!({ "city": "Rome" })),
            // Renamed away from `get_weather`: no longer its call.
            ("get_weather", json!({ "a": 1, "second": 2 })),
            ("get_weather", json!({ "city": "Bergen" })),
        ])
        .text("done");
    let agent = Agent::builder(&model)
        .tool(get_weather)
        .tool(sum)
        .tool(search)
        .hook(reroute)
        .hook(stay_in_norway)
        .build();
    let mut conversation = Conversation::new();
    let heard = Heard::default();
    agent.turn(&mut conversation, "go").observe(&heard).await.unwrap();

    let results = last_results(&model);
    let outputs: Vec<&str> = results.iter().map(|result| result.output.as_str()).collect();
    assert_eq!(
        outputs,
        [
            "sunny in Oslo, 21C",
            "sunny in Oslo, 21C",
            r#"{"total":3,"at":"nowhere"}"#,
            "sunny in Bergen, 21C"
        ]
    );
    let heard = heard.0.into_inner().unwrap();
    let per_tool = heard.iter().filter(|line| line.contains("stay_in_norway")).count();
    assert_eq!(per_tool, 3, "it ran on the three calls of get_weather as renamed: {heard:?}");
}

/// Trims a search's results, slowly.
#[hook(after_tool, tool = search)]
async fn slow_trim(results: &mut Vec<String>) {
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    results.truncate(1);
}

#[tokio::test(start_paused = true)]
async fn the_tool_timeout_bounds_the_tool_not_the_per_tool_hooks_on_its_result() {
    let model =
        ScriptedModel::new().tool_call("search", json!({ "text": "x", "limit": 3 })).text("done");
    let agent = Agent::builder(&model).tool(search).hook(slow_trim).build();
    let config =
        Config { tool_timeout: Some(std::time::Duration::from_millis(20)), ..Config::default() };
    let mut conversation = Conversation::with_config(config);
    agent.run(&mut conversation, "go").await.unwrap();
    let result = last_results(&model).remove(0);
    assert_eq!(result.error, None, "the tool returned within its bound: {result:?}");
    assert_eq!(result.output, r#"["x #0"]"#, "and the slow hook finished its edit");
}

/// Context for the model, gathered alongside other parallel hooks.
#[hook(pre, parallel)]
async fn house_rules(_turn: &Turn) -> Vec<Part> {
    vec![Part::text("Keep answers short.")]
}

#[tokio::test]
async fn a_parallel_hook_may_follow_a_per_tool_result_hook() {
    let model =
        ScriptedModel::new().tool_call("search", json!({ "text": "x", "limit": 2 })).text("done");
    let agent = Agent::builder(&model)
        .tool(search)
        .tool(get_weather)
        .hook(first_result_only)
        .hook(explain)
        .hook(house_rules)
        .build();
    let mut conversation = Conversation::new();
    agent.run(&mut conversation, "go").await.unwrap();
    let first = &model.requests()[0];
    assert!(format!("{first:?}").contains("Keep answers short."), "{first:?}");
    assert_eq!(last_results(&model)[0].output, r#"["x #0","(2 in all)"]"#);
}

/// Edits a weather lookup only when it asks for Fahrenheit.
#[hook(before_tool, tool = get_weather)]
async fn celsius_only(args: &mut GetWeatherArgs) {
    if args.fahrenheit == Some(true) {
        args.fahrenheit = None;
    }
}

#[tokio::test]
async fn a_per_tool_hook_that_edits_nothing_leaves_the_call_as_the_model_sent_it() {
    let model = ScriptedModel::new()
        .tool_calls([
            ("get_weather", json!({ "city": "Oslo", "fahrenheit": null })),
            ("get_weather", json!({ "city": "Oslo", "fahrenheit": true })),
        ])
        .text("done");
    let agent = Agent::builder(&model).tool(get_weather).hook(celsius_only).build();
    let mut conversation = Conversation::new();
    agent.run(&mut conversation, "go").await.unwrap();
    let Entry::Assistant { message, .. } = &conversation.log()[1] else {
        panic!("{:?}", conversation.log())
    };
    let calls: Vec<&ToolCall> = message.tool_calls().collect();
    assert_eq!(calls[0].arguments, json!({ "city": "Oslo", "fahrenheit": null }), "as sent");
    assert_eq!(calls[1].arguments, json!({ "city": "Oslo" }), "as edited");
}

/// Sends a payment once: the payment system is told the call's idempotency key.
#[agentix::tool(call_id)]
async fn pay(
    /// The amount.
    amount: u32,
    turn: &agentix::Turn,
) -> String {
    format!("{amount} paid under {}", turn.tool_idempotency_key().unwrap_or_default())
}

/// Reads the call's id without asking for it: there is none.
#[agentix::tool]
async fn peek(turn: &agentix::Turn) -> String {
    format!("id: {:?}", turn.tool_call_id())
}

#[tokio::test]
async fn a_tool_that_asks_for_its_call_id_gets_it_and_others_do_not() {
    let model = agentix::ScriptedModel::new()
        .tool_calls([("pay", serde_json::json!({ "amount": 5 })), ("peek", serde_json::json!({}))])
        .text("done");
    let agent = agentix::Agent::builder(&model).tool(pay).tool(peek).build();
    let mut conversation = agentix::Conversation::new().with_id("shop");
    agent.run(&mut conversation, "pay").await.unwrap();
    let outputs: Vec<String> =
        tests::tool_results(&model.requests()[1]).into_iter().map(|result| result.output).collect();
    assert_eq!(outputs, ["5 paid under shop/1/call_1", "id: None"]);
}
