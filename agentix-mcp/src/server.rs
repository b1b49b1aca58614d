//! An MCP server to reach, and the tools to take from it; connecting makes it [`McpTools`].

#[cfg(feature = "http")]
use std::collections::HashMap;
use std::ffi::OsString;
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use agentix::tool::{ToolPattern, ToolPatternError};
#[cfg(feature = "http")]
use http::{HeaderName, HeaderValue};
use rmcp::ServiceExt;
use rmcp::service::{RoleClient, RunningService};
#[cfg(feature = "http")]
use rmcp::transport::StreamableHttpClientTransport;
#[cfg(feature = "http")]
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{IntoTransport, TokioChildProcess};
use tokio::io::AsyncReadExt;

use crate::client::{Client, Listing, Shared};
use crate::error::McpError;
use crate::tools::McpTools;

/// Where a server is.
#[derive(Clone, Debug)]
enum Target {
    /// A child process, over its standard input and output.
    Stdio { program: OsString, args: Vec<OsString>, envs: Vec<(OsString, OsString)> },
    /// A URL, over MCP's streamable HTTP.
    #[cfg(feature = "http")]
    Http { url: String, bearer: Option<String>, headers: Vec<(String, String)> },
    /// A transport given to `connect_with`.
    Given,
}

/// How to reach an MCP server, and which of its tools an agent gets, under which names.
///
/// A server is a child process ([`stdio`](McpServer::stdio)), a URL
/// ([`http`](McpServer::http)), or any rmcp transport ([`connect_with`](McpServer::connect_with)).
/// Each tool reaches the model as `prefix__tool`, the prefix being the server's name unless
/// [`prefix`](McpServer::prefix) says otherwise; [`allow`](McpServer::allow) and
/// [`deny`](McpServer::deny) take globs ([`ToolPattern`]: `*`, `?`) over the server's own tool
/// names; one that is no pattern fails the connection, naming it.
#[derive(Clone, Debug)]
pub struct McpServer {
    pub(crate) name: String,
    target: Target,
    pub(crate) prefix: Option<String>,
    pub(crate) allow: Vec<Result<ToolPattern, ToolPatternError>>,
    pub(crate) deny: Vec<Result<ToolPattern, ToolPatternError>>,
    /// What a transport given to `connect_with` is called.
    given: Option<String>,
}

impl McpServer {
    /// A server run as a child process, spoken to over its standard input and output; its
    /// standard error is kept for the errors that name it.
    pub fn stdio(name: impl Into<String>, program: impl Into<OsString>) -> Self {
        let target = Target::Stdio { program: program.into(), args: Vec::new(), envs: Vec::new() };
        McpServer::at(name.into(), target)
    }

    /// A server at a URL, spoken to over MCP's streamable HTTP. With the `http` feature (on by
    /// default): plain `http://` (loopback, or behind a proxy that terminates TLS); with the
    /// `https` feature, `https://` too.
    #[cfg(feature = "http")]
    pub fn http(name: impl Into<String>, url: impl Into<String>) -> Self {
        McpServer::at(
            name.into(),
            Target::Http { url: url.into(), bearer: None, headers: Vec::new() },
        )
    }

    fn at(name: String, target: Target) -> Self {
        McpServer { name, target, prefix: None, allow: Vec::new(), deny: Vec::new(), given: None }
    }

    /// A server reached over a transport given to [`connect_with`](McpServer::connect_with):
    /// an in-memory pipe, a socket.
    pub fn named(name: impl Into<String>) -> Self {
        McpServer::at(name.into(), Target::Given)
    }

    /// Adds arguments to a child process's command (ignored for the other targets).
    pub fn args(mut self, more: impl IntoIterator<Item = impl Into<OsString>>) -> Self {
        if let Target::Stdio { args, .. } = &mut self.target {
            args.extend(more.into_iter().map(Into::into));
        }
        self
    }

