//! A `Hook` struct's impl needs `#[hook]`, which tells the pipeline which methods it defines.

use agentix::event::AfterModel;
use agentix::{AssistantMessage, Hook, Turn, Verdict};

struct Guard;

impl Hook for Guard {
    async fn after_model(&self, _: &mut AssistantMessage, _: &mut Turn) -> Verdict<AfterModel> {
        Verdict::Continue
    }
}

fn main() {}
