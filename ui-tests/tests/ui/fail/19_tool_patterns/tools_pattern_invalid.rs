//! `tools = "..."` is a glob over tool names, checked when it compiles.

use agentix::event::BeforeTool;
use agentix::{ToolCall, Verdict, hook};

#[hook(before_tool, tools = "github/*")]
async fn github_policy(_call: &ToolCall) -> Verdict<BeforeTool> {
    Verdict::Continue
}

fn main() {}
