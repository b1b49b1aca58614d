//! Approval by pattern: a `before_tool` hook that sends the calls of some tools to the
//! approver, with their arguments.

use agentix::event::BeforeTool;
use agentix::{
    ToolCall, Turn, Verdict, on,
    tool::{ToolPattern, ToolPatternError},
};

use crate::globs::patterns_of;

/// Arguments longer than this are cut in the reason the approver reads (the call it gets has
/// them whole).
const SHOWN: usize = 500;

/// Escalates every call whose tool's name matches one of `tools` (`*delete*`, `send_*`), or
/// whose tool comes from an MCP server whose name matches one of `servers`: the agent's
/// [approver](agentix::approval::Approver) decides — approves, edits, rejects, or suspends the turn for a
/// person. The escalation's reason names the pattern and shows the arguments, so that an
/// approver that shows only the reason (a chat message, a ticket) shows what is asked; the call
/// it is given has them whole. Other calls go on untouched.
///
/// ```
/// use agentix_hooks::ApproveByPattern;
///
/// let ask = ApproveByPattern::tools(["*delete*", "send_*"])?.servers(["payments"])?;
/// // Every tool of one MCP server, and nothing else.
/// let only_payments = ApproveByPattern::new().servers(["payments"])?;
/// # drop((ask, only_payments));
/// # Ok::<_, agentix::tool::ToolPatternError>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct ApproveByPattern {
    tools: Vec<ToolPattern>,
    servers: Vec<ToolPattern>,
}

impl ApproveByPattern {
    /// The hook's name, in errors and traces.
    pub const NAME: &'static str = "approve_by_pattern";

    /// Escalates nothing yet: add [`tools`](Self::tools) or [`servers`](Self::servers).
    pub fn new() -> Self {
        ApproveByPattern::default()
    }

    /// Escalates the calls of the tools `patterns` name (globs: `*` any run, `?` one).
    pub fn tools<I>(patterns: I) -> Result<Self, ToolPatternError>
    where
        I: IntoIterator,
        I::Item: Into<String>,
    {
        ApproveByPattern::new().and_tools(patterns)
    }

    /// Escalates too the calls of the tools `patterns` name.
    pub fn and_tools<I>(mut self, patterns: I) -> Result<Self, ToolPatternError>
    where
        I: IntoIterator,
        I::Item: Into<String>,
    {
        self.tools.extend(patterns_of(patterns)?);
        Ok(self)
    }

    /// Escalates too the calls of every tool of the MCP servers `patterns` name (server names
    /// are matched as tool names are: letters, digits, `_`, `-`, `.`).
    pub fn servers<I>(mut self, patterns: I) -> Result<Self, ToolPatternError>
    where
        I: IntoIterator,
        I::Item: Into<String>,
    {
        self.servers.extend(patterns_of(patterns)?);
        Ok(self)
    }

    /// The pattern a call of `name` from `server` matches, if one does.
    fn matched(&self, name: &str, server: Option<&str>) -> Option<String> {
        if let Some(pattern) = self.tools.iter().find(|pattern| pattern.matches(name)) {
            return Some(format!("`{name}` matches `{pattern}`"));
        }
        let server = server?;
        let pattern = self.servers.iter().find(|pattern| pattern.matches(server))?;
        Some(format!("`{name}` is a tool of the MCP server `{server}`, which matches `{pattern}`"))
    }
}

impl on::BeforeTool for ApproveByPattern {
    // Nothing to await: called in place, as a plain function.
    const IN_PLACE: bool = true;

    fn name(&self) -> &'static str {
        Self::NAME
    }

    async fn before_tool(&self, call: &mut ToolCall, turn: &mut Turn) -> Verdict<BeforeTool> {
        self.before_tool_in_place(call, turn)
    }

    fn before_tool_in_place(&self, call: &mut ToolCall, turn: &mut Turn) -> Verdict<BeforeTool> {
        // Where the tool comes from is asked only of a hook that names servers.
        let origin = if self.servers.is_empty() { None } else { turn.tool_origin() };
        let server = origin.as_deref().filter(|origin| origin.kind == "mcp").map(|o| &*o.name);
        match self.matched(&call.name, server) {
            Some(why) => Verdict::escalate(format!("{why}; arguments: {}", shown(call))),
            None => Verdict::Continue,
        }
    }
}

/// The call's arguments as JSON, cut at the last character boundary within [`SHOWN`] bytes.
fn shown(call: &ToolCall) -> String {
    let mut arguments = call.arguments.to_string();
    if arguments.len() > SHOWN {
        let mut end = SHOWN;
        while !arguments.is_char_boundary(end) {
            end -= 1;
        }
        arguments.truncate(end);
        arguments.push('…');
    }
    arguments
}
