use agentix::tool;

/// Current weather for a city.
#[tool]
async fn get_weather<C: std::fmt::Display>(city: C) -> String {
    format!("sunny in {city}")
}

fn main() {}
