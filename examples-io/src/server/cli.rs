//! The served agent as a program a team runs: its command line, its model from the environment,
//! request logging, a body limit, and a shutdown that lets running turns finish.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

use agentix::AnyAgent;
use agentix_genai::GenaiModel;
use agentix_store::Store;
use axum::extract::DefaultBodyLimit;
use tower_http::trace::{DefaultMakeSpan, DefaultOnResponse, TraceLayer};
use tracing::Level;

use super::{DemoModel, agent_over, server, usage};

/// What the command line asks for.
#[derive(Debug, PartialEq)]
pub struct Options {
    /// Where to listen.
    pub addr: SocketAddr,
    /// The store's URL; conversations in memory without one.
    pub database: Option<String>,
    /// The largest request body taken, in bytes.
    pub body_limit: usize,
    /// How long a shutdown waits for running turns.
    pub grace: Duration,
    /// How long each call of the demo model takes (no real model configured).
    pub demo_latency: Duration,
}

/// The command line's help.
pub const USAGE: &str = "usage: agentix-server [--addr HOST:PORT] [--database URL] \
     [--body-limit BYTES] [--grace SECONDS] [--demo-latency MS]\n\
     \n  --addr          where to listen (127.0.0.1:3000; port 0: any free port)\
     \n  --database      sqlite://FILE or postgres://… (conversations in memory without one)\
     \n  --body-limit    the largest request body taken (2097152: 2 MiB)\
     \n  --grace         how long SIGTERM or Ctrl-C waits for running turns (30)\
     \n  --demo-latency  how long each call of the demo model takes (0)\
     \n\nThe model: AGENTIX_MODEL (openai:gpt-4.1-mini, anthropic:claude-sonnet-4-5, …) with the \
     provider's key, AGENTIX_ENDPOINT for a server of your own; the demo model when unset.";

