//! What can go wrong reaching an MCP server, each naming the server and how it was reached.

/// An MCP server that could not be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum McpError {
    /// The server's process did not start.
    #[error("the MCP server `{server}` did not start (`{command}`): {source}")]
    Start {
        /// The server's name.
        server: String,
        /// Its command line.
        command: String,
        /// Why.
        source: std::io::Error,
    },
    /// The server did not complete MCP's initialization.
    #[error("the MCP server `{server}` ({target}) did not initialize: {message}{stderr}")]
    Initialize {
        /// The server's name.
        server: String,
        /// Its command line or URL.
        target: String,
        /// What the client saw.
        message: String,
        /// What the server wrote to its standard error, if anything, after a newline.
        stderr: String,
    },
    /// The server did not list its tools.
    #[error("the MCP server `{server}` ({target}) did not list its tools: {message}")]
    ListTools {
        /// The server's name.
        server: String,
        /// Its command line or URL.
        target: String,
        /// What the client saw.
        message: String,
    },
    /// Two tools would reach the model under one name.
    #[error("two tools named `{name}`: from {first} and from {second}")]
    Collision {
        /// The name.
        name: String,
        /// Where the first comes from.
        first: String,
        /// Where the second comes from.
        second: String,
    },
    /// Serving tools to a client failed.
    #[error("the MCP server `{server}` could not serve: {message}")]
    Serve {
        /// The served server's name.
        server: String,
        /// What went wrong.
        message: String,
    },
    /// An allow or deny pattern that is no tool pattern.
    #[error("an allow or deny pattern: {0}")]
    Pattern(#[from] agentix::tool::ToolPatternError),
}
