use agentix::tool;

/// A city, without the derives an argument needs.
pub struct City {
    pub name: String,
}

/// Current weather for a city.
#[tool]
async fn get_weather(
    /// The city.
    city: City,
) -> String {
    format!("sunny in {}", city.name)
}

fn main() {}
