//! An MCP server's tools under the agent's typed hooks: an in-process notes service served
//! over MCP by default, or any MCP server over stdio with `--server "COMMAND ARGS…"`.
//!
//! Run it with `cargo run -p examples --example mcp_agent`, or
//! `cargo run -p examples --example mcp_agent -- --server "npx -y @modelcontextprotocol/server-everything"`.

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mut args = std::env::args().skip(1);
    let server = match (args.next().as_deref(), args.next()) {
        (None, _) => None,
        (Some("--server"), Some(command)) => Some(command),
        _ => {
            eprintln!("usage: mcp_agent [--server \"COMMAND ARGS…\"]");
            std::process::exit(2);
        }
    };
    match examples::mcp_agent::run(server.as_deref(), &|line| println!("{line}")).await {
        Ok((Ok(_), _)) => {}
        Ok((Err(_), _)) => std::process::exit(1),
        Err(error) => {
            eprintln!("{error}");
            std::process::exit(1);
        }
    }
}
