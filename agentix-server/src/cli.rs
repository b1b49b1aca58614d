//! The served agent as a program a team runs: its command line, who may call it (API keys,
//! JWTs), its model from the environment, request logging naming each caller, a body limit,
//! and a shutdown that lets running turns finish.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use agentix::AnyAgent;
use agentix_genai::GenaiModel;
use agentix_store::Store;
use axum::extract::DefaultBodyLimit;
use axum::http::Request;
use tower_http::trace::{DefaultOnResponse, TraceLayer};
use tracing::Level;

use crate::demo::{DemoModel, agent_over, usage};
use crate::identity::{Anonymous, ApiKeys, Authenticate, Identity, Jwt};
use crate::{Access, Hosts, Limits, Origins, Server};

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
    /// The file of API keys (`sha256:HEX SUBJECT [ROLES]` lines).
    pub keys: Option<PathBuf>,
    /// The variable holding the HS256 secret JWTs are signed with.
    pub jwt_secret_env: Option<String>,
    /// The public key (PEM, RSA or P-256) JWTs are signed with.
    pub jwt_key: Option<PathBuf>,
    /// The JWKS file whose keys JWTs are signed with.
    pub jwt_jwks: Option<PathBuf>,
    /// The audience JWTs must name.
    pub jwt_audience: Option<String>,
    /// The issuer JWTs must name.
    pub jwt_issuer: Option<String>,
    /// The claim JWTs carry roles in.
    pub jwt_roles_claim: Option<String>,
    /// A key made for this run, for this subject (with the approver role).
    pub dev_key: Option<String>,
    /// Requests without credentials are let in, as `anonymous`.
    pub anonymous: bool,
    /// More names the server answers to, besides the loopback ones and the bound address.
    pub hosts: Vec<String>,
    /// Any `Host` is taken (a proxy in front checks it).
    pub any_host: bool,
    /// Origins whose pages may call the server (with CORS).
    pub cors: Vec<String>,
    /// The role that reads every conversation.
    pub read_all_role: Option<String>,
    /// The role that acts on every conversation.
    pub answer_all_role: Option<String>,
    /// The role approvals need (`approver`); `None` with `owners_approve`.
    pub approver_role: String,
    /// Whoever may act on a conversation answers its approvals: no role needed.
    pub owners_approve: bool,
    /// The subject conversations stored without an owner are given to.
    pub unowned_owner: Option<String>,
    /// Requests a second per subject (0: no limit).
    pub rate: f64,
    /// Requests a subject may send at once.
    pub burst: u32,
    /// Turns a subject may have running at once (0: no limit).
    pub turns: usize,
    /// How long a client may take to send a request's headers.
    pub header_timeout: Duration,
    /// The agent's tools served over MCP at `/mcp` too.
    pub mcp: bool,
}

impl Default for Options {
    fn default() -> Self {
        let limits = Limits::default();
        Options {
            addr: SocketAddr::from(([127, 0, 0, 1], 3000)),
            database: None,
            body_limit: 2 * 1024 * 1024,
            grace: Duration::from_secs(30),
            demo_latency: Duration::ZERO,
            keys: None,
            jwt_secret_env: None,
            jwt_key: None,
            jwt_jwks: None,
            jwt_audience: None,
            jwt_issuer: None,
            jwt_roles_claim: None,
            dev_key: None,
            anonymous: false,
            hosts: Vec::new(),
            any_host: false,
            cors: Vec::new(),
            read_all_role: None,
            answer_all_role: None,
            approver_role: "approver".to_owned(),
            owners_approve: false,
            unowned_owner: None,
            rate: limits.per_second(),
            burst: limits.burst(),
            turns: limits.turns_at_once(),
            header_timeout: crate::HEADER_TIMEOUT,
            mcp: false,
        }
    }
}

