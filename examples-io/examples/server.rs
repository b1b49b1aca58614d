//! An agent served over HTTP: conversations in memory, a turn per request, answered as JSON or
//! streamed as Server-Sent Events; approvals, health and readiness over HTTP too.
//!
//! Run it with `cargo run -p examples-io --example server` (`-- --addr 127.0.0.1:8080` to listen
//! elsewhere, `-- --help` for the rest), then talk to it with curl; it prints how. With
//! `-- --database URL` (`sqlite://chats.db`; `postgres://…` with `--features postgres`) the
//! conversations are kept in that store: a restarted server goes on with them, and servers
//! sharing a PostgreSQL store serve one pool of conversations. The same program is the
//! `agentix-server` binary.

#[tokio::main]
async fn main() -> std::process::ExitCode {
    examples_io::server::cli::main().await
}
