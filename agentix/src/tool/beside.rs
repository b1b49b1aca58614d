//! Two tool sets as one: a set whose names are known only at run time (a sub-agent's, an MCP
//! server's) beside the agent's others.

use crate::message::{ToolCall, ToolResult};
use crate::turn::Turn;

use super::{NameList, OutputHooks, ToolId, ToolOrigin, ToolSet, ToolSpec};

/// The tool set `Rest` with `Added` beside it: a call goes to `Added` if it has a tool of the
/// call's name, else to `Rest`. Built by
/// [`AgentBuilder::sub_agent`](crate::AgentBuilder::sub_agent).
#[derive(Debug)]
pub struct Beside<Rest, Added> {
    rest: Rest,
    added: Added,
}

impl<Rest, Added> Beside<Rest, Added> {
    pub(crate) fn new(rest: Rest, added: Added) -> Self {
        Beside { rest, added }
    }
}

impl<Rest: ToolSet, Added: ToolSet> ToolSet for Beside<Rest, Added> {
    // `Added`'s names are known only at run time: a typed tool added later of one of them
    // takes its place (as beside an MCP server's).
    const NAMES: Option<&'static NameList> = None;
    const HAS_ORIGINS: bool = Rest::HAS_ORIGINS || Added::HAS_ORIGINS;
    const CHANGES: bool = Rest::CHANGES || Added::CHANGES;
    const NESTS: bool = Rest::NESTS || Added::NESTS;

    fn nests(&self, name: &str) -> bool {
        (Added::NESTS && self.added.nests(name)) || (Rest::NESTS && self.rest.nests(name))
    }

    fn specs(&self, specs: &mut Vec<ToolSpec>) {
        self.rest.specs(specs);
        self.added.specs(specs);
    }

    fn tool_id(&self, name: &str) -> Option<ToolId> {
        self.added.tool_id(name).or_else(|| self.rest.tool_id(name))
    }

    fn origin(&self, name: &str) -> Option<std::sync::Arc<ToolOrigin>> {
        self.added.origin(name).or_else(|| self.rest.origin(name))
    }

    fn generation(&self) -> u64 {
        self.rest.generation().wrapping_add(self.added.generation())
    }

    async fn call(&self, call: &ToolCall, turn: &Turn) -> Option<ToolResult> {
        match self.added.call(call, turn).await {
            Some(result) => Some(result),
            None => self.rest.call(call, turn).await,
        }
    }

    async fn call_hooked<H: OutputHooks>(
        &self,
        call: &ToolCall,
        turn: &Turn,
        hooks: &H,
    ) -> Option<ToolResult> {
        match self.added.call_hooked(call, turn, hooks).await {
            Some(result) => Some(result),
            None => self.rest.call_hooked(call, turn, hooks).await,
        }
    }
}