    /// Sets an environment variable for a child process (ignored for the other targets).
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        if let Target::Stdio { envs, .. } = &mut self.target {
            envs.push((key.into(), value.into()));
        }
        self
    }

    /// Sends `Authorization: Bearer <token>` with every request to an HTTP server.
    #[cfg(feature = "http")]
    pub fn bearer(mut self, token: impl Into<String>) -> Self {
        if let Target::Http { bearer, .. } = &mut self.target {
            *bearer = Some(token.into());
        }
        self
    }

    /// Sends a header with every request to an HTTP server.
    #[cfg(feature = "http")]
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        if let Target::Http { headers, .. } = &mut self.target {
            headers.push((name.into(), value.into()));
        }
        self
    }

    /// The prefix of the tools' names (`prefix__tool`); the server's name by default, and no
    /// prefix at all when empty.
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = Some(prefix.into());
        self
    }

    /// Takes only the tools whose names match one of the allowed globs (every tool, when none
    /// is given).
    pub fn allow(mut self, glob: impl Into<String>) -> Self {
        self.allow.push(ToolPattern::new(glob));
        self
    }

    /// Leaves out the tools whose names match the glob, allowed or not.
    pub fn deny(mut self, glob: impl Into<String>) -> Self {
        self.deny.push(ToolPattern::new(glob));
        self
    }

    /// How the server is reached, as errors name it: its command line, or its URL.
    pub fn target(&self) -> String {
        match &self.target {
            Target::Stdio { program, args, .. } => std::iter::once(program)
                .chain(args)
                .map(|part| part.to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join(" "),
            #[cfg(feature = "http")]
            Target::Http { url, .. } => url.clone(),
            Target::Given => {
                self.given.clone().unwrap_or_else(|| "a transport of its own".to_owned())
            }
        }
    }

    /// Starts the server (or reaches it), completes MCP's initialization and lists its tools.
    /// A server named for [`connect_with`](McpServer::connect_with) has nothing to start: it
    /// is an error naming it.
    pub async fn connect(self) -> Result<McpTools, McpError> {
        let shared = self.shared()?;
        let opened = self.open(Arc::clone(&shared)).await?;
        McpTools::list(self, opened, shared, true).await
    }

    /// Connects over a transport of one's own (an in-memory pipe, a socket): `target` names it
    /// in errors. Such a connection is not made again if it closes.
    pub async fn connect_with<T, E, A>(
        mut self,
        transport: T,
        target: impl Into<String>,
    ) -> Result<McpTools, McpError>
    where
        T: IntoTransport<RoleClient, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        let shared = self.shared()?;
        self.given = Some(target.into());
        let stderr = Arc::new(Mutex::new(String::new()));
        let opened = self.initialize(transport, Arc::clone(&shared), stderr, None, None).await?;
        McpTools::list(self, opened, shared, false).await
    }

    /// What the client and the tool set share: the listing rules, checked before anything
    /// starts (an allow or deny pattern that is none is an error naming it).
    fn shared(&self) -> Result<Arc<Shared>, McpError> {
        let patterns = |patterns: &[Result<ToolPattern, ToolPatternError>]| {
            patterns.iter().cloned().collect::<Result<Vec<_>, _>>()
        };
        let listing = Listing {
            prefix: self.prefix.clone().unwrap_or_else(|| self.name.clone()),
            allow: patterns(&self.allow)?,
            deny: patterns(&self.deny)?,
        };
        Ok(Shared::new(self.name.clone(), listing))
    }

    /// Starts the server's process, or reaches its URL, and initializes: what connecting and
    /// reconnecting share.
    pub(crate) async fn open(&self, shared: Arc<Shared>) -> Result<Opened, McpError> {
        let command = self.target();
        let (program, args, envs) = match &self.target {
            Target::Stdio { program, args, envs } => (program, args, envs),
            #[cfg(feature = "http")]
            Target::Http { url, bearer, headers } => {
                let config = http_config(&self.name, url, bearer.as_deref(), headers)?;
                let transport = StreamableHttpClientTransport::from_config(config);
                let stderr = Arc::new(Mutex::new(String::new()));
                return self.initialize(transport, shared, stderr, None, None).await;
            }
            Target::Given => {
                return Err(McpError::Initialize {
                    server: self.name.clone(),
                    target: command,
                    message: "it has no command or URL to connect again by".to_owned(),
                    stderr: String::new(),
                });
            }
        };
        let mut process = tokio::process::Command::new(program);
        process.args(args).envs(envs.iter().map(|(key, value)| (key, value)));
        let (transport, stderr) = TokioChildProcess::builder(process)
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|source| McpError::Start { server: self.name.clone(), command, source })?;
        let pid = transport.id();
        let captured = Arc::new(Mutex::new(String::new()));
        let reader = stderr.map(|stderr| tokio::spawn(keep_stderr(stderr, Arc::clone(&captured))));
        self.initialize(transport, shared, captured, reader, pid).await
    }

    async fn initialize<T, E, A>(
        &self,
        transport: T,
        shared: Arc<Shared>,
        stderr: Arc<Mutex<String>>,
        reader: Option<tokio::task::JoinHandle<()>>,
        pid: Option<u32>,
    ) -> Result<Opened, McpError>
    where
        T: IntoTransport<RoleClient, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        match (Client { shared }).serve(transport).await {
            Ok(service) => Ok(Opened { service, stderr, pid }),
            Err(error) => {
                // A server that quit wrote why to its stderr: read to its end (briefly).
                if let Some(reader) = reader {
                    let _ = tokio::time::timeout(std::time::Duration::from_secs(2), reader).await;
                }
                Err(McpError::Initialize {
                    server: self.name.clone(),
                    target: self.target(),
                    message: error.to_string(),
                    stderr: stderr_note(&stderr),
                })
            }
        }
    }
}

