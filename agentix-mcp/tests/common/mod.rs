//! What the MCP tests share: the tool results of a conversation, and an rmcp server served on
//! an in-memory pipe.

#![allow(dead_code)]

pub mod desk;

/// Every tool result of the conversation's log, in order.
#[allow(unused_imports)] // not every test binary reads the log
pub use tests::logged_results as tool_results;

/// Serves `server` on one end of an in-memory pipe until the pipe closes (or the returned task
/// is aborted, which ends the server); the other end is the client's.
pub fn serve_in_memory<S: rmcp::ServerHandler>(
    server: S,
) -> (tokio::io::DuplexStream, tokio::task::JoinHandle<()>) {
    use rmcp::ServiceExt;
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let running = tokio::spawn(async move {
        if let Ok(running) = server.serve(theirs).await {
            let _ = running.waiting().await;
        }
    });
    (ours, running)
}
