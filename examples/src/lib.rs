//! The examples' code, one module per example, so that tests can run each one and check what it
//! does; `examples/` holds the thin `main`s that `cargo run -p examples --example NAME` runs.

use agentix::{ModelRequest, Part, ToolResult};

pub mod bicameral_critic;
pub mod cache_stop;
pub mod human_approval;
pub mod plan_retry;
pub mod quickstart;
pub mod redaction;
pub mod resilient_model;
pub mod retrieval;
pub mod running_summary;
pub mod telemetry;
pub mod tool_error_enrichment;
pub mod trace;

/// The tool results a request carries, in order.
pub fn tool_results(request: &ModelRequest) -> Vec<ToolResult> {
    request
        .messages
        .iter()
        .flat_map(|message| &message.content)
        .filter_map(|part| match part {
            Part::ToolResult(result) => Some(result.clone()),
            _ => None,
        })
        .collect()
}
