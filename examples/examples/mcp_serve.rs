//! The mcp_agent example's notes service — an agent's `#[tool]`s behind its policy hook —
//! served as an MCP server over this process's standard input and output, for any MCP client
//! (the npm `@modelcontextprotocol/inspector-cli` checks it in `scripts/mcp-servers.sh`).
//!
//! Run it with `cargo run -p examples --example mcp_serve` (it waits for a client on stdin).

#[tokio::main(flavor = "current_thread")]
async fn main() {
    if let Err(error) = examples::mcp_agent::notes_service().serve_stdio().await {
        eprintln!("{error}");
        std::process::exit(1);
    }
}
