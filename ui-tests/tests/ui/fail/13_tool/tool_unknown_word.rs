use agentix::tool;

/// Current weather for a city.
#[tool(nmae = "weather")]
async fn get_weather(city: String) -> String {
    format!("sunny in {city}")
}

fn main() {}
