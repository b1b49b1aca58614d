//! A function generic over the hook registers it with `H: Hook` alone: the bounds the pipeline
//! needs are declared where the hook's onion membership is.

use agentix::event::AfterModel;
use agentix::pipeline::Pipeline;
use agentix::{Agent, AssistantMessage, Hook, ScriptedModel, ToolSet, Turn, Verdict, hook, approval::NoApprover};

/// Builds an agent over `model` guarded by `guard`, whatever `Hook` it is.
fn guarded<H: Hook>(
    model: ScriptedModel,
    guard: H,
) -> Agent<ScriptedModel, impl ToolSet, impl Pipeline, NoApprover> {
    Agent::builder(model).hook(guard).build()
}

struct Guard;

#[hook]
impl Hook for Guard {
    async fn after_model(&self, _: &mut AssistantMessage, _: &mut Turn) -> Verdict<AfterModel> {
        Verdict::Continue
    }
}

struct Wrapper;

#[hook]
impl Hook for Wrapper {
    async fn wrap_model(
        &self,
        request: &agentix::model::ModelRequest,
        _: &Turn,
        next: &impl agentix::model::NextModel,
    ) -> Result<agentix::model::ModelResponse, agentix::model::ModelError> {
        next.call(request).await
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    for agent in [guarded(ScriptedModel::new().text("Hi."), Guard).boxed(), guarded(ScriptedModel::new().text("Hi."), Wrapper).boxed()] {
        let mut conversation = agentix::Conversation::new();
        assert_eq!(agent.run(&mut conversation, "Hello").await.unwrap().joined_text(), "Hi.");
    }
}
