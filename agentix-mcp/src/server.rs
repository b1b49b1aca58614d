//! An MCP server to reach, and the tools to take from it; connecting makes it [`McpTools`].

use std::ffi::OsString;
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use rmcp::model::{ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::RoleClient;
use rmcp::transport::{IntoTransport, TokioChildProcess};
use rmcp::{ClientHandler, ServiceExt};
use tokio::io::AsyncReadExt;

use crate::error::McpError;
use crate::tools::{Connection, McpTools};

/// How to reach an MCP server, and which of its tools an agent gets, under which names.
///
/// Each tool reaches the model as `prefix__tool`, the prefix being the server's name unless
/// [`prefix`](McpServer::prefix) says otherwise; [`allow`](McpServer::allow) and
/// [`deny`](McpServer::deny) take globs (`*`, `?`) over the server's own tool names.
#[derive(Clone, Debug)]
pub struct McpServer {
    pub(crate) name: String,
    program: OsString,
    args: Vec<OsString>,
    envs: Vec<(OsString, OsString)>,
    pub(crate) prefix: Option<String>,
    pub(crate) allow: Vec<String>,
    pub(crate) deny: Vec<String>,
}

impl McpServer {
    /// A server run as a child process, spoken to over its standard input and output; its
    /// standard error is kept for the errors that name it.
    pub fn stdio(name: impl Into<String>, program: impl Into<OsString>) -> Self {
        McpServer {
            name: name.into(),
            program: program.into(),
            args: Vec::new(),
            envs: Vec::new(),
            prefix: None,
            allow: Vec::new(),
            deny: Vec::new(),
        }
    }

    /// A server reached over a transport given to [`connect_with`](McpServer::connect_with):
    /// an in-memory pipe, a socket.
    pub fn named(name: impl Into<String>) -> Self {
        McpServer::stdio(name, "")
    }

    /// Adds arguments to the server's command.
    pub fn args(mut self, args: impl IntoIterator<Item = impl Into<OsString>>) -> Self {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Sets an environment variable for the server's process.
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.envs.push((key.into(), value.into()));
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
        self.allow.push(glob.into());
        self
    }

    /// Leaves out the tools whose names match the glob, allowed or not.
    pub fn deny(mut self, glob: impl Into<String>) -> Self {
        self.deny.push(glob.into());
        self
    }

    /// The server's command line, as errors name it.
    pub fn command_line(&self) -> String {
        std::iter::once(&self.program)
            .chain(&self.args)
            .map(|part| part.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Starts the server, completes MCP's initialization and lists its tools.
    pub async fn connect(self) -> Result<McpTools, McpError> {
        let command = self.command_line();
        let mut process = tokio::process::Command::new(&self.program);
        process.args(&self.args).envs(self.envs.iter().map(|(key, value)| (key, value)));
        let (transport, stderr) = TokioChildProcess::builder(process)
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|source| McpError::Start {
                server: self.name.clone(),
                command: command.clone(),
                source,
            })?;
        let captured = Arc::new(Mutex::new(String::new()));
        let reader = stderr.map(|mut stderr| {
            let captured = Arc::clone(&captured);
            tokio::spawn(async move {
                let mut buffer = [0; 4096];
                while let Ok(read) = stderr.read(&mut buffer).await {
                    if read == 0 {
                        break;
                    }
                    let mut kept = captured.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
                    kept.push_str(&String::from_utf8_lossy(&buffer[..read]));
                    // The last 16 KiB are enough to say why a server stopped.
                    if kept.len() > 32 * 1024 {
                        let cut = kept.len() - 16 * 1024;
                        let cut =
                            (cut..kept.len()).find(|&at| kept.is_char_boundary(at)).unwrap_or(cut);
                        kept.drain(..cut);
                    }
                }
            })
        });
        self.start(transport, command, captured, reader).await
    }

    /// Connects over a transport of one's own (an in-memory pipe, a socket): `target` names it
    /// in errors.
    pub async fn connect_with<T, E, A>(
        self,
        transport: T,
        target: impl Into<String>,
    ) -> Result<McpTools, McpError>
    where
        T: IntoTransport<RoleClient, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        self.start(transport, target.into(), Arc::new(Mutex::new(String::new())), None).await
    }

    async fn start<T, E, A>(
        self,
        transport: T,
        target: String,
        stderr: Arc<Mutex<String>>,
        reader: Option<tokio::task::JoinHandle<()>>,
    ) -> Result<McpTools, McpError>
    where
        T: IntoTransport<RoleClient, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        let service = match Client.serve(transport).await {
            Ok(service) => service,
            Err(error) => {
                // A server that quit wrote why to its stderr: read to its end (briefly).
                if let Some(reader) = reader {
                    let _ = tokio::time::timeout(std::time::Duration::from_secs(2), reader).await;
                }
                let said = stderr.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clone();
                let stderr = if said.trim().is_empty() {
                    String::new()
                } else {
                    format!("\nits stderr:\n{}", said.trim_end())
                };
                return Err(McpError::Initialize {
                    server: self.name,
                    target,
                    message: error.to_string(),
                    stderr,
                });
            }
        };
        let connection = Connection { name: self.name.clone(), target, service, stderr };
        McpTools::list(self, connection).await
    }
}

/// The client agentix is to the server: it names itself, and asks for nothing yet.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Client;

impl ClientHandler for Client {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("agentix-mcp", env!("CARGO_PKG_VERSION")),
        )
    }
}
