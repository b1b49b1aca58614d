use agentix::tool;

#[tool]
async fn get_weather(city: String) -> String {
    format!("sunny in {city}")
}

fn main() {}
