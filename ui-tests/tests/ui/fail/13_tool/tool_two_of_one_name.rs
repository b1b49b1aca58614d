use agentix::prelude::*;

/// Current weather for a city.
#[tool]
async fn get_weather(city: String) -> String {
    format!("sunny in {city}")
}

/// The weather, from another service.
#[tool(name = "get_weather")]
async fn weather_elsewhere(city: String) -> String {
    format!("cloudy in {city}")
}

fn main() {
    let _agent =
        Agent::builder(ScriptedModel::new()).tool(get_weather).tool(weather_elsewhere).build();
}