/// A started, initialized server.
pub(crate) struct Opened {
    pub(crate) service: RunningService<RoleClient, Client>,
    /// What its process has written to its stderr (empty for the other transports).
    pub(crate) stderr: Arc<Mutex<String>>,
    /// Its process's id, when it is a child process.
    pub(crate) pid: Option<u32>,
}

/// What a server wrote to its stderr, as an error's last lines: empty, or a newline and the
/// text.
pub(crate) fn stderr_note(stderr: &Mutex<String>) -> String {
    let said = stderr.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if said.trim().is_empty() {
        String::new()
    } else {
        format!("\nits stderr:\n{}", said.trim_end())
    }
}

/// Keeps the last 16–32 KiB a server writes to its stderr: enough to say why it stopped.
async fn keep_stderr(mut stderr: tokio::process::ChildStderr, kept: Arc<Mutex<String>>) {
    let mut buffer = [0; 4096];
    while let Ok(read) = stderr.read(&mut buffer).await {
        if read == 0 {
            break;
        }
        let mut kept = kept.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        kept.push_str(&String::from_utf8_lossy(&buffer[..read]));
        if kept.len() > 32 * 1024 {
            let cut = kept.len() - 16 * 1024;
            let cut = (cut..kept.len()).find(|&at| kept.is_char_boundary(at)).unwrap_or(cut);
            kept.drain(..cut);
        }
    }
}

/// The streamable HTTP transport's settings for `url`, with its headers.
#[cfg(feature = "http")]
fn http_config(
    server: &str,
    url: &str,
    bearer: Option<&str>,
    headers: &[(String, String)],
) -> Result<StreamableHttpClientTransportConfig, McpError> {
    let mut custom = HashMap::new();
    for (name, value) in headers {
        let bad = |message: String| McpError::Initialize {
            server: server.to_owned(),
            target: url.to_owned(),
            message,
            stderr: String::new(),
        };
        let header = HeaderName::try_from(name.as_str())
            .map_err(|error| bad(format!("the header name `{name}` is not one: {error}")))?;
        let value = HeaderValue::try_from(value.as_str()).map_err(|error| {
            bad(format!("the value of the header `{name}` is not one: {error}"))
        })?;
        custom.insert(header, value);
    }
    let mut config = StreamableHttpClientTransportConfig::with_uri(url).custom_headers(custom);
    if let Some(token) = bearer {
        config = config.auth_header(token);
    }
    Ok(config)
}
