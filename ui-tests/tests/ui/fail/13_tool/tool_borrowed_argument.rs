use agentix::tool;

/// Current weather for a city.
#[tool]
async fn get_weather(city: &str) -> String {
    format!("sunny in {city}")
}

fn main() {}
