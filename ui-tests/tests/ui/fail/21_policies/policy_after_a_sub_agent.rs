//! The policy comes first: put after a sub-agent, it would not have been checked against it.

use agentix::event::BeforeTool;
use agentix::prelude::*;
use agentix::{delegate::AgentTool, pipeline::Policy};

#[hook(before_tool)]
async fn no_deletes(call: &ToolCall) -> Verdict<BeforeTool> {
    if call.name.starts_with("delete") { Verdict::reject("no") } else { Verdict::Continue }
}

fn main() {
    let policy = Policy::new().hook(no_deletes);
    let researcher = Agent::builder(ScriptedModel::new()).build();
    let _planner = Agent::builder(ScriptedModel::new())
        .sub_agent(AgentTool::new("research", "Looks things up.", researcher))
        .policy(&policy)
        .build();
}
