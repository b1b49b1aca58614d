//! Retry with backoff: a `wrap_model` hook that calls the model again after a transient
//! error, waiting longer each time.

use std::collections::hash_map::RandomState;
use std::fmt;
use std::hash::{BuildHasher, Hasher};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use agentix::{ModelError, ModelRequest, ModelResponse, NextModel, Turn, on};

use crate::errors::transient;

/// How much of each wait is drawn at random, so that many clients that failed together do not
/// all come back together.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Jitter {
    /// Off: the backoff as it is (for tests, and a single client).
    Off,
    /// A wait drawn from zero to the backoff ("full jitter": the fewest collisions).
    #[default]
    Full,
    /// Half the backoff, and a draw from zero to the other half.
    Equal,
}

/// Calls the model again after a failure that may pass (by default a [`transient`] one:
/// unreachable, overloaded, rate-limited, timed out), waiting between calls: `initial_delay`,
/// doubled at each retry up to `max_delay`, [`Jitter`]ed — after a provider's `retry-after`
/// when it gave one. It stops at `attempts` calls in all, or when the next wait would take the
/// call's total wait past `max_wait` (each wait counted at its most, before the jitter, so that
/// whether a retry is made does not depend on a draw: a journaled turn replays it the same),
/// and returns the last error. `max_wait` is per call of the hook: under a
/// [`ModelFallback`](crate::ModelFallback), each model has its own.
///
/// Each call goes through the loop (`next`): it is journaled, audited and traced as its own
/// `chat` span (`agentix.attempt` 2, 3, …); every observer sees each failed attempt
/// ([`Observation::ModelCallFailed`](agentix::Observation::ModelCallFailed)), and one that
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
    attempts: u32,
    initial_delay: Duration,
    max_delay: Duration,
    max_wait: Duration,
    jitter: Jitter,
    retries: Arc<dyn Fn(&ModelError) -> bool + Send + Sync>,
    draws: Arc<Draws>,
}

impl Retry {
    /// Four attempts, 200 ms first, doubling up to 10 s, at most 60 s waited in all, full
    /// jitter, transient errors.
    pub fn new() -> Self {
        Retry {
            attempts: 4,
            initial_delay: Duration::from_millis(200),
            max_delay: Duration::from_secs(10),
            max_wait: Duration::from_secs(60),
            jitter: Jitter::Full,
            retries: Arc::new(transient),
            draws: Arc::new(Draws::new()),
        }
    }

    /// How many calls in all, the first included (at least 1: no retry).
    pub fn attempts(mut self, attempts: u32) -> Self {
        self.attempts = attempts.max(1);
        self
    }

    /// The wait before the first retry, doubled before each next.
    pub fn initial_delay(mut self, delay: Duration) -> Self {
        self.initial_delay = delay;
        self
    }

    /// The longest one wait grows to (a `retry-after` may ask for more: it is honoured).
    pub fn max_delay(mut self, delay: Duration) -> Self {
        self.max_delay = delay;
        self
    }

    /// The most one call waits in all: a retry whose wait would pass it is not made.
    pub fn max_wait(mut self, wait: Duration) -> Self {
        self.max_wait = wait;
        self
    }

    /// How much of each wait is drawn at random.
    pub fn jitter(mut self, jitter: Jitter) -> Self {
        self.jitter = jitter;
        self
    }

    /// Retries the errors `retries` says, in place of the default ([`transient`] ones): to
    /// add to the default, call it (`|e| transient(e) || …`).
    pub fn retry_if(
        mut self,
        retries: impl Fn(&ModelError) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.retries = Arc::new(retries);
        self
    }

    /// The wait before retry `retry` (1 for the first) after `error`, at its most (what the
    /// total wait counts) and as drawn: a `retry-after` and then the jittered backoff.
    fn delay(&self, retry: u32, error: &ModelError) -> (Duration, Duration) {
        let doubled = self.initial_delay.saturating_mul(2u32.saturating_pow(retry - 1));
        let backoff = doubled.min(self.max_delay);
        let drawn = match self.jitter {
            Jitter::Full => self.draws.up_to(backoff),
            Jitter::Equal => backoff / 2 + self.draws.up_to(backoff - backoff / 2),
            Jitter::Off => backoff,
        };
        let after = match error {
            // Spread too: every client the provider told the same wait comes back apart.
            ModelError::Provider { retry_after: Some(after), .. } => *after,
            _ => Duration::ZERO,
        };
        match self.jitter {
            Jitter::Off if !after.is_zero() => (after, after),
            _ => (after.saturating_add(backoff), after.saturating_add(drawn)),
        }
    }
}

impl Default for Retry {
    fn default() -> Self {
        Retry::new()
    }
}

impl fmt::Debug for Retry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Retry")
            .field("attempts", &self.attempts)
            .field("initial_delay", &self.initial_delay)
            .field("max_delay", &self.max_delay)
            .field("max_wait", &self.max_wait)
            .field("jitter", &self.jitter)
            .finish_non_exhaustive()
    }
}

impl on::WrapModel for Retry {
    fn name(&self) -> &'static str {
        "retry"
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
            let error = match &result {
                Err(error) if attempt < self.attempts && (self.retries)(error) => error,
                _ => return result,
            };
            let (most, delay) = self.delay(attempt, error);
            if most > self.max_wait.saturating_sub(waited) {
                return result;
            }
            tokio::time::sleep(delay).await;
            waited = waited.saturating_add(most);
            attempt += 1;
        }
    }
}

/// Random draws for the jitter: SplitMix64 over a seed from the standard library's randomly
/// keyed hasher — no dependency for a number that only spreads retries out.
struct Draws {
    state: AtomicU64,
}

impl Draws {
    fn new() -> Self {
        let seed = RandomState::new().build_hasher().finish();
        Draws { state: AtomicU64::new(seed) }
    }

    /// A duration drawn evenly from zero to `most`.
    fn up_to(&self, most: Duration) -> Duration {
        let nanos = u64::try_from(most.as_nanos()).unwrap_or(u64::MAX);
        if nanos == 0 {
            return Duration::ZERO;
        }
        let mut z = self.state.fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        Duration::from_nanos(z % nanos.saturating_add(1))
    }
}
