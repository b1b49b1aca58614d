//! An agent served over HTTP: conversations in memory, a turn per request, answered as JSON or
//! streamed as Server-Sent Events.
//!
//! Run it with `cargo run -p examples-io --example server` (`-- --addr 127.0.0.1:8080` to listen
//! elsewhere), then talk to it with curl; it prints how. With `-- --database URL`
//! (`sqlite://chats.db`; `postgres://…` with `--features postgres`) the conversations are kept
//! in that store: a restarted server goes on with them, and servers sharing a PostgreSQL store
//! serve one pool of conversations.

use std::net::SocketAddr;

use tower_http::trace::{DefaultMakeSpan, DefaultOnResponse, TraceLayer};
use tracing::Level;

#[tokio::main]
async fn main() {
    tracing_subscriber::fmt().with_target(false).init();
    let Options { addr, database } = match parse_args(std::env::args().skip(1)) {
        Ok(options) => options,
        Err(why) => {
            eprintln!(
                "{why}\nusage: server [--addr HOST:PORT] [--database URL]   \
                 (default 127.0.0.1:3000, conversations in memory)"
            );
            std::process::exit(2);
        }
    };
    let store = match &database {
        None => None,
        Some(url) => match agentix_store::Store::open(url).await {
            Ok(store) => Some(store),
            Err(error) => {
                eprintln!("cannot open the store {url}: {error}");
                std::process::exit(1);
            }
        },
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
    let agent = examples_io::server::demo_agent();
    let router = match store {
        Some(store) => examples_io::server::router_with_store(agent, store),
        None => examples_io::server::router(agent),
    };
    let router = router.layer(trace);
    println!("{}", examples_io::server::usage(addr));
    if let Some(url) = &database {
        println!("Conversations are kept in {url}.");
    }
    let shutdown = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    if let Err(error) = axum::serve(listener, router).with_graceful_shutdown(shutdown).await {
        eprintln!("the server stopped: {error}");
        std::process::exit(1);
    }
}

/// What the command line asks for.
struct Options {
    addr: SocketAddr,
    database: Option<String>,
}

fn parse_args(mut args: impl Iterator<Item = String>) -> Result<Options, String> {
    let mut options = Options { addr: SocketAddr::from(([127, 0, 0, 1], 3000)), database: None };
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--addr" => {
                let value = args.next().ok_or("--addr needs HOST:PORT")?;
                options.addr = value.parse().map_err(|error| format!("--addr {value}: {error}"))?;
            }
            "--database" => {
                options.database = Some(args.next().ok_or("--database needs a store URL")?);
            }
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    Ok(options)
}