/// Reads the command line (without the program's name).
pub fn parse_args(mut args: impl Iterator<Item = String>) -> Result<Options, String> {
    let mut options = Options {
        addr: SocketAddr::from(([127, 0, 0, 1], 3000)),
        database: None,
        body_limit: 2 * 1024 * 1024,
        grace: Duration::from_secs(30),
        demo_latency: Duration::ZERO,
    };
    let value = |flag: &str, args: &mut dyn Iterator<Item = String>| {
        args.next().ok_or_else(|| format!("{flag} needs a value"))
    };
    while let Some(arg) = args.next() {
        let number = |flag: &str, text: String| {
            text.parse::<u64>().map_err(|error| format!("{flag} {text}: {error}"))
        };
        match arg.as_str() {
            "--addr" => {
                let text = value("--addr", &mut args)?;
                options.addr = text.parse().map_err(|error| format!("--addr {text}: {error}"))?;
            }
            "--database" => options.database = Some(value("--database", &mut args)?),
            "--body-limit" => {
                let limit = number("--body-limit", value("--body-limit", &mut args)?)?;
                options.body_limit = usize::try_from(limit).unwrap_or(usize::MAX);
            }
            "--grace" => {
                options.grace =
                    Duration::from_secs(number("--grace", value("--grace", &mut args)?)?);
            }
            "--demo-latency" => {
                let millis = number("--demo-latency", value("--demo-latency", &mut args)?)?;
                options.demo_latency = Duration::from_millis(millis);
            }
            "--help" | "-h" => return Err(String::new()),
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    Ok(options)
}

/// The model `AGENTIX_MODEL` names (read through `var`), with its key; `None` when unset.
pub fn model_from(var: impl Fn(&str) -> Option<String>) -> Result<Option<GenaiModel>, String> {
    let Some(spec) = var("AGENTIX_MODEL") else { return Ok(None) };
    let mut builder = GenaiModel::builder(&spec);
    let endpoint = var("AGENTIX_ENDPOINT");
    if let Some(endpoint) = &endpoint {
        builder = builder.endpoint(endpoint);
    }
    let key = builder.key_variable().map_err(|error| error.to_string())?;
    match key.map(|name| (name, var(name))) {
        Some((_, Some(key))) => builder = builder.api_key(key),
        // A server of your own may want no key (vLLM, LM Studio).
        Some((_, None)) if endpoint.is_some() => builder = builder.api_key("none"),
        Some((name, None)) => return Err(format!("AGENTIX_MODEL={spec} needs {name}")),
        None => {}
    }
    builder.build().map(Some).map_err(|error| error.to_string())
}

/// Runs the server the command line and the environment describe, until SIGTERM or Ctrl-C.
/// Exits 0 when every running turn finished within the grace, 1 when the grace (or a second
/// signal) cut some (their whole steps are in the store), 2 for a bad command line, 3 when the
/// server could not start.
pub async fn main() -> ExitCode {
    tracing_subscriber::fmt().with_target(false).init();
    let options = match parse_args(std::env::args().skip(1)) {
        Ok(options) => options,
        Err(why) if why.is_empty() => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(why) => {
            eprintln!("{why}\n{USAGE}");
            return ExitCode::from(BAD_COMMAND_LINE);
        }
    };
    let store = match &options.database {
        None => None,
        Some(url) => match Store::open(url).await {
            Ok(store) => Some(store),
            Err(error) => {
                eprintln!("cannot open the store {url}: {error}");
                return ExitCode::from(STARTUP_FAILED);
            }
        },
    };
    match model_from(|name| std::env::var(name).ok()) {
        Ok(Some(model)) => {
            let spec = std::env::var("AGENTIX_MODEL").unwrap_or_default();
            println!("The model: {spec}.");
            serve(agent_over(model), store, &options).await
        }
        Ok(None) => {
            println!("The model: the demo model (set AGENTIX_MODEL for a real one).");
            serve(agent_over(DemoModel { latency: options.demo_latency }), store, &options).await
        }
        Err(why) => {
            eprintln!("cannot use the model: {why}");
            ExitCode::from(STARTUP_FAILED)
        }
    }
}

async fn serve<R: AnyAgent + 'static>(
    agent: R,
    store: Option<Store>,
    options: &Options,
) -> ExitCode {
    let listener = match tokio::net::TcpListener::bind(options.addr).await {
        Ok(listener) => listener,
        Err(error) => {
            eprintln!("cannot listen on {}: {error}", options.addr);
            return ExitCode::from(STARTUP_FAILED);
        }
    };
    let addr = listener.local_addr().unwrap_or(options.addr);
    let stored = options.database.clone();
    let served = server(agent, store);
    // Each request logged with its method, path, status and latency.
    let trace = TraceLayer::new_for_http()
        .make_span_with(DefaultMakeSpan::new().level(Level::INFO))
        .on_response(DefaultOnResponse::new().level(Level::INFO));
    let router =
        served.router.clone().layer(DefaultBodyLimit::max(options.body_limit)).layer(trace);
    println!("{}", usage(addr));
    if let Some(url) = &stored {
        println!("Conversations are kept in {url}.");
    }
    let stop = std::sync::Arc::new(tokio::sync::Notify::new());
    let stopped = {
        let stop = std::sync::Arc::clone(&stop);
        async move { stop.notified().await }
    };
    let serving = axum::serve(listener, router).with_graceful_shutdown(stopped).into_future();
    let mut serving = std::pin::pin!(serving);
    tokio::select! {
        served = &mut serving => {
            if let Err(error) = served {
                eprintln!("the server stopped: {error}");
            }
            return ExitCode::from(STARTUP_FAILED);
        }
        () = stop_signal() => {}
    }
    // From the signal on: no new turns, no new connections, the grace counted.
    let deadline = tokio::time::Instant::now() + options.grace;
    served.stop();
    stop.notify_one();
    tracing::info!(
        "stopping: no new requests; running turns may finish within {:?}",
        options.grace
    );
    tokio::spawn(async {
        stop_signal().await;
        eprintln!("stopping now: a second signal");
        std::process::exit(i32::from(TURNS_CUT));
    });
    // In-flight requests finish, each its turn; then the turns whose clients went away.
    let requests_done = tokio::time::timeout_at(deadline, &mut serving).await.is_ok();
    let turns_done = served.drain(deadline).await;
    if requests_done && turns_done {
        tracing::info!("stopped: every running turn finished");
        ExitCode::SUCCESS
    } else {
        let cut = served.running_turns();
        eprintln!(
            "stopped past the grace of {:?}: {cut} turn(s) cut, their whole steps kept",
            options.grace
        );
        ExitCode::from(TURNS_CUT)
    }
}

/// The exit code when the grace cut turns (or requests) short.
const TURNS_CUT: u8 = 1;
/// The exit code for a bad command line.
const BAD_COMMAND_LINE: u8 = 2;
/// The exit code when the server could not start (the store, the address, the model) or
/// stopped on its own.
const STARTUP_FAILED: u8 = 3;

/// SIGTERM (what container runtimes send), or Ctrl-C.
async fn stop_signal() {
    #[cfg(unix)]
    {
        let mut terminate =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(terminate) => terminate,
                Err(_) => {
                    let _ = tokio::signal::ctrl_c().await;
                    return;
                }
            };
        tokio::select! {
            _ = terminate.recv() => {}
            _ = tokio::signal::ctrl_c() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(words: &str) -> impl Iterator<Item = String> {
        words.split_whitespace().map(str::to_owned).collect::<Vec<_>>().into_iter()
    }

    #[test]
    fn the_command_line_reads_each_flag_and_refuses_what_it_does_not_know() {
        let options = parse_args(args(
            "--addr 0.0.0.0:8080 --database sqlite://chats.db --body-limit 1024 --grace 5 \
             --demo-latency 250",
        ))
        .unwrap();
        assert_eq!(options.addr, "0.0.0.0:8080".parse().unwrap());
        assert_eq!(options.database.as_deref(), Some("sqlite://chats.db"));
        assert_eq!(options.body_limit, 1024);
        assert_eq!(options.grace, Duration::from_secs(5));
        assert_eq!(options.demo_latency, Duration::from_millis(250));
        assert_eq!(parse_args(args("--port 80")).unwrap_err(), "unknown argument `--port`");
        assert_eq!(parse_args(args("--addr")).unwrap_err(), "--addr needs a value");
        assert!(parse_args(args("--grace soon")).unwrap_err().starts_with("--grace soon:"));
    }

    #[test]
    fn the_model_comes_from_the_environment_and_a_missing_key_is_an_error() {
        let none = |_: &str| None;
        assert!(model_from(none).unwrap().is_none());
        let without_key =
            |name: &str| (name == "AGENTIX_MODEL").then(|| "openai:gpt-4.1-mini".to_owned());
        assert_eq!(
            model_from(without_key).unwrap_err(),
            "AGENTIX_MODEL=openai:gpt-4.1-mini needs OPENAI_API_KEY"
        );
        let with_key = |name: &str| match name {
            "AGENTIX_MODEL" => Some("openai:gpt-4.1-mini".to_owned()),
            "OPENAI_API_KEY" => Some("sk-test".to_owned()),
            _ => None,
        };
        assert!(model_from(with_key).unwrap().is_some());
    }
}
