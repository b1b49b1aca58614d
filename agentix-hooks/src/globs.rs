//! Tool-name globs given to the hooks as lists.

use agentix::tool::{ToolPattern, ToolPatternError};

/// The patterns of a list, the first that does not parse an error.
pub(crate) fn patterns_of<I>(patterns: I) -> Result<Vec<ToolPattern>, ToolPatternError>
where
    I: IntoIterator,
    I::Item: Into<String>,
{
    patterns.into_iter().map(ToolPattern::new).collect()
}
