//! A parent under a policy hands its turn only to an agent under it.

use agentix::event::BeforeTool;
use agentix::prelude::*;
use agentix::{delegate::Handoff, pipeline::Policy};

#[hook(before_tool)]
async fn no_deletes(call: &ToolCall) -> Verdict<BeforeTool> {
    if call.name.starts_with("delete") { Verdict::reject("no") } else { Verdict::Continue }
}

fn main() {
    let policy = Policy::new().hook(no_deletes);
    let billing = Agent::builder(ScriptedModel::new()).build();
    let _triage = Agent::builder(ScriptedModel::new())
        .policy(&policy)
        .handoff(Handoff::new("billing", "Invoices.", billing))
        .build();
}
