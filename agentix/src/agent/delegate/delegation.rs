//! What each kind of delegate does with a call of its tool: the one trait the delegates' tool
//! set calls through.

use std::future::Future;

use crate::message::{ToolCall, ToolResult};
use crate::tool::{ToolRunner, ToolSpec};
use crate::turn::Turn;

/// What another agent beside an agent's tools does with a call of its tool. Public in name only
/// (this module is private).
pub trait Delegation: Send + Sync {
    /// Whether a call hands the rest of the turn over ([`ToolSet::HANDS_OFF`](crate::tool::ToolSet::HANDS_OFF)).
    const HANDS_OFF: bool;

    /// The tool's name.
    fn tool_name(&self) -> &str;

    /// The tool's spec, for the model.
    fn spec(&self) -> ToolSpec;

    /// Whether a call runs alone, never beside the step's other calls: one that hands the
    /// turn over, or goes on from what the agent said in the step's earlier calls.
    fn runs_alone(&self) -> bool;

    /// Runs the other agent for `call`, inside the parent's `turn`, reaching it through
    /// `hooks`.
    fn run<H: ToolRunner>(
        &self,
        call: &ToolCall,
        turn: &Turn,
        hooks: &H,
    ) -> impl Future<Output = ToolResult> + Send;
}
