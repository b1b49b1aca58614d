//! The agent around the hooks: tools and their schemas, the scope hooks and tools share,
//! parallel `pre` groups, the type-erased agent.

use std::time::Duration;

use agentix::event::{BeforeTool, EventKind, EventSet};
use agentix::on::ParallelPre;
use agentix::{
    Agent, BoxedAgent, Conversation, Hook, Part, ScriptedModel, Tool, ToolCall, Turn, Verdict,
    message::{Role, ToolFailure},
    scope::{Scope, ScopeValue},
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use tests::{Flaky, Weather, tool_results};

#[tokio::test]
async fn the_model_sees_each_tool_with_its_schema() {
    let model = ScriptedModel::new().text("ok");
    let agent = Agent::builder(&model)
        .tool(Weather::default())
        .tool(Flaky { failures: 0, calls: Default::default() })
        .build();
    agent.run(&mut Conversation::new(), "hi").await.unwrap();
    let tools = &model.requests()[0].tools;
    let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_str()).collect();
    assert_eq!(names, ["get_weather", "flaky"]);
    assert_eq!(tools[0].description, "Current weather for a city.");
    assert_eq!(tools[0].parameters["properties"]["city"]["type"], "string");
    assert_eq!(tools[0].parameters["required"], json!(["city"]));
}

#[derive(Serialize)]
struct Forecast {
    city: String,
    celsius: i32,
}

struct Structured;

impl Tool for Structured {
    const NAME: &'static str = "forecast";
    type Args = tests::City;
    type Output = Forecast;
    type Error = String;

    fn description(&self) -> &str {
        "A structured forecast."
    }

    async fn call(&self, args: tests::City, _turn: &Turn) -> Result<Forecast, String> {
        if args.city.is_empty() {
            return Err("no city given".into());
        }
        Ok(Forecast { city: args.city, celsius: 21 })
    }
}

/// A tool whose output is not a `String` but serializes to a JSON string.
struct Label;

impl Tool for Label {
    const NAME: &'static str = "label";
    type Args = tests::City;
    type Output = &'static str;
    type Error = String;

    fn description(&self) -> &str {
        "A label for a city."
    }

    async fn call(&self, args: tests::City, _turn: &Turn) -> Result<&'static str, String> {
        Ok(if args.city == "Oslo" { "calm" } else { "a \"quoted\"\nlabel" })
    }
}

#[tokio::test]
async fn an_output_serialized_to_a_string_reaches_the_model_as_its_text() {
    let calls = [("label", json!({ "city": "Oslo" })), ("label", json!({ "city": "Rome" }))];
    let model = ScriptedModel::new().tool_calls(calls).text("ok");
    let agent = Agent::builder(&model).tool(Label).build();
    agent.run(&mut Conversation::new(), "hi").await.unwrap();
    let results = tool_results(&model.requests()[1]);
    assert_eq!(results[0].output, "calm");
    assert_eq!(results[1].output, "a \"quoted\"\nlabel");
}

#[tokio::test]
async fn a_string_output_reaches_the_model_as_its_text_escapes_and_all() {
    let city = "Os\"lo\\\n";
    let model =
        ScriptedModel::new().tool_calls([("get_weather", json!({ "city": city }))]).text("ok");
    let agent = Agent::builder(&model).tool(Weather::default()).build();
    agent.run(&mut Conversation::new(), "hi").await.unwrap();
    assert_eq!(tool_results(&model.requests()[1])[0].output, format!("sunny in {city}"));
}

