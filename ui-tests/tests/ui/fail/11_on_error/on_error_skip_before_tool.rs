use agentix::event::BeforeTool;
use agentix::{ToolCall, Verdict, hook};

#[hook(before_tool, on_error = skip)]
async fn check_permissions(_call: &ToolCall) -> Verdict<BeforeTool> {
    Verdict::Continue
}

fn main() {}
