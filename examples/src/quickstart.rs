//! The quickstart: one turn with tool calls over the scripted model, with a hook on each of
//! the eleven events, reporting each event as it fires and what each hook decided.

use agentix::event::{AfterModel, BeforeFinal, BeforeTool, Pre};
use agentix::{
    Agent, AssistantMessage, Conversation, Outcome, ScriptedModel, Tool, ToolCall, ToolResult,
    Turn, Verdict, hook,
    message::ToolFailure,
    model::{ModelError, ModelRequest, ModelResponse, NextModel},
    observe::Observation,
    scope::{Scope, ScopeValue},
    tool::NextTool,
    verdict::Trip,
};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::trace;
use crate::weather::GetWeather;

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

/// `pre`: tells the model who it is talking to, from the scope.
#[hook(pre)]
async fn user_profile(turn: &mut Turn) -> Verdict<Pre> {
    let Some(user) = turn.scope().get::<User>() else {
        return Verdict::halt("nobody is signed in");
    };
    let note = format!("The user is {}; report temperatures in {}.", user.name, user.units);
    turn.inject(note);
    Verdict::Continue
}

/// `before_model`: pins the sampling temperature.
#[hook(before_model)]
async fn pin_temperature(request: &mut ModelRequest) {
    request.params.temperature = Some(0.2);
}

/// `tripwire`: a check of the user's message that runs beside the model call; a trip would
/// cancel the call and end the turn.
#[hook(tripwire)]
async fn no_secrets(request: &ModelRequest) -> Trip {
    let asks_for_secrets =
        request.messages.iter().any(|message| message.text().contains("password"));
    if asks_for_secrets { Trip::trip("the message asks for a password") } else { Trip::Pass }
}

/// `wrap_model`: a dropped connection gets a second try.
#[hook(wrap_model)]
async fn retry_transport_errors(
    request: &ModelRequest,
    next: &impl NextModel,
) -> Result<ModelResponse, ModelError> {
    match next.call(request).await {
        Err(ModelError::Transport(_)) => next.call(request).await,
        result => result,
    }
}

/// `after_model`: an empty answer goes back to the model.
#[hook(after_model)]
async fn no_empty_answers(message: &AssistantMessage) -> Verdict<AfterModel> {
    if message.calls_tools() || !message.joined_text().trim().is_empty() {
        Verdict::Continue
    } else {
        Verdict::retry("Your answer was empty.")
    }
}

/// `before_tool`: only known tools run.
#[hook(before_tool)]
async fn known_tools_only(call: &ToolCall) -> Verdict<BeforeTool> {
    if call.name == GetWeather::NAME {
        Verdict::Continue
    } else {
        Verdict::reject(format!("`{}` is not allowed here", call.name))
    }
}

/// `wrap_tool`: a tool that failed gets one more try.
#[hook(wrap_tool)]
async fn retry_tool_once(call: &ToolCall, next: &impl NextTool) -> ToolResult {
    let result = next.call(call).await;
    match &result.error {
        Some(ToolFailure::Failed { .. }) => next.call(call).await,
        _ => result,
    }
}

/// `after_tool`: temperatures get the user's units.
#[hook(after_tool)]
async fn add_units(result: &mut ToolResult, turn: &Turn) {
    let units = turn.scope().get::<User>().map_or("°C", |user| user.units.as_str());
    result.output.push_str(units);
}

/// `tool_error`: arguments that do not fit get a reminder of the schema.
#[hook(tool_error)]
async fn explain_arguments(result: &mut ToolResult) {
    if let Some(ToolFailure::InvalidArguments { .. }) = result.error {
        result.output.push_str(r#". Call it as {"city": "<name>"}."#);
    }
}

/// `before_final`: an answer about weather must name the city.
#[hook(before_final)]
async fn name_the_city(message: &AssistantMessage) -> Verdict<BeforeFinal> {
    if message.joined_text().contains("Oslo") {
        Verdict::Continue
    } else {
        Verdict::retry("Name the city in your answer.")
    }
}

/// `post`: counts served turns in the scope, whatever the outcome.
#[hook(post)]
async fn count_turns(_outcome: &Outcome, turn: &mut Turn) {
    if let Some(served) = turn.scope_mut().get_mut::<TurnsServed>() {
        served.0 += 1;
    }
}

/// Runs the quickstart's turn, writing each line of its trace and summary to `out` as it happens.
pub async fn run(out: &(dyn Fn(&str) + Sync)) -> Outcome {
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
        .hook(user_profile)
        .hook(pin_temperature)
        .hook(no_secrets)
        .hook(retry_transport_errors)
        .hook(no_empty_answers)
        .hook(known_tools_only)
        .hook(retry_tool_once)
        .hook(add_units)
        .hook(explain_arguments)
        .hook(name_the_city)
        .hook(count_turns)
        .build();

    let scope = Scope::new()
        .with(User { name: "Ada".into(), units: "°C".into() })
        .with(TurnsServed::default());
    let mut conversation = Conversation::new().with_scope(scope);

    let trace = |observation: &Observation<'_>| out(&observation.to_string());
    let reply = agent.turn(&mut conversation, "What's the weather in Oslo?").observe(&trace).await;

    out("");
    trace::outcome(out, &reply);
    let served = conversation.scope().get::<TurnsServed>().map_or(0, |served| served.0);
    out(&format!("turns served: {served}"));
    trace::log(out, &conversation);
    reply
}
