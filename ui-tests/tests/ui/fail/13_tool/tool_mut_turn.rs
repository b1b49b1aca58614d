use agentix::{Turn, tool};

/// Current weather for a city.
#[tool]
async fn get_weather(city: String, turn: &mut Turn) -> String {
    let _ = turn;
    format!("sunny in {city}")
}

fn main() {}
