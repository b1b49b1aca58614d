//! A parent under a policy takes sub-agents built under the same policy, with hooks of their
//! own; a parent under none takes any.

use agentix::event::BeforeTool;
use agentix::prelude::*;
use agentix::{delegate::AgentTool, pipeline::Policy};

#[hook(before_tool)]
async fn no_deletes(call: &ToolCall) -> Verdict<BeforeTool> {
    if call.name.starts_with("delete") { Verdict::reject("no") } else { Verdict::Continue }
}

#[hook(after_model)]
async fn own(message: &AssistantMessage) {
    let _ = message;
}

fn main() {
    let policy = Policy::new().hook(no_deletes);
    let researcher = Agent::builder(ScriptedModel::new()).policy(&policy).hook(own).build();
    let writer = Agent::builder(ScriptedModel::new()).policy(&policy).build();
    let _planner = Agent::builder(ScriptedModel::new())
        .policy(&policy)
        .sub_agent(AgentTool::new("research", "Looks things up.", &researcher))
        .sub_agent(AgentTool::new("write", "Writes.", std::sync::Arc::new(writer)))
        .hook(own)
        .build();
    let loose = Agent::builder(ScriptedModel::new()).build();
    let _free = Agent::builder(ScriptedModel::new())
        .sub_agent(AgentTool::new("research", "Looks things up.", researcher))
        .sub_agent(AgentTool::new("loose", "Anything.", loose))
        .build();
}
