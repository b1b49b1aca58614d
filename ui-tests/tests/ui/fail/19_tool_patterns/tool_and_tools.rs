//! One typed tool, or names by a glob: not both.

use agentix::event::BeforeTool;
use agentix::{ToolCall, Verdict, hook, tool};

#[tool]
/// Reads a file.
async fn read_file(path: String) -> String {
    path
}

#[hook(before_tool, tool = read_file, tools = "read_*")]
async fn reads(_call: &ToolCall) -> Verdict<BeforeTool> {
    Verdict::Continue
}

fn main() {}
