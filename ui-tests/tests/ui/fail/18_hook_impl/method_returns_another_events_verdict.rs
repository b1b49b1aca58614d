//! A `Hook` method returns its own event's verdict: `before_tool` cannot return an
//! `after_model` verdict, whose contract is another.

use agentix::event::AfterModel;
use agentix::{Hook, ToolCall, Turn, Verdict, hook};

struct Guard;

#[hook]
impl Hook for Guard {
    async fn before_tool(&self, _: &mut ToolCall, _: &mut Turn) -> Verdict<AfterModel> {
        Verdict::Continue
    }
}

fn main() {}
