//! An agent whose turns survive a crash, served to restate-server (`agentix-restate`). It
//! starts nothing else: it prints how to start restate-server, register the service and talk
//! to it.
//!
//! Run it with `cargo run -p examples-io --example durable_agent` (`-- --addr HOST:PORT` to listen
//! elsewhere than 127.0.0.1:9080; `RESTATE_INGRESS` and `RESTATE_ADMIN` if restate-server's
//! are not on localhost:8080 and :9070).

use std::net::SocketAddr;

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let addr: SocketAddr = match (args.next().as_deref(), args.next()) {
        (None, _) => SocketAddr::from(([127, 0, 0, 1], 9080)),
        (Some("--addr"), Some(addr)) => match addr.parse() {
            Ok(addr) => addr,
            Err(error) => {
                eprintln!("--addr {addr}: {error}");
                std::process::exit(2);
            }
        },
        _ => {
            eprintln!("usage: durable_agent [--addr HOST:PORT]   (default 127.0.0.1:9080)");
            std::process::exit(2);
        }
    };
    let ingress =
        std::env::var("RESTATE_INGRESS").unwrap_or_else(|_| "http://localhost:8080".into());
    let admin = std::env::var("RESTATE_ADMIN").unwrap_or_else(|_| "http://localhost:9070".into());
    let listener = match tokio::net::TcpListener::bind(addr).await {
        Ok(listener) => listener,
        Err(error) => {
            eprintln!("cannot listen on {addr}: {error}");
            std::process::exit(1);
        }
    };
    println!("{}\n", examples_io::durable_agent::usage(addr, &ingress, &admin));
    let outbox = examples_io::durable_agent::Outbox::default();
    let conversations = examples_io::durable_agent::conversations(outbox, &ingress);
    let endpoint =
        agentix_restate::restate_sdk::endpoint::Endpoint::builder().bind(conversations).build();
    let shutdown = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    agentix_restate::serve(endpoint, listener, shutdown).await;
}
