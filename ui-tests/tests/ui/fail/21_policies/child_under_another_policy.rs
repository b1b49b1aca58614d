//! A child under another policy than its parent's is refused as one under none is.

use agentix::event::{BeforeModel, BeforeTool};
use agentix::prelude::*;
use agentix::{delegate::AgentTool, pipeline::Policy};

#[hook(before_tool)]
async fn no_deletes(call: &ToolCall) -> Verdict<BeforeTool> {
    if call.name.starts_with("delete") { Verdict::reject("no") } else { Verdict::Continue }
}

#[hook(before_model)]
async fn short(request: &mut ModelRequest) -> Verdict<BeforeModel> {
    let _ = request;
    Verdict::Continue
}

fn main() {
    let strict = Policy::new().hook(no_deletes);
    let other = Policy::new().hook(short);
    let researcher = Agent::builder(ScriptedModel::new()).policy(&other).build();
    let _planner = Agent::builder(ScriptedModel::new())
        .policy(&strict)
        .sub_agent(AgentTool::new("research", "Looks things up.", researcher))
        .build();
}