#[tokio::test]
async fn tool_output_is_json_and_tool_errors_reach_the_model() {
    let model = ScriptedModel::new()
        .tool_calls([("forecast", json!({ "city": "Oslo" })), ("forecast", json!({ "city": "" }))])
        .text("ok");
    let agent = Agent::builder(&model).tool(Structured).build();
    agent.run(&mut Conversation::new(), "hi").await.unwrap();
    let results = tool_results(&model.requests()[1]);
    assert_eq!(results[0].output, r#"{"city":"Oslo","celsius":21}"#);
    assert_eq!(results[1].error, Some(ToolFailure::Failed { message: "no city given".into() }));
    assert_eq!(results[1].output, "tool failed: no city given");
}

/// The signed-in user: ambient state that hooks and tools read from the scope.
#[derive(Debug, Serialize, Deserialize)]
struct User {
    name: String,
    calls: u32,
}

impl ScopeValue for User {
    const KEY: &'static str = "user";
}

/// Counts the user's tool calls (an effect on the scope).
struct CountCalls;

#[agentix::hook]
impl Hook for CountCalls {
    const EVENTS: EventSet = EventSet::of(EventKind::BeforeTool);

    async fn before_tool(&self, _: &mut ToolCall, turn: &mut Turn) -> Verdict<BeforeTool> {
        match turn.scope_mut().get_mut::<User>() {
            Some(user) => {
                user.calls += 1;
                Verdict::Continue
            }
            None => Verdict::halt("nobody is signed in"),
        }
    }
}

#[derive(Deserialize, JsonSchema)]
struct NoArgs {}

/// Greets the user from the scope.
struct WhoAmI;

impl Tool for WhoAmI {
    const NAME: &'static str = "whoami";
    type Args = NoArgs;
    type Output = String;
    type Error = agentix::scope::ScopeError;

    fn description(&self) -> &str {
        "Who is signed in."
    }

    async fn call(&self, _: NoArgs, turn: &Turn) -> Result<String, Self::Error> {
        let user = turn.scope().require::<User>()?;
        Ok(format!("{} (call {})", user.name, user.calls))
    }
}

#[tokio::test]
async fn hooks_and_tools_share_the_scope_across_turns() {
    let model = ScriptedModel::new()
        .tool_call("whoami", json!({}))
        .text("first")
        .tool_call("whoami", json!({}))
        .text("second");
    let agent = Agent::builder(&model).tool(WhoAmI).hook(CountCalls).build();
    let mut conversation =
        Conversation::new().with_scope(Scope::new().with(User { name: "ada".into(), calls: 0 }));
    agent.run(&mut conversation, "who?").await.unwrap();
    agent.run(&mut conversation, "again?").await.unwrap();
    let requests = model.requests();
    assert_eq!(tool_results(&requests[1])[0].output, "ada (call 1)");
    assert_eq!(tool_results(&requests[3]).last().unwrap().output, "ada (call 2)");
    assert_eq!(conversation.scope().get::<User>().unwrap().calls, 2);

    let mut anonymous = Conversation::new();
    let model = ScriptedModel::new().tool_call("whoami", json!({}));
    let agent = Agent::builder(&model).tool(WhoAmI).hook(CountCalls).build();
    let error = agent.run(&mut anonymous, "who?").await.unwrap_err();
    assert!(error.to_string().contains("nobody is signed in"));
}

/// Waits, then returns one part.
struct Slow {
    name: &'static str,
    millis: u64,
}

impl ParallelPre for Slow {
    fn name(&self) -> &'static str {
        self.name
    }

    async fn pre(&self, turn: &Turn) -> Vec<Part> {
        tokio::time::sleep(Duration::from_millis(self.millis)).await;
        vec![Part::text(format!("{} saw {}", self.name, turn.user_message().text()))]
    }
}

#[tokio::test(start_paused = true)]
async fn consecutive_parallel_hooks_run_together_and_merge_in_declaration_order() {
    let model = ScriptedModel::new().text("ok");
    let agent = Agent::builder(&model)
        .hook(Slow { name: "slowest", millis: 300 })
        .hook(Slow { name: "middle", millis: 200 })
        .hook(Slow { name: "fastest", millis: 100 })
        .build();
    let started = tokio::time::Instant::now();
    agent.run(&mut Conversation::new(), "q").await.unwrap();
    let elapsed = started.elapsed();
    assert!(
        elapsed >= Duration::from_millis(300) && elapsed < Duration::from_millis(310),
        "took {elapsed:?}"
    );
    let injected = &model.requests()[0].messages[1];
    assert_eq!(injected.role, Role::User);
    let texts: Vec<&str> = injected.content.iter().filter_map(Part::as_text).collect();
    assert_eq!(texts, ["slowest saw q", "middle saw q", "fastest saw q"]);
}

