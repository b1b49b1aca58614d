//! A `Hook` struct's impl without `#[hook]`, registered on an agent: the one error is at the
//! impl, which is what to mend; the registration says nothing more.

use agentix::event::AfterModel;
use agentix::{Agent, AssistantMessage, Hook, ScriptedModel, Turn, Verdict};

struct Guard;

impl Hook for Guard {
    async fn after_model(&self, _: &mut AssistantMessage, _: &mut Turn) -> Verdict<AfterModel> {
        Verdict::Continue
    }
}

fn main() {
    let _agent = Agent::builder(ScriptedModel::new()).hook(Guard).build();
}
