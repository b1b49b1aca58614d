//! Per-tool hooks of every form, on an agent spawned on a multi-thread runtime.

use agentix::prelude::*;

/// Current weather for a city.
#[tool]
async fn get_weather(
    /// The city.
    city: String,
    turn: &Turn,
) -> Result<String, String> {
    let _ = turn.scope();
    Ok(format!("sunny in {city}"))
}

#[hook(before_tool, tool = get_weather)]
async fn edits(args: &mut GetWeatherArgs, turn: &mut Turn) -> Verdict<BeforeTool> {
    let _ = turn;
    args.city = args.city.trim().to_owned();
    tokio::task::yield_now().await;
    Verdict::Continue
}

#[hook(before_tool, tool = get_weather, when = long_name, timeout = "1s")]
async fn reads(args: &GetWeatherArgs) -> Result<(), String> {
    if args.city.is_empty() { Err("no city".to_owned()) } else { Ok(()) }
}

fn long_name(args: &GetWeatherArgs, _turn: &Turn) -> bool {
    args.city.len() > 3
}

#[hook(after_tool, tool = get_weather)]
async fn louder(output: &mut String, turn: &Turn) -> Verdict<AfterTool> {
    let _ = turn.scope();
    tokio::task::yield_now().await;
    output.make_ascii_uppercase();
    Verdict::Continue
}

#[hook(tool_error, tool = get_weather, when = is_empty)]
async fn explain(error: &mut String) -> Result<(), std::fmt::Error> {
    error.push_str(": name a city");
    Ok(())
}

fn is_empty(error: &String, _turn: &Turn) -> bool {
    error.is_empty()
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let model = ScriptedModel::new()
        .tool_call("get_weather", serde_json::json!({ "city": " Oslo " }))
        .text("Sunny.");
    let agent = Agent::builder(model).tool(get_weather).hook(edits).hook(reads).hook(louder).hook(explain).build();
    let reply = tokio::spawn(async move {
        let mut conversation = Conversation::new();
        agent.run(&mut conversation, "Weather?").await.map(|reply| reply.joined_text().into_owned())
    })
    .await
    .unwrap();
    assert_eq!(reply.unwrap(), "Sunny.");
}
