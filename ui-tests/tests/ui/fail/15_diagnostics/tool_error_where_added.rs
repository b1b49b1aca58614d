use agentix::{Agent, ScriptedModel, tool};

/// Current weather for a city.
#[tool(nmae = "weather")]
async fn get_weather(city: String) -> String {
    format!("sunny in {city}")
}

fn main() {
    let _agent = Agent::builder(ScriptedModel::new()).tool(get_weather).build();
}
