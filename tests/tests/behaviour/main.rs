//! The behaviour tests of agentix, one module per concern, in one test binary (the allocation
//! counts are in `tests/allocations.rs`, a binary of their own for its counting allocator).

mod agent;
mod both_paths;
mod boxed;
mod changing_tools;
mod composition;
mod containment;
mod context;
mod failure_policy;
mod handoffs;
mod hook_names;
mod in_place;
mod journal;
mod long_conversations;
mod macro_hooks;
mod order;
mod panics;
mod paths;
mod redaction;
mod retries;
mod serde;
mod session_stops;
mod sessions;
mod state_machine;
mod stored_format;
mod streaming;
mod sub_agents;
mod suspended_approvals;
mod together;
mod typed_answers;
mod typed_hooks;
mod typed_tools;
mod usage;
mod validation;
mod verdicts;
mod wrap;
