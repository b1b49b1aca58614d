//! The metrics layer: it keeps what each `chat` span records, and measures the call when the
//! span closes.

use std::time::Instant;

use opentelemetry::KeyValue;
use opentelemetry::metrics::{Histogram, Meter};
use tracing::Subscriber;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing_subscriber::Layer;
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::LookupSpan;

/// The tokens of each model call, input and output apart (`gen_ai.token.type`).
pub const TOKEN_USAGE: &str = "gen_ai.client.token.usage";
/// How long each model call took, failed calls (with `error.type`) included.
pub const OPERATION_DURATION: &str = "gen_ai.client.operation.duration";
/// How long a streamed call's first chunk took to come.
pub const TIME_TO_FIRST_CHUNK: &str = "gen_ai.client.operation.time_to_first_chunk";

/// The conventions' advised buckets for token counts: powers of 4 up to 64 Mi.
const TOKEN_BUCKETS: [f64; 14] = [
    1.0, 4.0, 16.0, 64.0, 256.0, 1024.0, 4096.0, 16384.0, 65536.0, 262144.0, 1048576.0, 4194304.0,
    16777216.0, 67108864.0,
];
/// The conventions' advised buckets for durations, in seconds: doubling from 10 ms.
const SECOND_BUCKETS: [f64; 14] =
    [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92];

/// A `tracing` layer that records the GenAI conventions' client metrics of every model call a
/// turn makes, from its `chat` span: add it to the subscriber beside `tracing-opentelemetry`'s
/// layer (or alone, for metrics without traces).
#[derive(Clone, Debug)]
pub struct GenAiMetrics {
    token_usage: Histogram<u64>,
    duration: Histogram<f64>,
    first_chunk: Histogram<f64>,
}

impl GenAiMetrics {
    /// Records through `meter`'s instruments.
    pub fn new(meter: &Meter) -> Self {
        let token_usage = meter
            .u64_histogram(TOKEN_USAGE)
            .with_unit("{token}")
            .with_description("Number of input and output tokens used.")
            .with_boundaries(TOKEN_BUCKETS.to_vec())
            .build();
        let duration = meter
            .f64_histogram(OPERATION_DURATION)
            .with_unit("s")
            .with_description("GenAI operation duration.")
            .with_boundaries(SECOND_BUCKETS.to_vec())
            .build();
        let first_chunk = meter
            .f64_histogram(TIME_TO_FIRST_CHUNK)
            .with_unit("s")
            .with_description("Time to receive the first chunk in a streaming operation.")
            .with_boundaries(SECOND_BUCKETS.to_vec())
            .build();
        GenAiMetrics { token_usage, duration, first_chunk }
    }
}

impl<S> Layer<S> for GenAiMetrics
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        if !is_model_call(attrs.metadata()) {
            return;
        }
        let mut call = Call::new();
        attrs.record(&mut call);
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().insert(call);
        }
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        // Only a model call's span holds a `Call`: any other is left unlocked.
        if let Some(span) = ctx.span(id)
            && is_model_call(span.metadata())
            && let Some(call) = span.extensions_mut().get_mut::<Call>()
        {
            values.record(call);
        }
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(&id) else { return };
        let Some(call) = span.extensions_mut().remove::<Call>() else { return };
        self.record(call);
    }
}

/// Whether a span is the loop's span of a model call.
fn is_model_call(metadata: &tracing::Metadata<'_>) -> bool {
    metadata.target() == agentix::trace::TARGET && metadata.name() == "chat"
}

impl GenAiMetrics {
    fn record(&self, call: Call) {
        let mut attributes = call.attributes();
        if let Some(input) = call.input_tokens {
            attributes.push(KeyValue::new("gen_ai.token.type", "input"));
            self.token_usage.record(input, &attributes);
            attributes.pop();
        }
        if let Some(output) = call.output_tokens {
            attributes.push(KeyValue::new("gen_ai.token.type", "output"));
            self.token_usage.record(output, &attributes);
            attributes.pop();
        }
        if let Some(seconds) = call.first_chunk {
            self.first_chunk.record(seconds, &attributes);
        }
        if let Some(error) = call.error {
            attributes.push(KeyValue::new("error.type", error));
        }
        self.duration.record(call.started.elapsed().as_secs_f64(), &attributes);
    }
}

/// What a `chat` span has recorded so far.
#[derive(Debug)]
struct Call {
    started: Instant,
    operation: Option<String>,
    provider: Option<String>,
    request_model: Option<String>,
    response_model: Option<String>,
    server_address: Option<String>,
    server_port: Option<i64>,
    error: Option<String>,
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    first_chunk: Option<f64>,
}

impl Call {
    fn new() -> Self {
        Call {
            started: Instant::now(),
            operation: None,
            provider: None,
            request_model: None,
            response_model: None,
            server_address: None,
            server_port: None,
            error: None,
            input_tokens: None,
            output_tokens: None,
            first_chunk: None,
        }
    }

    /// The attributes every measurement of the call carries.
    fn attributes(&self) -> Vec<KeyValue> {
        let mut attributes = Vec::with_capacity(8);
        let strings = [
            ("gen_ai.operation.name", &self.operation),
            ("gen_ai.provider.name", &self.provider),
            ("gen_ai.request.model", &self.request_model),
            ("gen_ai.response.model", &self.response_model),
            ("server.address", &self.server_address),
        ];
        for (key, value) in strings {
            if let Some(value) = value {
                attributes.push(KeyValue::new(key, value.clone()));
            }
        }
        if let Some(port) = self.server_port {
            attributes.push(KeyValue::new("server.port", port));
        }
        attributes
    }
}

impl Visit for Call {
    fn record_str(&mut self, field: &Field, value: &str) {
        let slot = match field.name() {
            "gen_ai.operation.name" => &mut self.operation,
            "gen_ai.provider.name" => &mut self.provider,
            "gen_ai.request.model" => &mut self.request_model,
            "gen_ai.response.model" => &mut self.response_model,
            "server.address" => &mut self.server_address,
            "error.type" => &mut self.error,
            _ => return,
        };
        *slot = Some(value.to_owned());
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        match field.name() {
            "gen_ai.usage.input_tokens" => self.input_tokens = Some(value),
            "gen_ai.usage.output_tokens" => self.output_tokens = Some(value),
            "server.port" => self.server_port = i64::try_from(value).ok(),
            _ => {}
        }
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        if let Ok(value) = u64::try_from(value) {
            self.record_u64(field, value);
        }
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        if field.name() == "gen_ai.response.time_to_first_chunk" {
            self.first_chunk = Some(value);
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        // Strings recorded through `Display` (`%value`) arrive here.
        self.record_str(field, &format!("{value:?}"));
    }
}
