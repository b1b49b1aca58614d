#![allow(missing_docs)] // criterion_group! generates an undocumented `pub fn`.

//! What a turn's spans cost: the bare turn of the turn benchmark (a tool call, then an answer,
//! over an in-memory model, no hooks), under each of:
//!
//! - `none`: no subscriber — the cost gate's turn;
//! - `filtered`: a subscriber that leaves the `agentix` target out;
//! - `registry`: `tracing-subscriber`'s registry alone, keeping the spans and dropping them;
//! - `otel`: `tracing-opentelemetry` to the SDK's tracer, each span exported (to nowhere) as it
//!   ends;
//! - `otel_metrics`: that, and the metrics layer recording to the SDK's meter.
//!
//! Timed by criterion; counted with `AGENTIX_TRACED=variant:turns`, which runs that many turns
//! for `scripts/trace-instructions.sh` to count the instructions of each under valgrind.

use std::hint::black_box;

use agentix::{Agent, Conversation};
use criterion::{Criterion, criterion_group};
use opentelemetry::metrics::MeterProvider as _;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::trace::{SdkTracerProvider, SpanData, SpanExporter};
use tokio::runtime::Runtime;
use tracing::Dispatch;
use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::layer::SubscriberExt;

// The turn benchmark's model and tool: the same bare turn as the cost gate's.
#[allow(dead_code)]
#[path = "../../agentix/benches/turn/fixture.rs"]
mod fixture;

use fixture::{BenchModel, Weather};

/// Exports nowhere: what the SDK does up to the wire.
#[derive(Debug)]
struct Discard;

impl SpanExporter for Discard {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        black_box(batch);
        Ok(())
    }
}

const VARIANTS: [&str; 5] = ["none", "filtered", "registry", "otel", "otel_metrics"];

/// The subscriber of `variant`, with what must outlive it.
fn subscriber(
    variant: &str,
) -> Option<(Dispatch, Option<SdkTracerProvider>, Option<SdkMeterProvider>)> {
    let tracer = || SdkTracerProvider::builder().with_simple_exporter(Discard).build();
    match variant {
        "none" => None,
        "filtered" => {
            let filter = Targets::new()
                .with_default(LevelFilter::TRACE)
                .with_target(agentix::trace::TARGET, LevelFilter::OFF);
            Some((Dispatch::new(tracing_subscriber::registry().with(filter)), None, None))
        }
        "registry" => Some((Dispatch::new(tracing_subscriber::registry()), None, None)),
        "otel" => {
            let tracer = tracer();
            let layer = tracing_opentelemetry::layer().with_tracer(tracer.tracer("bench"));
            Some((Dispatch::new(tracing_subscriber::registry().with(layer)), Some(tracer), None))
        }
        "otel_metrics" => {
            let tracer = tracer();
            // Read every minute (the SDK's default), so never within a run: what is measured is
            // the recording.
            let reader = PeriodicReader::builder(InMemoryMetricExporter::default()).build();
            let meter = SdkMeterProvider::builder().with_reader(reader).build();
            let subscriber = tracing_subscriber::registry()
                .with(tracing_opentelemetry::layer().with_tracer(tracer.tracer("bench")))
                .with(agentix_otel::GenAiMetrics::new(&meter.meter("bench")));
            Some((Dispatch::new(subscriber), Some(tracer), Some(meter)))
        }
        other => panic!("no variant {other}: {VARIANTS:?}"),
    }
}

/// The bare agent: no hooks, one tool.
fn agent() -> Agent<BenchModel, agentix::tool::Toolbox<agentix::tool::NoTools, Weather>> {
    Agent::builder(BenchModel::new(None)).name("bench").tool(Weather).build()
}

/// One turn on a new conversation, on a current-thread runtime (the SDK's simple processor
/// exports with an executor of its own, which `futures`' would refuse inside its own).
fn turn(
    runtime: &Runtime,
    agent: &Agent<BenchModel, agentix::tool::Toolbox<agentix::tool::NoTools, Weather>>,
) {
    let mut conversation = Conversation::new();
    black_box(runtime.block_on(agent.run(&mut conversation, "Weather in Oslo?")).unwrap());
}

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_current_thread().build().unwrap()
}

/// Runs `run` with `variant`'s subscriber as this thread's.
fn under(variant: &str, run: impl FnOnce()) {
    match subscriber(variant) {
        None => run(),
        Some((dispatch, _tracer, _meter)) => tracing::dispatcher::with_default(&dispatch, run),
    }
}

fn traced(c: &mut Criterion) {
    let (agent, runtime) = (agent(), runtime());
    let mut group = c.benchmark_group("traced_turn");
    for variant in VARIANTS {
        under(variant, || {
            group.bench_function(variant, |b| b.iter(|| turn(&runtime, &agent)));
        });
    }
    group.finish();
}

criterion_group!(benches, traced);

fn main() {
    if let Ok(spec) = std::env::var("AGENTIX_TRACED") {
        let (variant, count) = spec.split_once(':').expect("AGENTIX_TRACED is variant:turns");
        let count: usize = count.parse().expect("a turn count");
        let (agent, runtime) = (agent(), runtime());
        under(variant, || (0..count).for_each(|_| turn(&runtime, &agent)));
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
