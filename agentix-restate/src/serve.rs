//! Serving the endpoint over HTTP/2 with `TCP_NODELAY`.

use std::future::Future;
use std::io;

use hyper::server::conn::http2;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::graceful::GracefulShutdown;
use restate_sdk::endpoint::Endpoint;
use restate_sdk::hyper::HyperEndpoint;
use tokio::net::TcpListener;

/// Serves `endpoint` to restate-server on `listener` until `shutdown` completes, then lets the
/// connections open finish.
///
/// restate-sdk's own `HttpServer` leaves Nagle's algorithm on: each journaled step after a
/// turn's first then waits for the peer's delayed ACK (~40 ms). Here every connection sets
/// `TCP_NODELAY`.
pub async fn serve(
    endpoint: Endpoint,
    listener: TcpListener,
    shutdown: impl Future<Output = ()>,
) -> io::Result<()> {
    let endpoint = HyperEndpoint::new(endpoint);
    let graceful = GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let (stream, _) = accepted?;
                stream.set_nodelay(true)?;
                let connection = http2::Builder::new(TokioExecutor::new())
                    .serve_connection(TokioIo::new(stream), endpoint.clone());
                let connection = graceful.watch(connection);
                tokio::spawn(async move {
                    // A connection restate-server dropped: it reconnects and retries.
                    let _ = connection.await;
                });
            }
            () = &mut shutdown => break,
        }
    }
    graceful.shutdown().await;
    Ok(())
}
