//! Retry with backoff: a `wrap_model` hook that calls the model again after a transient
//! error, waiting longer each time.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use agentix::{
    Turn,
    model::{ModelError, ModelRequest, ModelResponse, NextModel},
    on,
};

use crate::backoff::Backoff;
use crate::errors::transient;

/// Calls the model again after a failure that may pass (by default a [`transient`] one:
/// unreachable, overloaded, rate-limited, timed out), waiting between calls: `initial_delay`,
/// doubled at each retry up to `max_delay`, [`Jitter`](crate::Jitter)ed — after a provider's `retry-after`
/// when it gave one. It stops at `attempts` calls in all, or when the next wait would take the
/// call's total wait past `max_wait` (each wait counted at its most, before the jitter, so that
/// whether a retry is made does not depend on a draw: a journaled turn replays it the same),
/// and returns the last error. `max_wait` is per call of the hook: under a
/// [`ModelFallback`](crate::ModelFallback), each model has its own.
///
/// Each call goes through the loop (`next`): it is journaled, audited and traced as its own
/// `chat` span (`agentix.attempt` 2, 3, …); every observer sees each failed attempt
/// ([`Observation::ModelCallFailed`](agentix::observe::Observation::ModelCallFailed)), and one that
/// streams sees what it showed withdrawn. The waits are tokio's timer (the hook needs a Tokio runtime with time
/// enabled); a journaled turn that goes on after a crash replays the calls, and waits again.
///
/// ```
/// use std::time::Duration;
/// use agentix_hooks::{Jitter, Retry};
///
/// let retry = Retry::new()
///     .attempts(5)
///     .initial_delay(Duration::from_millis(500))
///     .max_delay(Duration::from_secs(8))
///     .max_wait(Duration::from_secs(30))
///     .jitter(Jitter::Equal);
/// # drop(retry);
/// ```
#[derive(Clone)]
pub struct Retry {
    backoff: Backoff,
    retries: Arc<dyn Fn(&ModelError) -> bool + Send + Sync>,
}

impl Retry {
    /// The hook's name, in errors and traces.
    pub const NAME: &'static str = "retry";

    /// Four attempts, 200 ms first, doubling up to 10 s, at most 60 s waited in all, full
    /// jitter, transient errors.
    pub fn new() -> Self {
        let backoff = Backoff::new(4, Duration::from_millis(200), Duration::from_secs(10));
        Retry { backoff, retries: Arc::new(transient) }
    }

    crate::backoff::backoff_settings!();

    /// Retries the errors `retries` says, in place of the default ([`transient`] ones): to
    /// add to the default, call it (`|e| transient(e) || …`).
    pub fn retry_if(
        mut self,
        retries: impl Fn(&ModelError) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.retries = Arc::new(retries);
        self
    }
}

impl Default for Retry {
    fn default() -> Self {
        Retry::new()
    }
}

impl fmt::Debug for Retry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Retry").field("backoff", &self.backoff).finish_non_exhaustive()
    }
}

impl on::WrapModel for Retry {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    async fn wrap_model(
        &self,
        request: &ModelRequest,
        _turn: &Turn,
        next: &impl NextModel,
    ) -> Result<ModelResponse, ModelError> {
        let mut waited = Duration::ZERO;
        let mut attempt = 1;
        loop {
            let result = next.call(request).await;
            let after = match &result {
                Err(error) if (self.retries)(error) => match error {
                    ModelError::Provider { retry_after: Some(after), .. } => *after,
                    _ => Duration::ZERO,
                },
                _ => return result,
            };
            match self.backoff.wait(attempt, after, waited).await {
                Some(total) => waited = total,
                None => return result,
            }
            attempt += 1;
        }
    }
}
