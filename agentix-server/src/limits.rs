//! Limits per caller: a token bucket of requests and a count of turns running at once, each
//! subject its own, so that a flood from one key is refused `429` while another's turns go on.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::identity::Unauthenticated;
use crate::{ApiError, Identity, lock};

/// How much each subject may ask: requests a second (a token bucket: `burst` at once, then
/// `per_second`), and turns running at once. [`Limits::none`] turns both off.
///
/// ```
/// use agentix_server::Limits;
///
/// let limits = Limits::default().requests(5.0, 20).turns(2);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Limits {
    per_second: f64,
    burst: u32,
    turns: usize,
}

impl Default for Limits {
    /// 10 requests a second with bursts of 40, and 8 turns at once, per subject.
    fn default() -> Self {
        Limits { per_second: 10.0, burst: 40, turns: 8 }
    }
}

impl Limits {
    /// No limit on requests or turns.
    pub fn none() -> Limits {
        Limits { per_second: 0.0, burst: 0, turns: 0 }
    }

    /// Each subject may send `burst` requests at once, and `per_second` more each second
    /// after (`0.0`: no limit).
    pub fn requests(mut self, per_second: f64, burst: u32) -> Limits {
        self.per_second = per_second.max(0.0);
        self.burst = burst.max(1);
        self
    }

    /// Each subject may have `at_once` turns running (`0`: no limit).
    pub fn turns(mut self, at_once: usize) -> Limits {
        self.turns = at_once;
        self
    }

    /// The requests a second each subject may send after its burst (`0.0`: no limit).
    pub fn per_second(&self) -> f64 {
        self.per_second
    }

    /// The requests each subject may send at once.
    pub fn burst(&self) -> u32 {
        self.burst
    }

    /// The turns each subject may have running at once (`0`: no limit).
    pub fn turns_at_once(&self) -> usize {
        self.turns
    }
}

/// The subjects' buckets and running turns.
#[derive(Debug)]
pub(crate) struct Counters {
    limits: Limits,
    buckets: Mutex<HashMap<String, Bucket>>,
    turns: Mutex<HashMap<String, usize>>,
}

#[derive(Clone, Copy, Debug)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

/// Past this many subjects' buckets, the full ones (subjects idle long enough to be back at
/// their burst) are dropped: a full bucket is what a new one would be.
const KEPT_BUCKETS: usize = 10_000;

impl Counters {
    pub(crate) fn new(limits: Limits) -> Counters {
        Counters { limits, buckets: Mutex::default(), turns: Mutex::default() }
    }

    /// Takes one of `subject`'s request tokens at `now`, or says how long until one is back.
    fn take(&self, subject: &str, now: Instant) -> Result<(), Duration> {
        let Limits { per_second, burst, .. } = self.limits;
        if per_second <= 0.0 {
            return Ok(());
        }
        let burst = f64::from(burst);
        let mut buckets = lock(&self.buckets);
        if buckets.len() >= KEPT_BUCKETS && !buckets.contains_key(subject) {
            buckets.retain(|_, bucket| refilled(*bucket, now, per_second, burst) < burst);
        }
        let bucket = buckets.entry(subject.to_owned()).or_insert(Bucket { tokens: burst, at: now });
        let tokens = refilled(*bucket, now, per_second, burst);
        if tokens >= 1.0 {
            *bucket = Bucket { tokens: tokens - 1.0, at: now };
            Ok(())
        } else {
            *bucket = Bucket { tokens, at: now };
            // A rate so small that the wait overflows waits "forever".
            Err(Duration::try_from_secs_f64((1.0 - tokens) / per_second).unwrap_or(Duration::MAX))
        }
    }

    /// Counts a turn of `subject`'s as running until the guard is dropped, or refuses it.
    pub(crate) fn start_turn(self: &Arc<Self>, subject: &str) -> Result<TurnSlot, ApiError> {
        if self.limits.turns == 0 {
            return Ok(TurnSlot(None));
        }
        let mut turns = lock(&self.turns);
        let running = turns.entry(subject.to_owned()).or_default();
        if *running >= self.limits.turns {
            return Err(ApiError::TooManyTurns { limit: self.limits.turns });
        }
        *running += 1;
        Ok(TurnSlot(Some((Arc::clone(self), subject.to_owned()))))
    }
}

