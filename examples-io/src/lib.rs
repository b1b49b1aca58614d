//! The examples that reach outside the process, one module per example, so that tests can run
//! each one and check what it does; `examples/` holds the thin `main`s that
//! `cargo run -p examples-io --example NAME` runs. Each uses a crate around the core: a real
//! provider (`agentix-genai`), a store (`agentix-store`), Restate (`agentix-restate`) or a
//! `tracing` subscriber. The served agent is a crate of its own, `agentix-server`.

pub mod durable_agent;
pub mod persistent_chat;
pub mod real_model;
pub mod telemetry;

/// The guide's chapter on traces, whose export example builds with this crate's dependencies.
#[cfg(doctest)]
#[doc = include_str!("../../docs/telemetry.md")]
struct TelemetryGuide;
