//! The core's examples' code, one module per example, so that tests can run each one and check
//! what it does; `examples/` holds the thin `main`s that `cargo run -p examples --example NAME`
//! runs. They need agentix, tokio and (for `mcp_agent`) agentix-mcp without HTTP only: the
//! examples that reach a provider, a store, Restate or HTTP are in `examples-io`.

pub mod bicameral_critic;
pub mod cache_stop;
pub mod human_approval;
pub mod mcp_agent;
pub mod plan_retry;
pub mod planner;
pub mod quickstart;
pub mod redaction;
pub mod research_team;
pub mod resilient_model;
pub mod retrieval;
pub mod running_summary;
pub mod tool_error_enrichment;
pub mod trace;
pub mod typed_output;
pub mod typed_tools;
pub mod weather;