/// A bucket's tokens at `now`, refilled since it was last touched, up to the burst.
fn refilled(bucket: Bucket, now: Instant, per_second: f64, burst: f64) -> f64 {
    let elapsed = now.saturating_duration_since(bucket.at).as_secs_f64();
    (bucket.tokens + elapsed * per_second).min(burst)
}

/// One running turn of a subject's, counted until it is dropped.
pub(crate) struct TurnSlot(Option<(Arc<Counters>, String)>);

impl Drop for TurnSlot {
    fn drop(&mut self) {
        if let Some((counters, subject)) = self.0.take() {
            let mut turns = lock(&counters.turns);
            if let Some(running) = turns.get_mut(&subject) {
                *running -= 1;
                if *running == 0 {
                    turns.remove(&subject);
                }
            }
        }
    }
}

/// Refuses `401` a request without an identity (the routes behind it — the conversations',
/// and those served beside them — see none that was not proven), and `429 rate_limited` (with
/// `Retry-After`) one whose subject has no token left: the middleware
/// (`axum::middleware::from_fn_with_state`) the server puts in front of its routes.
pub(crate) async fn rate_limit(
    State(counters): State<Arc<Counters>>,
    request: Request,
    next: Next,
) -> Response {
    let refused = match request.extensions().get::<Identity>() {
        None => ApiError::Unauthenticated(Unauthenticated::Missing),
        Some(identity) => match counters.take(&identity.subject, Instant::now()) {
            Ok(()) => return next.run(request).await,
            Err(wait) => ApiError::RateLimited { wait },
        },
    };
    refused.into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bucket_gives_its_burst_then_its_rate_and_each_subject_has_its_own() {
        let counters = Counters::new(Limits::default().requests(2.0, 3));
        let start = Instant::now();
        for _ in 0..3 {
            assert_eq!(counters.take("a", start), Ok(()));
        }
        let wait = counters.take("a", start).unwrap_err();
        assert_eq!(wait, Duration::from_millis(500));
        assert_eq!(counters.take("b", start), Ok(()), "another subject's bucket is full");
        assert_eq!(counters.take("a", start + Duration::from_millis(500)), Ok(()));
        assert!(counters.take("a", start + Duration::from_millis(600)).is_err());
        // Idle long enough, back to the burst, never past it.
        let later = start + Duration::from_secs(60);
        for _ in 0..3 {
            assert_eq!(counters.take("a", later), Ok(()));
        }
        assert!(counters.take("a", later).is_err());
        assert_eq!(Counters::new(Limits::none()).take("a", start), Ok(()));
    }

    #[test]
    fn turns_are_counted_per_subject_while_they_run() {
        let counters = Arc::new(Counters::new(Limits::default().turns(2)));
        let one = counters.start_turn("a").unwrap();
        let _two = counters.start_turn("a").unwrap();
        assert!(matches!(counters.start_turn("a"), Err(ApiError::TooManyTurns { limit: 2 })));
        let _other = counters.start_turn("b").unwrap();
        drop(one);
        let _three = counters.start_turn("a").unwrap();
        drop((_two, _three));
        assert!(lock(&counters.turns).get("a").is_none(), "a subject with none is forgotten");
    }

    #[test]
    fn many_subjects_keep_only_the_buckets_not_full() {
        let counters = Counters::new(Limits::default().requests(1.0, 1));
        let start = Instant::now();
        for subject in 0..KEPT_BUCKETS {
            counters.take(&subject.to_string(), start).unwrap();
        }
        // A second on, every bucket is full again: the next new subject drops them all.
        counters.take("new", start + Duration::from_secs(1)).unwrap();
        assert_eq!(lock(&counters.buckets).len(), 1);
    }
}
