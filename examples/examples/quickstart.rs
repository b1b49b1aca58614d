//! One turn with tool calls over the scripted model, with hooks on all ten events, printing a
//! trace of each event as it fires and what each hook decided.
//!
//! Run it with `cargo run -p examples --example quickstart`.

use std::time::Instant;

use agentix::event::{
    AfterModel, AfterTool, BeforeFinal, BeforeModel, BeforeTool, EventKind, EventSet, Post, Pre,
    ToolError,
};
use agentix::{
    Agent, AssistantMessage, Conversation, Entry, Hook, ModelError, ModelRequest, ModelResponse,
    NextModel, NextTool, Observation, Outcome, Scope, ScopeValue, ScriptedModel, Tool, ToolCall,
    ToolFailure, ToolResult, Turn, Verdict,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

/// The signed-in user, ambient state in the conversation's scope.
#[derive(Serialize, Deserialize)]
struct User {
    name: String,
    units: String,
}

impl ScopeValue for User {
    const KEY: &'static str = "user";
}

/// Turns served so far; `post` counts them in the scope.
#[derive(Default, Serialize, Deserialize)]
struct TurnsServed(u32);

impl ScopeValue for TurnsServed {
    const KEY: &'static str = "turns_served";
}

#[derive(Deserialize, JsonSchema)]
struct City {
    /// The city to report on.
    city: String,
}

/// The one tool: current weather for a city.
struct GetWeather;

impl Tool for GetWeather {
    const NAME: &'static str = "get_weather";
    type Args = City;
    type Output = String;
    type Error = std::convert::Infallible;

    fn description(&self) -> &str {
        "Current weather for a city."
    }

    async fn call(&self, args: City, _turn: &Turn) -> Result<String, Self::Error> {
        Ok(format!("{}: clear sky, 21", args.city))
    }
}

/// `pre`: tells the model who it is talking to, from the scope.
struct UserProfile;

impl Hook for UserProfile {
    const EVENTS: EventSet = EventSet::of(EventKind::Pre);

    fn name(&self) -> &'static str {
        "user_profile"
    }

    async fn pre(&self, turn: &mut Turn) -> Verdict<Pre> {
        let Some(user) = turn.scope().get::<User>() else {
            return Verdict::halt("nobody is signed in");
        };
        let note = format!("The user is {}; report temperatures in {}.", user.name, user.units);
        turn.inject(note);
        Verdict::Continue
    }
}

/// `before_model` and `wrap_model`: pins the sampling temperature and times each model call.
struct ModelTimer;

impl Hook for ModelTimer {
    const EVENTS: EventSet = EventSet::of(EventKind::BeforeModel).with(EventKind::WrapModel);

    fn name(&self) -> &'static str {
        "model_timer"
    }

    async fn before_model(
        &self,
        request: &mut ModelRequest,
        _turn: &mut Turn,
    ) -> Verdict<BeforeModel> {
        request.params.temperature = Some(0.2);
        Verdict::Continue
    }

    async fn wrap_model(
        &self,
        request: &ModelRequest,
        _turn: &Turn,
        next: &impl NextModel,
    ) -> Result<ModelResponse, ModelError> {
        let started = Instant::now();
        let response = next.call(request).await;
        println!("      (model answered in {:?})", started.elapsed());
        response
    }
}

/// `after_model` and `before_tool`: refuses empty answers, and lets only known tools run.
struct Guardrails;

impl Hook for Guardrails {
    const EVENTS: EventSet = EventSet::of(EventKind::AfterModel).with(EventKind::BeforeTool);

    fn name(&self) -> &'static str {
        "guardrails"
    }

    async fn after_model(
        &self,
        message: &mut AssistantMessage,
        _turn: &mut Turn,
    ) -> Verdict<AfterModel> {
        if message.calls_tools() || !message.joined_text().trim().is_empty() {
            Verdict::Continue
        } else {
            Verdict::retry("Your answer was empty.")
        }
    }

    async fn before_tool(&self, call: &mut ToolCall, _turn: &mut Turn) -> Verdict<BeforeTool> {
        if call.name == GetWeather::NAME {
            Verdict::Continue
        } else {
            Verdict::reject(format!("`{}` is not allowed here", call.name))
        }
    }
}

/// `wrap_tool`, `after_tool` and `tool_error`: one retry, units on results, and a schema
/// reminder when the model's arguments do not fit.
struct ToolCare;