#[tokio::test]
async fn agents_of_different_types_fit_behind_one_type() {
    let agents: Vec<BoxedAgent> = vec![
        Agent::builder(ScriptedModel::new().text("plain")).build().boxed(),
        Agent::builder(ScriptedModel::new().tool_call("whoami", json!({})).text("hooked"))
            .tool(WhoAmI)
            .hook(CountCalls)
            .build()
            .boxed(),
    ];
    let mut replies = Vec::new();
    for agent in &agents {
        let mut conversation = Conversation::new()
            .with_scope(Scope::new().with(User { name: "ada".into(), calls: 0 }));
        replies.push(agent.run(&mut conversation, "hi").await.unwrap().joined_text().into_owned());
    }
    assert_eq!(replies, ["plain", "hooked"]);
}

/// A handle the application supplies: not serialized.
struct Pool {
    connections: u32,
}

#[test]
fn scope_values_survive_serialization_and_resources_do_not() {
    let mut scope = Scope::new()
        .with(User { name: "ada".into(), calls: 2 })
        .with_resource(Pool { connections: 4 });
    assert_eq!(scope.resource::<Pool>().unwrap().connections, 4);
    scope.get_mut::<User>().unwrap().calls += 1;

    let json = serde_json::to_value(&scope).unwrap();
    assert_eq!(json, json!({ "user": { "name": "ada", "calls": 3 } }));

    let mut revived: Scope = serde_json::from_value(json).unwrap();
    assert!(revived.resource::<Pool>().is_none(), "resources are not serialized");
    assert_eq!(revived.get::<User>().unwrap().calls, 3);
    revived.get_mut::<User>().unwrap().calls += 1;
    assert_eq!(revived.remove::<User>().unwrap().calls, 4);
    assert!(revived.get::<User>().is_none());

    let malformed: Scope = serde_json::from_value(json!({ "user": { "name": 5 } })).unwrap();
    let error = malformed.require::<User>().unwrap_err();
    assert!(matches!(&error, agentix::scope::ScopeError::Malformed { key: "user", .. }), "{error}");
}

#[test]
fn a_value_that_no_longer_deserializes_is_an_error_and_stays_stored() {
    let stored = json!({ "user": { "name": 5, "calls": "many" } });
    let mut scope: Scope = serde_json::from_value(stored.clone()).unwrap();
    let error = scope.require_mut::<User>().unwrap_err();
    assert!(matches!(&error, agentix::scope::ScopeError::Malformed { key: "user", .. }), "{error}");
    assert!(scope.get_mut::<User>().is_none());
    assert!(scope.remove::<User>().is_none());
    // Neither a mutable read nor a removal dropped it: it serializes back as it was stored.
    assert_eq!(serde_json::to_value(&scope).unwrap(), stored);
    assert!(matches!(scope.require::<User>(), Err(agentix::scope::ScopeError::Malformed { .. })));

    // A value that reads is taken over, typed, and edits to it are what serializes.
    let mut scope: Scope =
        serde_json::from_value(json!({ "user": { "name": "ada", "calls": 1 } })).unwrap();
    scope.require_mut::<User>().unwrap().calls += 1;
    assert_eq!(
        serde_json::to_value(&scope).unwrap(),
        json!({ "user": { "name": "ada", "calls": 2 } })
    );
}

#[tokio::test]
async fn a_revived_conversation_keeps_its_log_config_and_scope() {
    let model = ScriptedModel::new()
        .tool_call("whoami", json!({}))
        .text("first")
        .tool_call("whoami", json!({}))
        .text("second");
    let agent = Agent::builder(&model).tool(WhoAmI).hook(CountCalls).build();
    let mut conversation = Conversation::with_config(agentix::Config {
        max_steps: 5,
        max_retries: 1,
        ..Default::default()
    })
    .with_scope(Scope::new().with(User { name: "ada".into(), calls: 0 }));
    agent.run(&mut conversation, "who?").await.unwrap();

    let saved = serde_json::to_string(&conversation).unwrap();
    let mut revived: Conversation = serde_json::from_str(&saved).unwrap();
    assert_eq!(revived.log(), conversation.log());
    assert_eq!(revived.config(), conversation.config());
    assert_eq!(revived.turns(), 1);

    agent.run(&mut revived, "again?").await.unwrap();
    assert_eq!(tool_results(&model.requests()[3]).last().unwrap().output, "ada (call 2)");
    assert_eq!(revived.log().first().unwrap().turn(), agentix::conversation::TurnRef(1));
    assert_eq!(revived.log().last().unwrap().turn(), agentix::conversation::TurnRef(2));
}
