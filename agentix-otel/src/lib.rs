//! OpenTelemetry for agentix. A turn reports its spans through `tracing`, named as the GenAI
//! semantic conventions name them ([`agentix::trace`]); `tracing-opentelemetry` exports them
//! as they are. This crate adds the conventions' client metrics, derived from the same spans:
//!
//! | metric | instrument | from each model call's `chat` span |
//! |---|---|---|
//! | [`gen_ai.client.token.usage`](TOKEN_USAGE) | histogram, `{token}` | its input and output tokens (`gen_ai.token.type`) |
//! | [`gen_ai.client.operation.duration`](OPERATION_DURATION) | histogram, `s` | how long it took, and `error.type` if it failed |
//! | [`gen_ai.client.operation.time_to_first_chunk`](TIME_TO_FIRST_CHUNK) | histogram, `s` | when it streamed, how long the first chunk took |
//!
//! each with `gen_ai.operation.name`, `gen_ai.provider.name`, `gen_ai.request.model`,
//! `gen_ai.response.model`, `server.address` and `server.port` where known, and the bucket
//! boundaries the conventions advise.
//!
//! ```
//! use agentix_otel::GenAiMetrics;
//! use tracing_subscriber::layer::SubscriberExt;
//!
//! let meter = opentelemetry::global::meter("my-agent");
//! let subscriber = tracing_subscriber::registry().with(GenAiMetrics::new(&meter));
//! # drop(subscriber);
//! ```
//!
//! A call a journal replays was not made again: it has no span, and counts nowhere.

mod metrics;

pub use metrics::{GenAiMetrics, OPERATION_DURATION, TIME_TO_FIRST_CHUNK, TOKEN_USAGE};
