use agentix::prelude::*;

/// Current weather for a city.
#[tool]
async fn get_weather(city: String) -> String {
    format!("sunny in {city}")
}

#[hook(after_model, tool = get_weather)]
async fn check(message: &AssistantMessage) {
    let _ = message;
}

fn main() {}
