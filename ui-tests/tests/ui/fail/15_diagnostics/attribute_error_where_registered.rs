use agentix::{Agent, AssistantMessage, ScriptedModel, hook};

#[hook(after_model, retryable)]
async fn check(_message: &AssistantMessage) {}

fn main() {
    let _agent = Agent::builder(ScriptedModel::new()).hook(check).build();
}
