//! A parent built under a policy takes only sub-agents built under it: one built without does
//! not compile where it is added.

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
        .policy(&policy)
        .sub_agent(AgentTool::new("research", "Looks things up.", researcher))
        .build();
}
