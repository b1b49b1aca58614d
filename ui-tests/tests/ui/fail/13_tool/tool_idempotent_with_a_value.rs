use agentix::tool;

/// Reads a city's weather: the same answer however often it is asked.
#[tool(idempotent = true)]
async fn weather(city: String) -> String {
    format!("sunny in {city}")
}

fn main() {}
