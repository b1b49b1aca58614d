//! Tool retry: a `wrap_tool` hook that makes a failed call again, if its tool may be called
//! twice.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use agentix::{
    ToolCall, ToolResult, Turn,
    message::ToolFailure,
    on,
    tool::{NextTool, ToolPattern, ToolPatternError},
};

use crate::backoff::Backoff;
use crate::globs::patterns_of;

/// Makes a failed tool call again after a backoff (as [`Retry`](crate::Retry) waits: doubling,
/// capped, [`Jitter`](crate::Jitter)ed): by default only a call whose tool says it may be called twice to the
/// same effect — `#[tool(idempotent)]`, an MCP tool's `readOnlyHint` or `idempotentHint` — and
/// only when the tool ran and failed or timed out (not a rejected call, an unknown tool or
/// arguments that do not parse: those fail again). Each attempt is the same call: the same id,
/// so the same [`Turn::tool_idempotency_key`](agentix::Turn::tool_idempotency_key), with which a
/// tool that acts on another system makes its effect apply once. Each goes through the loop —
/// journaled (a crash after the second attempt does not make a third), traced as its own
/// `execute_tool` span (`agentix.attempt` 2, 3, …) — and the model reads the last result.
///
/// ```
/// use std::time::Duration;
/// use agentix_hooks::ToolRetry;
///
/// let retry = ToolRetry::new().attempts(3).initial_delay(Duration::from_millis(100));
/// // Only some tools; and one the user knows is safe to repeat, though it does not say so.
/// let searches = ToolRetry::new().tools(["search_*", "fetch_page"])?.even_if_not_idempotent();
/// # drop((retry, searches));
/// # Ok::<_, agentix::tool::ToolPatternError>(())
/// ```
#[derive(Clone)]
pub struct ToolRetry {
    backoff: Backoff,
    /// The tools retried; empty: all (that may be).
    tools: Vec<ToolPattern>,
    any_tool: bool,
    retries: Arc<dyn Fn(&ToolResult) -> bool + Send + Sync>,
}

impl ToolRetry {
    /// The hook's name, in errors and traces.
    pub const NAME: &'static str = "tool_retry";

    /// Three attempts, 200 ms first, doubling up to 5 s, at most 30 s waited in all, full jitter;
    /// idempotent tools' calls that failed or timed out.
    pub fn new() -> Self {
        let mut backoff = Backoff::new(3, Duration::from_millis(200), Duration::from_secs(5));
        backoff.max_wait = Duration::from_secs(30);
        ToolRetry { backoff, tools: Vec::new(), any_tool: false, retries: Arc::new(ran_and_failed) }
    }

    /// Retries only the calls of the tools `patterns` name (`search_*`).
    pub fn tools<I>(mut self, patterns: I) -> Result<Self, ToolPatternError>
    where
        I: IntoIterator,
        I::Item: Into<String>,
    {
        self.tools.extend(patterns_of(patterns)?);
        Ok(self)
    }

    /// Retries the calls of tools that do not say they are idempotent too: for tools you know
    /// are safe to repeat (with [`tools`](Self::tools), name them).
    pub fn even_if_not_idempotent(mut self) -> Self {
        self.any_tool = true;
        self
    }

    crate::backoff::backoff_settings!();

    /// Retries the failed results `retries` says, in place of the default ([`ran_and_failed`]).
    pub fn retry_if(
        mut self,
        retries: impl Fn(&ToolResult) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.retries = Arc::new(retries);
        self
    }

    fn retries_tool(&self, name: &str, next: &impl NextTool) -> bool {
        (self.tools.is_empty() || self.tools.iter().any(|pattern| pattern.matches(name)))
            && (self.any_tool || next.idempotent(name))
    }
}

/// Whether the tool ran and failed (returned an error) or did not return in time: what may
/// pass on another attempt. A panic, an unknown tool, arguments that do not parse, a rejected
/// or unrun call do not.
pub fn ran_and_failed(result: &ToolResult) -> bool {
    matches!(result.error, Some(ToolFailure::Failed { .. } | ToolFailure::TimedOut { .. }))
}

impl Default for ToolRetry {
    fn default() -> Self {
        ToolRetry::new()
    }
}

impl fmt::Debug for ToolRetry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolRetry")
            .field("backoff", &self.backoff)
            .field("tools", &self.tools)
            .field("any_tool", &self.any_tool)
            .finish_non_exhaustive()
    }
}

impl on::WrapTool for ToolRetry {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    async fn wrap_tool(&self, call: &ToolCall, _turn: &Turn, next: &impl NextTool) -> ToolResult {
        let mut result = next.call(call).await;
        if !result.is_error() || !self.retries_tool(&call.name, next) {
            return result;
        }
        let mut waited = Duration::ZERO;
        let mut attempt = 1;
        while result.is_error() && (self.retries)(&result) {
            match self.backoff.wait(attempt, Duration::ZERO, waited).await {
                Some(total) => waited = total,
                None => break,
            }
            attempt += 1;
            result = next.call(call).await;
        }
        result
    }
}
