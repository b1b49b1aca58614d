//! Serving the endpoint over HTTP/2 with `TCP_NODELAY`.

use std::future::Future;
use std::time::Duration;

use hyper::server::conn::http2;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::graceful::GracefulShutdown;
use restate_sdk::endpoint::Endpoint;
use restate_sdk::hyper::HyperEndpoint;
use tokio::net::TcpListener;

/// Serves `endpoint` to restate-server on `listener` until `shutdown` completes, then lets the
/// open connections finish, for at most 10 seconds: it returns then, leaving the rest to end
/// with the process (restate-server runs their turns again).
///
/// restate-sdk's own `HttpServer` leaves Nagle's algorithm on: a turn's steps then wait for
/// the peer's delayed ACK (~40 ms a turn, measured in BENCHMARKS.md). Here every connection
/// sets `TCP_NODELAY`. A connection that fails to accept is skipped: restate-server
/// connects again.
pub async fn serve(endpoint: Endpoint, listener: TcpListener, shutdown: impl Future<Output = ()>) {
    let endpoint = HyperEndpoint::new(endpoint);
    let graceful = GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else {
                    // Out of descriptors, a connection reset before it was taken: wait, go on.
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                };
                // Without it the connection still serves, only slower.
                let _ = stream.set_nodelay(true);
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
    // restate-server holds a turn's stream open until the turn ends: bounded.
    let _ = tokio::time::timeout(Duration::from_secs(10), graceful.shutdown()).await;
}
