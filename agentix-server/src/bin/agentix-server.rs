//! `agentix-server`: the served agent as a program — who may call it (API keys, JWTs),
//! conversations in memory or a store, the model from `AGENTIX_MODEL`, requests logged with
//! their caller, SIGTERM letting running turns finish.
//!
//! `cargo run -p agentix-server -- --help` says how to run it.

#[tokio::main]
async fn main() -> std::process::ExitCode {
    agentix_server::cli::main().await
}
