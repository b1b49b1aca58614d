//! Clearing old tool results: a `before_model` hook that sends the model stubs in place of all
//! but the latest tool results, the log left whole.

use agentix::event::BeforeModel;
use agentix::{
    Part, Turn, Verdict,
    model::ModelRequest,
    on,
    tool::{ToolPattern, ToolPatternError},
};

use crate::globs::patterns_of;

/// Keeps the last [`keep`](ClearToolResults::keep) tool results of each request whole and
/// sends a short stub in place of each older one (`[result of get_weather cleared to save
/// context; call it again if you need it]`), so a long run of tool calls does not fill the
/// context. Only the request changes: the log keeps every result whole, and the model can
/// call the tool again.
///
/// The results are cleared in batches ([`in_batches_of`](ClearToolResults::in_batches_of)):
/// the older results are cleared only once a whole batch is past the `keep`, so from one
/// request to the next the start of the conversation stays byte for byte the same, and a
/// provider's prompt cache holds, until the next batch is cleared. A stub is the same every
/// time it is sent. Results of the tools [`except`](ClearToolResults::except) names are never
/// cleared, nor counted.
///
/// ```
/// use agentix_hooks::ClearToolResults;
///
/// let clear = ClearToolResults::keep(3).in_batches_of(10).except(["read_plan"])?;
/// # drop(clear);
/// # Ok::<_, agentix::tool::ToolPatternError>(())
/// ```
#[derive(Clone, Debug)]
pub struct ClearToolResults {
    keep: usize,
    batch: usize,
    except: Vec<ToolPattern>,
}

impl ClearToolResults {
    /// The hook's name, in errors and traces.
    pub const NAME: &'static str = "clear_tool_results";

    /// Keeps the last `results` tool results whole; clears the older ones one by one (a batch
    /// of 1: set a larger one to keep the prompt cache longer).
    pub fn keep(results: usize) -> Self {
        ClearToolResults { keep: results, batch: 1, except: Vec::new() }
    }

    /// Clears the older results `results` at a time (at least 1).
    pub fn in_batches_of(mut self, results: usize) -> Self {
        self.batch = results.max(1);
        self
    }

    /// Never clears the results of the tools `patterns` name (`read_*`).
    pub fn except<I>(mut self, patterns: I) -> Result<Self, ToolPatternError>
    where
        I: IntoIterator,
        I::Item: Into<String>,
    {
        self.except.extend(patterns_of(patterns)?);
        Ok(self)
    }

    fn clears(&self, name: &str) -> bool {
        !self.except.iter().any(|pattern| pattern.matches(name))
    }

    /// How many of `results` clearable results to clear, the oldest first.
    fn cleared(&self, results: usize) -> usize {
        let past = results.saturating_sub(self.keep);
        past - past % self.batch
    }
}

impl on::BeforeModel for ClearToolResults {
    const IN_PLACE: bool = true;

    fn name(&self) -> &'static str {
        Self::NAME
    }

    async fn before_model(
        &self,
        request: &mut ModelRequest,
        turn: &mut Turn,
    ) -> Verdict<BeforeModel> {
        self.before_model_in_place(request, turn)
    }

    fn before_model_in_place(
        &self,
        request: &mut ModelRequest,
        _turn: &mut Turn,
    ) -> Verdict<BeforeModel> {
        let results = request.tool_results().filter(|result| self.clears(&result.name)).count();
        let mut to_clear = self.cleared(results);
        if to_clear == 0 {
            return Verdict::Continue;
        }
        let parts = request.messages.iter_mut().flat_map(|message| &mut message.content);
        for part in parts {
            let Part::ToolResult(result) = part else { continue };
            if !self.clears(&result.name) {
                continue;
            }
            result.output = format!(
                "[result of {} cleared to save context; call it again if you need it]",
                result.name
            );
            to_clear -= 1;
            if to_clear == 0 {
                break;
            }
        }
        Verdict::Continue
    }
}
