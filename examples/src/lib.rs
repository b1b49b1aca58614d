//! The examples' code, one module per example, so that tests can run each one and check what it
//! does; `examples/` holds the thin `main`s that `cargo run -p examples --example NAME` runs.

pub mod quickstart;
pub mod redaction;
pub mod retrieval_and_summary;
