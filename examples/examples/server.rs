//! An agent served over HTTP: conversations in memory, a turn per request, answered as JSON or
//! streamed as Server-Sent Events.
//!
//! Run it with `cargo run -p examples --example server` (`-- --addr 127.0.0.1:8080` to listen
//! elsewhere), then talk to it with curl; it prints how.

use std::net::SocketAddr;

use tower_http::trace::{DefaultMakeSpan, DefaultOnResponse, TraceLayer};
use tracing::Level;

#[tokio::main]
async fn main() {
    tracing_subscriber::fmt().with_target(false).init();
    let addr: SocketAddr = match parse_addr(std::env::args().skip(1)) {
        Ok(addr) => addr,
        Err(why) => {
            eprintln!("{why}\nusage: server [--addr HOST:PORT]   (default 127.0.0.1:3000)");
            std::process::exit(2);
        }
    };
    let listener = match tokio::net::TcpListener::bind(addr).await {
        Ok(listener) => listener,
        Err(error) => {
            eprintln!("cannot listen on {addr}: {error}");
            std::process::exit(1);
        }
    };
    // Each request logged with its method, path, status and latency.
    let trace = TraceLayer::new_for_http()
        .make_span_with(DefaultMakeSpan::new().level(Level::INFO))
        .on_response(DefaultOnResponse::new().level(Level::INFO));
    let router = examples::server::router(examples::server::demo_agent()).layer(trace);
    println!("{}", examples::server::usage(addr));
    let shutdown = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    if let Err(error) = axum::serve(listener, router).with_graceful_shutdown(shutdown).await {
        eprintln!("the server stopped: {error}");
        std::process::exit(1);
    }
}

fn parse_addr(mut args: impl Iterator<Item = String>) -> Result<SocketAddr, String> {
    let mut addr = SocketAddr::from(([127, 0, 0, 1], 3000));
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--addr" => {
                let value = args.next().ok_or("--addr needs HOST:PORT")?;
                addr = value.parse().map_err(|error| format!("--addr {value}: {error}"))?;
            }
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    Ok(addr)
}
