//! Serving a router on a listener, as `axum::serve` does, but cutting the connections that
//! stall their headers (axum's sets no deadline: a client sending a byte a minute holds a
//! connection forever), and stopping gracefully.

use std::future::Future;
use std::io;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tower::ServiceExt;

/// How long a client may take to send a request's headers, unless told.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// Serves `router` on `listener` over HTTP/1.1 until `stop` completes, then stops accepting and
/// waits for the connections open to finish their requests (idle ones close at once). A
/// connection whose request headers take longer than `header_timeout` to arrive is closed.
///
/// ```no_run
/// use std::time::Duration;
///
/// # async fn run(router: axum::Router) -> std::io::Result<()> {
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:3000").await?;
/// let stop = async { tokio::signal::ctrl_c().await.ok(); };
/// agentix_server::serve(listener, router, Duration::from_secs(10), stop).await
/// # }
/// ```
pub async fn serve(
    listener: TcpListener,
    router: Router,
    header_timeout: Duration,
    stop: impl Future<Output = ()>,
) -> io::Result<()> {
    let graceful = GracefulShutdown::new();
    let mut stop = std::pin::pin!(stop);
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut stop => break,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            // The connection went away before it was taken, or the process is out of file
            // descriptors for a moment: go on accepting (after a pause, for the second).
            Err(error) if is_connection_error(&error) => continue,
            Err(error) => {
                tracing::warn!(%error, "accepting a connection failed");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let service =
            router.clone().map_request(|request: Request<Incoming>| request.map(Body::new));
        let connection = hyper::server::conn::http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(header_timeout)
            .serve_connection(TokioIo::new(stream), TowerToHyperService::new(service));
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            if let Err(error) = connection.await {
                tracing::debug!(%error, "a connection ended with an error");
            }
        });
    }
    drop(listener);
    graceful.shutdown().await;
    Ok(())
}

fn is_connection_error(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
    )
}
