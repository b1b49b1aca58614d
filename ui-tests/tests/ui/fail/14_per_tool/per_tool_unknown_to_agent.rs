use agentix::prelude::*;

/// Current weather for a city.
#[tool]
async fn get_weather(city: String) -> String {
    format!("sunny in {city}")
}

/// Sends an email.
#[tool]
async fn send_email(to: String) -> String {
    format!("sent to {to}")
}

#[hook(before_tool, tool = send_email)]
async fn internal_only(args: &mut SendEmailArgs) {
    args.to = "me@example.com".to_owned();
}

fn main() {
    let _agent = Agent::builder(ScriptedModel::new()).tool(get_weather).hook(internal_only).build();
}
