//! `agentix-server`: the served agent as a program — conversations in memory or a store, the
//! model from `AGENTIX_MODEL`, requests logged, SIGTERM letting running turns finish.
//!
//! `cargo run -p examples-io --bin agentix-server -- --help` says how to run it.

#[tokio::main]
async fn main() -> std::process::ExitCode {
    examples_io::server::cli::main().await
}
