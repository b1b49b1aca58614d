//! What names a tool and what the model is told of it. Data: a request carries the specs, a
//! per-tool hook's call carries the id.

use std::any::TypeId;

use serde::{Deserialize, Serialize};

/// A tool, by its type and its name: what a per-tool hook runs on. Two are equal when their
/// types are: one compare, never a name's.
#[derive(Clone, Copy, Debug, Eq)]
pub struct ToolId {
    pub(crate) type_id: TypeId,
    pub(crate) name: &'static str,
}

impl ToolId {
    /// The tool's name, as the model calls it.
    #[must_use]
    pub const fn name(self) -> &'static str {
        self.name
    }
}

impl PartialEq for ToolId {
    fn eq(&self, other: &Self) -> bool {
        self.type_id == other.type_id
    }
}

/// Where a tool comes from, when the set that offers it knows: an MCP server's name and how
/// it is reached. Hooks read it on the turn during a call's tool events
/// ([`Turn::tool_origin`](crate::Turn::tool_origin)).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ToolOrigin {
    /// What kind of source: `"mcp"` for an MCP server.
    pub kind: &'static str,
    /// The source's name: the server's, as it was configured.
    pub name: String,
    /// How it is reached: a command line, or a URL.
    pub address: String,
}

impl ToolOrigin {
    /// An origin of `kind`, called `name`, reached at `address`.
    pub fn new(kind: &'static str, name: impl Into<String>, address: impl Into<String>) -> Self {
        ToolOrigin { kind, name: name.into(), address: address.into() }
    }
}

/// What the model is told about a tool.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// The tool's name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// The JSON schema of its arguments.
    pub parameters: serde_json::Value,
}

/// How far a running tool call has come, as its tool reports it (an MCP server's progress
/// notifications): observers and the stream hear of it while the call runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolProgress {
    /// How much is done: it grows with each report.
    pub progress: f64,
    /// How much there is to do, if the tool knows.
    pub total: Option<f64>,
    /// What the tool says it is doing.
    pub message: Option<String>,
}