/// The command line's help.
pub const USAGE: &str = "usage: agentix-server [OPTIONS]\n       agentix-server new-key SUBJECT [ROLE,ROLE…]\n\
     \nServing:\
     \n  --addr HOST:PORT        where to listen (127.0.0.1:3000; port 0: any free port)\
     \n  --database URL          sqlite://FILE or postgres://… (conversations in memory without one;\
     \n                          AGENTIX_DATABASE_URL holds it too, out of sight of `ps`)\
     \n  --body-limit BYTES      the largest request body taken (2097152: 2 MiB)\
     \n  --header-timeout SECS   how long a client may take to send its headers (10)\
     \n  --grace SECONDS         how long SIGTERM or Ctrl-C waits for running turns (30)\
     \n  --mcp                   serve the agent's tools over MCP at /mcp too, behind the same checks\
     \n  --demo-latency MS       how long each call of the demo model takes (0)\
     \n\nWho may call (at least one; AGENTIX_API_KEYS holds key lines too):\
     \n  --keys FILE             API keys: lines `sha256:HEX SUBJECT [ROLE,ROLE…]` (new-key makes them)\
     \n  --jwt-secret-env VAR    JWTs signed with HS256 and the secret in variable VAR\
     \n  --jwt-key FILE          JWTs signed with RS256 or ES256 by this public key (PEM)\
     \n  --jwt-jwks FILE         JWTs signed by a key of this JWKS file, picked by `kid`\
     \n  --jwt-audience AUD      the `aud` JWTs must name (required with a JWT key)\
     \n  --jwt-issuer ISS        the `iss` JWTs must name\
     \n  --jwt-roles-claim NAME  the claim holding a JWT's roles (roles)\
     \n  --dev-key SUBJECT       make a key for SUBJECT (role approver) for this run, and print it\
     \n  --anonymous             let requests without credentials in, as subject `anonymous`\
     \n\nWhat each may do:\
     \n  --approver-role ROLE    the role approving, rejecting or editing a call needs (approver)\
     \n  --owners-approve        no role needed: whoever may act on a conversation answers it\
     \n  --read-all-role ROLE    callers with ROLE read every conversation\
     \n  --answer-all-role ROLE  callers with ROLE act on every conversation\
     \n  --unowned-owner SUBJECT conversations stored before owners existed become SUBJECT's\
     \n  --rate N --burst N      requests a second per subject, and at once (10, 40; 0: no limit)\
     \n  --turns N               turns a subject may have running at once (8; 0: no limit)\
     \n\nBrowsers:\
     \n  --allowed-host NAME     a name the server answers to besides localhost, 127.0.0.1, [::1]\
     \n                          and the bound address (NAME or NAME:PORT; repeatable)\
     \n  --any-host              take any Host (only behind a proxy that checks it)\
     \n  --cors-origin ORIGIN    an origin whose pages may call the server (repeatable)\
     \n\nThe model: AGENTIX_MODEL (openai:gpt-4.1-mini, anthropic:claude-sonnet-4-5, …) with the \
     provider's key, AGENTIX_ENDPOINT for a server of your own; the demo model when unset.";

