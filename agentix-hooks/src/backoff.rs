//! Backoff between retries: exponential, capped, jittered — what `Retry` and `ToolRetry` wait.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

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

/// The builder methods of a hook that waits by a [`Backoff`] in its field `backoff`.
macro_rules! backoff_settings {
    () => {
        /// How many calls in all, the first included (at least 1: no retry).
        pub fn attempts(mut self, attempts: u32) -> Self {
            self.backoff.attempts = attempts.max(1);
            self
        }

        /// The wait before the first retry, doubled before each next.
        pub fn initial_delay(mut self, delay: std::time::Duration) -> Self {
            self.backoff.initial_delay = delay;
            self
        }

        /// The longest one wait grows to (a provider's `retry-after` may ask for more: it is
        /// honoured).
        pub fn max_delay(mut self, delay: std::time::Duration) -> Self {
            self.backoff.max_delay = delay;
            self
        }

        /// The most one call waits in all: a retry whose wait would pass it is not made.
        pub fn max_wait(mut self, wait: std::time::Duration) -> Self {
            self.backoff.max_wait = wait;
            self
        }

        /// How much of each wait is drawn at random.
        pub fn jitter(mut self, jitter: $crate::Jitter) -> Self {
            self.backoff.jitter = jitter;
            self
        }
    };
}

pub(crate) use backoff_settings;

/// The waits between attempts: `initial_delay`, doubled at each retry up to `max_delay`,
/// [`Jitter`]ed; at most `attempts` calls, and at most `max_wait` waited in all.
#[derive(Clone)]
pub(crate) struct Backoff {
    pub(crate) attempts: u32,
    pub(crate) initial_delay: Duration,
    pub(crate) max_delay: Duration,
    pub(crate) max_wait: Duration,
    pub(crate) jitter: Jitter,
    draws: Arc<Draws>,
}

impl Backoff {
    pub(crate) fn new(attempts: u32, initial_delay: Duration, max_delay: Duration) -> Self {
        Backoff {
            attempts,
            initial_delay,
            max_delay,
            max_wait: Duration::from_secs(60),
            jitter: Jitter::Full,
            draws: Arc::new(Draws::new()),
        }
    }

    /// The wait before retry `retry` (1 for the first), after a wait of `after` the failure
    /// asked for (a provider's `retry-after`), at its most (what the total wait counts) and
    /// as drawn.
    pub(crate) fn delay(&self, retry: u32, after: Duration) -> (Duration, Duration) {
        let doubled = self.initial_delay.saturating_mul(2u32.saturating_pow(retry - 1));
        let backoff = doubled.min(self.max_delay);
        let drawn = match self.jitter {
            Jitter::Full => self.draws.up_to(backoff),
            Jitter::Equal => backoff / 2 + self.draws.up_to(backoff - backoff / 2),
            Jitter::Off => backoff,
        };
        match self.jitter {
            Jitter::Off if !after.is_zero() => (after, after),
            // Spread too: every client told the same wait comes back apart.
            _ => (after.saturating_add(backoff), after.saturating_add(drawn)),
        }
    }

    /// Waits before retry `retry` after the call's `waited` so far, if it is to be made: at
    /// most `attempts` calls, and the total wait within `max_wait` (each wait counted at its
    /// most, before the jitter, so that whether a retry is made does not depend on a draw: a
    /// journaled turn replays it the same). Returns the new total, or `None`: no retry.
    pub(crate) async fn wait(
        &self,
        retry: u32,
        after: Duration,
        waited: Duration,
    ) -> Option<Duration> {
        if retry >= self.attempts {
            return None;
        }
        let (most, delay) = self.delay(retry, after);
        if most > self.max_wait.saturating_sub(waited) {
            return None;
        }
        tokio::time::sleep(delay).await;
        Some(waited.saturating_add(most))
    }
}

impl std::fmt::Debug for Backoff {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Backoff")
            .field("attempts", &self.attempts)
            .field("initial_delay", &self.initial_delay)
            .field("max_delay", &self.max_delay)
            .field("max_wait", &self.max_wait)
            .field("jitter", &self.jitter)
            .finish()
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
