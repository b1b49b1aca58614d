//! On an `impl Hook` block, `#[hook]` takes no event: the events are the methods it defines.

use agentix::event::AfterModel;
use agentix::{AssistantMessage, Hook, Turn, Verdict, hook};

struct Guard;

#[hook(after_model)]
impl Hook for Guard {
    async fn after_model(&self, _: &mut AssistantMessage, _: &mut Turn) -> Verdict<AfterModel> {
        Verdict::Continue
    }
}

fn main() {}