/// Reads the command line (without the program's name).
pub fn parse_args(mut args: impl Iterator<Item = String>) -> Result<Options, String> {
    let mut options = Options::default();
    let value = |flag: &str, args: &mut dyn Iterator<Item = String>| {
        args.next().ok_or_else(|| format!("{flag} needs a value"))
    };
    let number = |flag: &str, text: String| {
        text.parse::<u64>().map_err(|error| format!("{flag} {text}: {error}"))
    };
    while let Some(arg) = args.next() {
        let flag = arg.as_str();
        let mut text = || value(flag, &mut args);
        match flag {
            "--addr" => {
                let addr = text()?;
                options.addr = addr.parse().map_err(|error| format!("--addr {addr}: {error}"))?;
            }
            "--database" => options.database = Some(text()?),
            "--body-limit" => {
                options.body_limit = usize::try_from(number(flag, text()?)?).unwrap_or(usize::MAX);
            }
            "--grace" => options.grace = Duration::from_secs(number(flag, text()?)?),
            "--header-timeout" => {
                options.header_timeout = Duration::from_secs(number(flag, text()?)?.max(1));
            }
            "--demo-latency" => {
                options.demo_latency = Duration::from_millis(number(flag, text()?)?)
            }
            "--keys" => options.keys = Some(text()?.into()),
            "--jwt-secret-env" => options.jwt_secret_env = Some(text()?),
            "--jwt-key" => options.jwt_key = Some(text()?.into()),
            "--jwt-jwks" => options.jwt_jwks = Some(text()?.into()),
            "--jwt-audience" => options.jwt_audience = Some(text()?),
            "--jwt-issuer" => options.jwt_issuer = Some(text()?),
            "--jwt-roles-claim" => options.jwt_roles_claim = Some(text()?),
            "--dev-key" => options.dev_key = Some(text()?),
            "--anonymous" => options.anonymous = true,
            "--allowed-host" => options.hosts.push(text()?),
            "--any-host" => options.any_host = true,
            "--cors-origin" => options.cors.push(text()?),
            "--read-all-role" => options.read_all_role = Some(text()?),
            "--answer-all-role" => options.answer_all_role = Some(text()?),
            "--approver-role" => options.approver_role = text()?,
            "--owners-approve" => options.owners_approve = true,
            "--unowned-owner" => options.unowned_owner = Some(text()?),
            "--rate" => {
                let rate = text()?;
                options.rate = rate.parse().map_err(|error| format!("--rate {rate}: {error}"))?;
            }
            "--burst" => options.burst = u32::try_from(number(flag, text()?)?).unwrap_or(u32::MAX),
            "--turns" => options.turns = usize::try_from(number(flag, text()?)?).unwrap_or(0),
            "--mcp" => options.mcp = true,
            "--help" | "-h" => return Err(String::new()),
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    for host in &options.hosts {
        Hosts::check(host).map_err(|why| format!("--allowed-host: {why}"))?;
    }
    for origin in &options.cors {
        Origins::check(origin).map_err(|why| format!("--cors-origin: {why}"))?;
    }
    let jwt_keys =
        [options.jwt_secret_env.is_some(), options.jwt_key.is_some(), options.jwt_jwks.is_some()];
    if jwt_keys.iter().filter(|given| **given).count() > 1 {
        return Err("give one of --jwt-secret-env, --jwt-key and --jwt-jwks".to_owned());
    }
    if jwt_keys.contains(&true) && options.jwt_audience.is_none() {
        return Err(
            "a JWT key needs --jwt-audience: a token for another service must not do".to_owned()
        );
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

/// Who may call the server, as `options` and the environment (through `var`) say: API keys,
/// then JWTs, then — if the operator let them in — everyone else as `anonymous`. `Err` when
/// nothing would let anyone in, or a key cannot be read. What it prints says who may call,
/// never a key (a `--dev-key`'s, made to be printed, aside).
pub fn authenticator(
    options: &Options,
    var: impl Fn(&str) -> Option<String>,
) -> Result<(impl Authenticate, Vec<String>), String> {
    let mut said = Vec::new();
    let mut keys = ApiKeys::new();
    if let Some(path) = &options.keys {
        let from_file = ApiKeys::from_file(path).map_err(|error| error.to_string())?;
        said.push(format!("API keys: {} from {}", from_file.len(), path.display()));
        keys = keys.merged(from_file);
    }
    if let Some(text) = var("AGENTIX_API_KEYS") {
        let from_env = ApiKeys::parse(&text.replace(';', "\n"))
            .map_err(|error| format!("AGENTIX_API_KEYS: {error}"))?;
        said.push(format!("API keys: {} from AGENTIX_API_KEYS", from_env.len()));
        keys = keys.merged(from_env);
    }
    if let Some(subject) = &options.dev_key {
        let key = new_key()?;
        keys = keys.with_key(&key, Identity::new(subject).with_role(&options.approver_role));
        said.push(format!(
            "A key for `{subject}` (role {}), for this run only: {key}",
            options.approver_role
        ));
    }
    let jwt = match (&options.jwt_secret_env, &options.jwt_key, &options.jwt_jwks) {
        (Some(name), _, _) => {
            let secret = var(name).filter(|secret| !secret.is_empty());
            let secret =
                secret.ok_or_else(|| format!("--jwt-secret-env {name}: {name} is not set"))?;
            said.push(format!("JWTs: HS256, the secret from {name}"));
            Some(Jwt::hs256(secret.as_bytes()))
        }
        (_, Some(path), _) => {
            let pem =
                std::fs::read(path).map_err(|error| format!("{}: {error}", path.display()))?;
            said.push(format!("JWTs: signed by the key in {}", path.display()));
            Some(Jwt::from_pem(&pem).map_err(|error| format!("{}: {error}", path.display()))?)
        }
        (_, _, Some(path)) => {
            said.push(format!("JWTs: signed by a key of {}", path.display()));
            Some(Jwt::jwks_file(path).map_err(|error| error.to_string())?)
        }
        _ => None,
    };
    let jwt = jwt.map(|mut jwt| {
        if let Some(audience) = &options.jwt_audience {
            jwt = jwt.audience(audience);
        }
        if let Some(issuer) = &options.jwt_issuer {
            jwt = jwt.issuer(issuer);
        }
        if let Some(claim) = &options.jwt_roles_claim {
            jwt = jwt.roles_claim(claim);
        }
        jwt
    });
    let anonymous = options.anonymous.then(|| {
        let identity = Identity::new("anonymous").with_role(&options.approver_role);
        said.push(format!(
            "ANONYMOUS ACCESS: a request without credentials acts as `anonymous` (role {}): \
             whoever reaches the server reads and answers its conversations",
            options.approver_role
        ));
        Anonymous::as_identity(identity)
    });
    if keys.is_empty() && jwt.is_none() && anonymous.is_none() {
        return Err("nobody could call the server: give API keys (--keys FILE or \
                    AGENTIX_API_KEYS; `agentix-server new-key SUBJECT` makes one), a JWT key \
                    (--jwt-secret-env, --jwt-key or --jwt-jwks, with --jwt-audience), --dev-key \
                    SUBJECT for a key of this run, or --anonymous to let everyone in"
            .to_owned());
    }
    let keys = (!keys.is_empty()).then_some(keys);
    // `Authenticate::or`: `Option` has an `or` of its own.
    Ok((Authenticate::or(Authenticate::or(keys, jwt), anonymous), said))
}

/// A new API key: `agx_` and 64 hex digits from the system's random source.
fn new_key() -> Result<String, String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|error| format!("no random source: {error}"))?;
    Ok(bytes.iter().fold(String::from("agx_"), |mut key, byte| {
        key.push_str(&format!("{byte:02x}"));
        key
    }))
}

/// `agentix-server new-key SUBJECT [ROLES]`: a new key, and the line a key file keeps for it.
fn print_new_key(mut args: impl Iterator<Item = String>) -> ExitCode {
    let (Some(subject), roles, None) = (args.next(), args.next(), args.next()) else {
        eprintln!("usage: agentix-server new-key SUBJECT [ROLE,ROLE…]");
        return ExitCode::from(BAD_COMMAND_LINE);
    };
    match new_key() {
        Ok(key) => {
            let roles = roles.map(|roles| format!(" {roles}")).unwrap_or_default();
            println!("The key (give it to {subject}; it is shown once and kept nowhere):\n{key}");
            println!("\nIts line for the key file (--keys) or AGENTIX_API_KEYS:");
            println!("{} {subject}{roles}", ApiKeys::hash(&key));
            ExitCode::SUCCESS
        }
        Err(why) => {
            eprintln!("{why}");
            ExitCode::from(STARTUP_FAILED)
        }
    }
}

/// Runs the server the command line and the environment describe, until SIGTERM or Ctrl-C.
/// Exits 0 when every running turn finished within the grace, 1 when the grace (or a second
/// signal) cut some (their whole steps are in the store), 2 for a bad command line (or nobody
/// who could call), 3 when the server could not start.
pub async fn main() -> ExitCode {
    tracing_subscriber::fmt().with_target(false).init();
    let mut args = std::env::args().skip(1).peekable();
    if args.peek().map(String::as_str) == Some("new-key") {
        return print_new_key(args.skip(1));
    }
    let options = match parse_args(args) {
        Ok(options) => options,
        Err(why) if why.is_empty() => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(why) => {
            eprintln!("{why}\n\n{USAGE}");
            return ExitCode::from(BAD_COMMAND_LINE);
        }
    };
    let env = |name: &str| std::env::var(name).ok();
    let mut options = options;
    // A URL with a password is better kept out of the command line, which `ps` shows.
    if options.database.is_none() {
        options.database = env("AGENTIX_DATABASE_URL");
    }
    let (authenticator, said) = match authenticator(&options, env) {
        Ok(authenticator) => authenticator,
        Err(why) => {
            eprintln!("{why}");
            return ExitCode::from(BAD_COMMAND_LINE);
        }
    };
    let store = match &options.database {
        None => None,
        Some(url) => match open_store(url, &options).await {
            Ok(store) => Some(store),
            Err(why) => {
                eprintln!("{why}");
                return ExitCode::from(STARTUP_FAILED);
            }
        },
    };
    for line in said {
        println!("{line}");
    }
    match model_from(env) {
        Ok(Some(model)) => {
            println!("The model: {}.", env("AGENTIX_MODEL").unwrap_or_default());
            serve(agent_over(model), store, authenticator, &options).await
        }
        Ok(None) => {
            println!("The model: the demo model (set AGENTIX_MODEL for a real one).");
            let model = DemoModel { latency: options.demo_latency };
            serve(agent_over(model), store, authenticator, &options).await
        }
        Err(why) => {
            eprintln!("cannot use the model: {why}");
            ExitCode::from(STARTUP_FAILED)
        }
    }
}

/// The store at `url`, its conversations without an owner given to `--unowned-owner` (or
/// counted, and said).
async fn open_store(url: &str, options: &Options) -> Result<Store, String> {
    let shown = agentix_store::redacted(url);
    let store = Store::open(url)
        .await
        .map_err(|error| format!("cannot open the store {shown}: {error}"))?;
    let failed = |error: agentix_store::StoreError| format!("the store {shown}: {error}");
    match &options.unowned_owner {
        Some(owner) => {
            let adopted = store.adopt_unowned(owner).await.map_err(failed)?;
            if adopted > 0 {
                println!("{adopted} conversation(s) without an owner now belong to `{owner}`.");
            }
        }
        None => {
            let unowned = store.unowned().await.map_err(failed)?;
            if unowned > 0 {
                println!(
                    "{unowned} conversation(s) have no owner (stored before conversations had \
                     one): only --read-all-role and --answer-all-role reach them; \
                     --unowned-owner SUBJECT gives them to SUBJECT."
                );
            }
        }
    }
    Ok(store)
}

async fn serve<R: AnyAgent + agentix_mcp::ServesTools>(
    agent: R,
    store: Option<Store>,
    authenticator: impl Authenticate,
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
    let agent = Arc::new(agent);
    let mut builder = Server::builder(Arc::clone(&agent))
        .authenticate(authenticator)
        .access(access(options))
        .limits(Limits::default().requests(options.rate, options.burst).turns(options.turns))
        .hosts(hosts(options, addr))
        .origins(
            options.cors.iter().fold(Origins::none(), |origins, origin| origins.allow(origin)),
        );
    if let Some(store) = store {
        builder = builder.store(store);
    }
    if options.mcp {
        let tools = agentix_mcp::McpService::shared(agent).named("agentix-server");
        builder = builder.beside(tools.router_behind_host_check());
    }
    let served = builder.build();
    // Each request logged with its method, path, caller, status and latency (never its
    // headers: they carry the credentials).
    let trace = TraceLayer::new_for_http()
        .make_span_with(|request: &Request<_>| {
            tracing::info_span!(
                "request",
                method = %request.method(),
                path = %request.uri().path(),
                subject = tracing::field::Empty,
            )
        })
        .on_response(DefaultOnResponse::new().level(Level::INFO));
    let router = served.router().layer(DefaultBodyLimit::max(options.body_limit)).layer(trace);
    println!("{}", usage(addr));
    if options.mcp {
        println!("Its tools over MCP: http://{addr}/mcp (the same credentials).");
    }
    if let Some(url) = &options.database {
        println!("Conversations are kept in {}.", agentix_store::redacted(url));
    }
    let stop = Arc::new(tokio::sync::Notify::new());
    let stopped = {
        let stop = Arc::clone(&stop);
        async move { stop.notified().await }
    };
    let serving = crate::serve(listener, router, options.header_timeout, stopped);
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

fn access(options: &Options) -> Access {
    let mut access = Access::new().approvals_need(&options.approver_role);
    if options.owners_approve {
        access = access.owners_approve();
    }
    if let Some(role) = &options.read_all_role {
        access = access.read_all(role);
    }
    if let Some(role) = &options.answer_all_role {
        access = access.answer_all(role);
    }
    access
}

/// The loopback names, the bound address (unless it is every address's), and `--allowed-host`s.
fn hosts(options: &Options, addr: SocketAddr) -> Hosts {
    if options.any_host {
        return Hosts::any();
    }
    let mut hosts = Hosts::loopback();
    if !addr.ip().is_unspecified() {
        hosts = hosts.allow(&addr.to_string());
    }
    options.hosts.iter().fold(hosts, |hosts, host| hosts.allow(host))
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
             --demo-latency 250 --keys keys.txt --jwt-key key.pem --jwt-audience agentix \
             --jwt-issuer https://auth --jwt-roles-claim scope --allowed-host agent.example.com \
             --cors-origin https://app.example.com --read-all-role support --answer-all-role ops \
             --approver-role desk --unowned-owner legacy --rate 2.5 --burst 5 --turns 1 \
             --header-timeout 3 --mcp",
        ))
        .unwrap();
        assert_eq!(options.addr, "0.0.0.0:8080".parse().unwrap());
        assert_eq!(options.database.as_deref(), Some("sqlite://chats.db"));
        assert_eq!((options.body_limit, options.grace), (1024, Duration::from_secs(5)));
        assert_eq!(options.demo_latency, Duration::from_millis(250));
        assert_eq!(options.keys, Some(PathBuf::from("keys.txt")));
        assert_eq!(options.jwt_key, Some(PathBuf::from("key.pem")));
        assert_eq!(options.jwt_audience.as_deref(), Some("agentix"));
        assert_eq!(options.jwt_issuer.as_deref(), Some("https://auth"));
        assert_eq!(options.jwt_roles_claim.as_deref(), Some("scope"));
        assert_eq!(options.hosts, ["agent.example.com"]);
        assert_eq!(options.cors, ["https://app.example.com"]);
        assert_eq!(options.read_all_role.as_deref(), Some("support"));
        assert_eq!(options.answer_all_role.as_deref(), Some("ops"));
        assert_eq!(options.approver_role, "desk");
        assert_eq!(options.unowned_owner.as_deref(), Some("legacy"));
        assert_eq!((options.rate, options.burst, options.turns), (2.5, 5, 1));
        assert_eq!(options.header_timeout, Duration::from_secs(3));
        assert!(options.mcp && !options.anonymous && !options.any_host);
        assert_eq!(parse_args(args("--port 80")).unwrap_err(), "unknown argument `--port`");
        assert_eq!(parse_args(args("--addr")).unwrap_err(), "--addr needs a value");
        assert!(parse_args(args("--grace soon")).unwrap_err().starts_with("--grace soon:"));
        assert!(parse_args(args("--jwt-key k.pem")).unwrap_err().contains("--jwt-audience"));
        assert!(
            parse_args(args("--jwt-key k --jwt-jwks j --jwt-audience a"))
                .unwrap_err()
                .contains("one of")
        );
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

    #[test]
    fn nobody_who_could_call_is_an_error_and_what_is_said_names_no_key() {
        let none = |_: &str| None;
        let error = authenticator(&Options::default(), none).err().unwrap();
        assert!(error.contains("nobody could call the server"), "{error}");
        let line = format!("{} alice approver", ApiKeys::hash("agx_alice"));
        let env = |name: &str| (name == "AGENTIX_API_KEYS").then(|| line.clone());
        let (_, said) = authenticator(&Options::default(), env).unwrap();
        assert_eq!(said, ["API keys: 1 from AGENTIX_API_KEYS"]);
        let options = Options { jwt_secret_env: Some("SECRET".into()), ..Options::default() };
        let error = authenticator(&options, none).err().unwrap();
        assert_eq!(error, "--jwt-secret-env SECRET: SECRET is not set");
        let env = |name: &str| (name == "SECRET").then(|| "s3cret-value".to_owned());
        let (_, said) = authenticator(&options, env).unwrap();
        assert!(said.iter().all(|line| !line.contains("s3cret-value")), "{said:?}");
        let options = Options { anonymous: true, ..Options::default() };
        let (_, said) = authenticator(&options, none).unwrap();
        assert!(said[0].starts_with("ANONYMOUS ACCESS"), "{said:?}");
    }
}
