//! What every layer of the crate leans on: a panic guard for futures, a time limit, a lock that
//! survives a panic, durations as the log writes them. The bottom layer: it names nothing of
//! the crate's.

/// `$future.await`, within `$limit` if there is one: `Ok(output)`, or `Err(limit)` when it runs
/// out. Without a limit the future is awaited as it is: no timer, and no move into a wrapper (a
/// turn's future is large, and moving it costs).
macro_rules! bounded {
    ($limit:expr, $future:expr) => {
        match $limit {
            ::core::option::Option::None => ::core::result::Result::Ok($future.await),
            ::core::option::Option::Some(limit) => {
                ::tokio::time::timeout(limit, $future).await.map_err(|_| limit)
            }
        }
    };
}

/// Starts a future and runs it, catching a panic from either: a hand-written hook may panic
/// before it returns its future.
pub(crate) fn caught<F: std::future::Future>(start: impl FnOnce() -> F) -> Guarded<F> {
    use std::panic::{AssertUnwindSafe, catch_unwind};

    match catch_unwind(AssertUnwindSafe(start)) {
        Ok(future) => Guarded { future: Some(future), panicked: None },
        Err(payload) => Guarded { future: None, panicked: Some(payload) },
    }
}

/// What a panic guard returns: the output, or the panic's payload.
pub(crate) type Caught<T> = Result<T, Box<dyn std::any::Any + Send>>;

pin_project_lite::pin_project! {
    /// A future polled under a panic guard, or the panic that starting it raised: one plain
    /// future where a `CatchUnwind` inside an `Either` nested two.
    pub(crate) struct Guarded<F> {
        #[pin]
        future: Option<F>,
        panicked: Option<Box<dyn std::any::Any + Send>>,
    }
}

impl<F: std::future::Future> std::future::Future for Guarded<F> {
    type Output = Caught<F::Output>;

    #[inline]
    fn poll(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        let this = self.project();
        match this.future.as_pin_mut() {
            Some(future) => poll_guarded(future, cx),
            None => std::task::Poll::Ready(Err(this
                .panicked
                .take()
                .expect("a caught future is polled after it ended"))),
        }
    }
}

pin_project_lite::pin_project! {
    /// A future with an optional time limit: `Err(limit)` if it runs out first. Without a
    /// limit it is the future itself, and no timer is made.
    pub(crate) struct Bounded<F> {
        #[pin]
        future: F,
        #[pin]
        deadline: Option<tokio::time::Sleep>,
        limit: std::time::Duration,
    }
}

impl<F: std::future::Future> Bounded<F> {
    /// `future`, bounded by `limit` (a tokio timer, started now) when there is one.
    #[inline]
    pub(crate) fn new(limit: Option<std::time::Duration>, future: F) -> Self {
        Bounded {
            future,
            deadline: limit.map(tokio::time::sleep),
            limit: limit.unwrap_or_default(),
        }
    }
}

impl<F: std::future::Future> std::future::Future for Bounded<F> {
    type Output = Result<F::Output, std::time::Duration>;

    fn poll(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        use std::task::Poll;

        let this = self.project();
        if let Poll::Ready(output) = this.future.poll(cx) {
            return Poll::Ready(Ok(output));
        }
        match this.deadline.as_pin_mut().map(|deadline| deadline.poll(cx)) {
            Some(Poll::Ready(())) => Poll::Ready(Err(*this.limit)),
            _ => Poll::Pending,
        }
    }
}

/// Polls `future`, catching a panic.
pub(crate) fn poll_guarded<F: std::future::Future>(
    future: std::pin::Pin<&mut F>,
    cx: &mut std::task::Context<'_>,
) -> std::task::Poll<Caught<F::Output>> {
    use std::panic::{AssertUnwindSafe, catch_unwind};
    use std::task::Poll;

    match catch_unwind(AssertUnwindSafe(|| future.poll(cx))) {
        Ok(Poll::Pending) => Poll::Pending,
        Ok(Poll::Ready(output)) => Poll::Ready(Ok(output)),
        Err(payload) => Poll::Ready(Err(payload)),
    }
}

/// Durations in the log and the config, in milliseconds: a number when whole (readable, and
/// every timeout worth setting is), else the text `"MS.NNNNNN"` (the nanoseconds past the last
/// millisecond), so that every duration reads back exactly.
pub(crate) mod millis {
    use std::fmt;
    use std::time::Duration;

    use serde::de::{self, Visitor};
    use serde::{Deserializer, Serializer};

    pub(crate) fn serialize<S: Serializer>(
        duration: &Duration,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        let millis = u64::try_from(duration.as_millis()).unwrap_or(u64::MAX);
        match duration.subsec_nanos() % 1_000_000 {
            0 => serializer.serialize_u64(millis),
            nanos => serializer.collect_str(&format_args!("{millis}.{nanos:06}")),
        }
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Duration, D::Error> {
        deserializer.deserialize_any(Millis)
    }

    struct Millis;

    impl Visitor<'_> for Millis {
        type Value = Duration;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("milliseconds: a whole number, or \"MS.NNNNNN\"")
        }

        fn visit_u64<E: de::Error>(self, millis: u64) -> Result<Duration, E> {
            Ok(Duration::from_millis(millis))
        }

        fn visit_i64<E: de::Error>(self, millis: i64) -> Result<Duration, E> {
            u64::try_from(millis)
                .map(Duration::from_millis)
                .map_err(|_| E::custom("a duration cannot be negative"))
        }

        fn visit_str<E: de::Error>(self, text: &str) -> Result<Duration, E> {
            let invalid = || E::invalid_value(de::Unexpected::Str(text), &self);
            let (millis, nanos) = text.split_once('.').ok_or_else(invalid)?;
            let millis: u64 = millis.parse().map_err(|_| invalid())?;
            if nanos.len() != 6 {
                return Err(invalid());
            }
            let nanos: u32 = nanos.parse().map_err(|_| invalid())?;
            Ok(Duration::from_millis(millis) + Duration::from_nanos(u64::from(nanos)))
        }
    }

    /// The same, for a duration that may be absent.
    pub(crate) mod option {
        use std::time::Duration;

        use serde::{Deserialize, Deserializer, Serializer};

        pub(crate) fn serialize<S: Serializer>(
            duration: &Option<Duration>,
            serializer: S,
        ) -> Result<S::Ok, S::Error> {
            match duration {
                Some(duration) => super::serialize(duration, serializer),
                None => serializer.serialize_none(),
            }
        }

        pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
            deserializer: D,
        ) -> Result<Option<Duration>, D::Error> {
            #[derive(Deserialize)]
            struct Wrapped(#[serde(with = "super")] Duration);
            Option::<Wrapped>::deserialize(deserializer).map(|wrapped| wrapped.map(|it| it.0))
        }
    }
}

/// Locks, recovering from poisoning: what this crate keeps behind a mutex is valid at every
/// point, so a panic elsewhere leaves nothing half-written.
pub(crate) fn lock<T>(mutex: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The text of a panic's payload.
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(message) = payload.downcast_ref::<&str>() {
        (*message).to_owned()
    } else if let Some(message) = payload.downcast_ref::<String>() {
        message.clone()
    } else {
        "a non-text panic payload".to_owned()
    }
}
