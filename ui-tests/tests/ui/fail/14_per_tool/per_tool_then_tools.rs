use agentix::prelude::*;
use agentix::tool::NoTools;

/// Current weather for a city.
#[tool]
async fn get_weather(city: String) -> String {
    format!("sunny in {city}")
}

/// Keeps lookups in Norway.
#[hook(before_tool, tool = get_weather)]
async fn stay_in_norway(args: &mut GetWeatherArgs) {
    args.city = "Oslo".to_owned();
}

fn main() {
    let agent = Agent::builder(ScriptedModel::new()).tool(get_weather).hook(stay_in_norway);
    let _agent = agent.tools(NoTools).build();
}
