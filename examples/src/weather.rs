//! The tool two examples share: it is not what either of them shows.

use agentix::{Tool, Turn};
use schemars::JsonSchema;
use serde::Deserialize;

/// `get_weather`'s arguments.
#[derive(Deserialize, JsonSchema)]
pub struct City {
    /// The city to report on.
    pub city: String,
}

/// Current weather for a city: always a clear sky.
pub struct GetWeather;

impl Tool for GetWeather {
    const NAME: &'static str = "get_weather";
    type Args = City;
    type Output = String;
    type Error = std::convert::Infallible;

    fn description(&self) -> &str {
        "Current weather for a city."
    }

    async fn call(&self, args: City, _turn: &Turn) -> Result<String, Self::Error> {
        Ok(format!("{}: clear sky, 21", args.city))
    }
}