impl Hook for ToolCare {
    const EVENTS: EventSet =
        EventSet::of(EventKind::WrapTool).with(EventKind::AfterTool).with(EventKind::ToolError);

    fn name(&self) -> &'static str {
        "tool_care"
    }

    async fn wrap_tool(&self, call: &ToolCall, _turn: &Turn, next: &impl NextTool) -> ToolResult {
        let result = next.call(call).await;
        match &result.error {
            Some(ToolFailure::Failed { .. }) => next.call(call).await,
            _ => result,
        }
    }

    async fn after_tool(&self, result: &mut ToolResult, turn: &mut Turn) -> Verdict<AfterTool> {
        let units = turn.scope().get::<User>().map_or("°C", |user| user.units.as_str());
        result.output.push_str(units);
        Verdict::Continue
    }

    async fn tool_error(&self, result: &mut ToolResult, _turn: &mut Turn) -> Verdict<ToolError> {
        if let Some(ToolFailure::InvalidArguments { .. }) = result.error {
            result.output.push_str(r#". Call it as {"city": "<name>"}."#);
        }
        Verdict::Continue
    }
}

/// `before_final`: an answer about weather must name a city.
struct FinalCheck;

impl Hook for FinalCheck {
    const EVENTS: EventSet = EventSet::of(EventKind::BeforeFinal);

    fn name(&self) -> &'static str {
        "final_check"
    }

    async fn before_final(
        &self,
        message: &mut AssistantMessage,
        _turn: &mut Turn,
    ) -> Verdict<BeforeFinal> {
        if message.joined_text().contains("Oslo") {
            Verdict::Continue
        } else {
            Verdict::retry("Name the city in your answer.")
        }
    }
}

/// `post`: counts served turns in the scope, whatever the outcome.
struct TurnMetrics;

impl Hook for TurnMetrics {
    const EVENTS: EventSet = EventSet::of(EventKind::Post);

    fn name(&self) -> &'static str {
        "turn_metrics"
    }

    async fn post(&self, _outcome: &Outcome, turn: &mut Turn) -> Verdict<Post> {
        if let Some(served) = turn.scope_mut().get_mut::<TurnsServed>() {
            served.0 += 1;
        }
        Verdict::Continue
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    // The model asks for the weather twice — once with arguments that do not fit — then answers.
    let model = ScriptedModel::new()
        .tool_calls([
            ("get_weather", json!({ "city": "Oslo" })),
            ("get_weather", json!({ "town": "Oslo" })),
        ])
        .text("It is clear in Oslo, 21°C.");

    let agent = Agent::builder(model)
        .system("You are a concise weather assistant.")
        .tool(GetWeather)
        .hook(UserProfile)
        .hook(ModelTimer)
        .hook(Guardrails)
        .hook(ToolCare)
        .hook(FinalCheck)
        .hook(TurnMetrics)
        .build();

    let scope = Scope::new()
        .with(User { name: "Ada".into(), units: "°C".into() })
        .with(TurnsServed::default());
    let mut conversation = Conversation::new().with_scope(scope);

    let trace = |observation: &Observation<'_>| println!("{observation}");
    let reply = agent.run_observed(&mut conversation, "What's the weather in Oslo?", &trace).await;

    println!();
    match &reply {
        Ok(message) => println!("reply: {}", message.joined_text()),
        Err(error) => println!("error: {error}"),
    }
    println!(
        "turns served: {}",
        conversation.scope().get::<TurnsServed>().map_or(0, |served| served.0)
    );
    println!("log:");
    for entry in conversation.log() {
        match entry {
            Entry::User { message, .. } => println!("  user:      {}", message.text()),
            Entry::Assistant { message, .. } if message.calls_tools() => {
                let names: Vec<&str> =
                    message.tool_calls().map(|call| call.name.as_str()).collect();
                println!("  assistant: calls {}", names.join(", "));
            }
            Entry::Assistant { message, .. } => println!("  assistant: {}", message.joined_text()),
            Entry::ToolResults { results, .. } => {
                for result in results {
                    println!("  tool:      {}", result.output);
                }
            }
            Entry::Halted { hook, reason, .. } => println!("  halted by {hook}: {reason}"),
            Entry::Failed { error, .. } => println!("  failed: {error}"),
        }
    }
    if reply.is_err() {
        std::process::exit(1);
    }
}
