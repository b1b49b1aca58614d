use agentix::tool;

struct Weather;

impl Weather {
    /// Current weather for a city.
    #[tool]
    async fn get_weather(&self, city: String) -> String {
        format!("sunny in {city}")
    }
}

fn main() {}
