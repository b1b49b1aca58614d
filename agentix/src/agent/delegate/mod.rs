//! Work given to another agent: a sub-agent called as a tool ([`SubAgent`], [`AgentTool`]),
//! or an agent the turn is handed to ([`Handoff`]); and the tools of an agent with such agents
//! beside them, called by a name known only at run time ([`Delegates`]).

use std::future::Future;
use std::sync::Arc;

use crate::message::{ToolCall, ToolResult};
use crate::pipeline::node::{HasTool, There};
use crate::tool::{NameList, ToolId, ToolOrigin, ToolRunner, ToolSet, ToolSpec};
use crate::turn::Turn;

mod delegation;
mod handoff;
mod sub_agent;

use delegation::Delegation;

pub use handoff::{Handoff, History};
pub use sub_agent::{AgentTool, Prompt, SubAgent};

/// The tool set `Rest` with another agent beside it: a call of its tool runs it, any other
/// goes to `Rest`. Built by [`AgentBuilder::sub_agent`](crate::AgentBuilder::sub_agent) and
/// [`AgentBuilder::handoff`](crate::AgentBuilder::handoff), the one way to give an agent
/// another — where its policy is checked.
#[derive(Debug)]
pub struct Delegates<Rest, D> {
    rest: Rest,
    delegation: D,
}

/// An agent's tools with a sub-agent beside them.
pub type SubAgents<Rest, R, I> = Delegates<Rest, AgentTool<R, I>>;

/// An agent's tools with an agent to hand the turn to beside them.
pub type Handoffs<Rest, R> = Delegates<Rest, Handoff<R>>;

impl<Rest, D> Delegates<Rest, D> {
    pub(crate) fn new(rest: Rest, delegation: D) -> Self {
        Delegates { rest, delegation }
    }
}

impl<Rest: ToolSet, D: Delegation> ToolSet for Delegates<Rest, D> {
    // The other agent's name is known only at run time; `build` refuses two tools of one name.
    const NAMES: Option<&'static NameList> = Rest::NAMES;
    const HAS_ORIGINS: bool = Rest::HAS_ORIGINS;
    const CHANGES: bool = Rest::CHANGES;
    const NESTS: bool = true;
    const HANDS_OFF: bool = Rest::HANDS_OFF || D::HANDS_OFF;

    fn specs(&self, specs: &mut Vec<ToolSpec>) {
        self.rest.specs(specs);
        specs.push(self.delegation.spec());
    }

    fn tool_id(&self, name: &str) -> Option<ToolId> {
        if name == self.delegation.tool_name() { None } else { self.rest.tool_id(name) }
    }

    fn origin(&self, name: &str) -> Option<Arc<ToolOrigin>> {
        if name == self.delegation.tool_name() { None } else { self.rest.origin(name) }
    }

    fn generation(&self) -> u64 {
        self.rest.generation()
    }

    // A sub-agent's turn is a new turn each time it is called: never the same effect twice.
    fn idempotent(&self, name: &str) -> bool {
        name != self.delegation.tool_name() && self.rest.idempotent(name)
    }

    fn nests(&self, name: &str) -> bool {
        name == self.delegation.tool_name() || (Rest::NESTS && self.rest.nests(name))
    }

    const HAS_SEQUENTIAL: bool = true;

    fn sequential(&self, name: &str) -> bool {
        if name == self.delegation.tool_name() {
            self.delegation.runs_alone()
        } else {
            Rest::HAS_SEQUENTIAL && self.rest.sequential(name)
        }
    }

    fn call(
        &self,
        call: &ToolCall,
        turn: &Turn,
    ) -> impl Future<Output = Option<ToolResult>> + Send {
        self.call_hooked(call, turn, &())
    }

    async fn call_hooked<H: ToolRunner>(
        &self,
        call: &ToolCall,
        turn: &Turn,
        hooks: &H,
    ) -> Option<ToolResult> {
        if call.name == self.delegation.tool_name() {
            Some(self.delegation.run(call, turn, hooks).await)
        } else {
            self.rest.call_hooked(call, turn, hooks).await
        }
    }
}

/// A per-tool hook's tool, among the tools beside the other agent.
#[diagnostic::do_not_recommend]
impl<Rest: HasTool<T, Index>, D, T: crate::Tool, Index> HasTool<T, There<Index>>
    for Delegates<Rest, D>
{
}
