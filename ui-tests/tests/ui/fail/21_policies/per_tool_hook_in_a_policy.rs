//! A policy has no tools, so it holds no per-tool hook.

use agentix::prelude::*;
use agentix::pipeline::Policy;

/// The weather in a city.
#[tool]
async fn get_weather(city: String) -> Result<String, String> {
    Ok(format!("sunny in {city}"))
}

#[hook(before_tool, tool = get_weather)]
async fn only_oslo(args: &GetWeatherArgs) {
    let _ = args;
}

fn main() {
    let _policy = Policy::new().hook(only_oslo);
}
