//! Telemetry: a turn's spans and metrics, named as OpenTelemetry's GenAI conventions name them,
//! sent over OTLP (HTTP, protobuf) to a collector — Jaeger, Grafana Tempo, Honeycomb, Datadog,
//! Langfuse. Nothing in the agent is written for it: the loop reports its spans through
//! `tracing`; `tracing-opentelemetry` turns them into OpenTelemetry spans, and
//! [`agentix_otel::GenAiMetrics`] derives the metrics.

use agentix::event::BeforeTool;
use agentix::session::{Plan, Session, Task};
use agentix::{Agent, Conversation, Outcome, ScriptedModel, ToolCall, Turn, Verdict};
use opentelemetry::KeyValue;
use opentelemetry::metrics::MeterProvider as _;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{MetricExporter, Protocol, SpanExporter, WithExportConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::trace::SdkTracerProvider;
use serde_json::json;
use tracing::subscriber::DefaultGuard;
use tracing_subscriber::layer::SubscriberExt;

use examples::weather::GetWeather;

/// The OpenTelemetry pipeline, while it is installed: traces and metrics to an OTLP endpoint.
pub struct Otlp {
    tracer: SdkTracerProvider,
    meter: SdkMeterProvider,
    _installed: DefaultGuard,
}

impl Otlp {
    /// Exports to the OTLP/HTTP collector at `endpoint` (`http://localhost:4318`, what
    /// `OTEL_EXPORTER_OTLP_ENDPOINT` says): spans to `/v1/traces`, metrics to `/v1/metrics`.
    /// Installed as this thread's subscriber until dropped.
    pub fn install(endpoint: &str) -> Result<Otlp, Box<dyn std::error::Error>> {
        let endpoint = endpoint.trim_end_matches('/');
        let resource = Resource::builder()
            .with_service_name("agentix-telemetry-example")
            .with_attribute(KeyValue::new("deployment.environment.name", "example"))
            .build();
        let spans = SpanExporter::builder()
            .with_http()
            .with_protocol(Protocol::HttpBinary)
            .with_endpoint(format!("{endpoint}/v1/traces"))
            .build()?;
        let tracer = SdkTracerProvider::builder()
            .with_batch_exporter(spans)
            .with_resource(resource.clone())
            .build();
        let metrics = MetricExporter::builder()
            .with_http()
            .with_protocol(Protocol::HttpBinary)
            .with_endpoint(format!("{endpoint}/v1/metrics"))
            .build()?;
        let meter = SdkMeterProvider::builder()
            .with_reader(PeriodicReader::builder(metrics).build())
            .with_resource(resource)
            .build();
        let subscriber = tracing_subscriber::registry()
            .with(tracing_opentelemetry::layer().with_tracer(tracer.tracer("agentix")))
            .with(agentix_otel::GenAiMetrics::new(&meter.meter("agentix")));
        let installed = tracing::subscriber::set_default(subscriber);
        Ok(Otlp { tracer, meter, _installed: installed })
    }

    /// Sends what is left and stops: every span and metric reaches the collector first.
    pub fn shutdown(self) -> Result<(), Box<dyn std::error::Error>> {
        self.tracer.shutdown()?;
        self.meter.shutdown()?;
        Ok(())
    }
}

/// Lets every call through: its decision is an event on the turn's span.
#[agentix::hook(before_tool)]
async fn allow_weather(_call: &mut ToolCall, _turn: &mut Turn) -> Verdict<BeforeTool> {
    Verdict::Continue
}

/// One turn with a good tool call and a bad one, then a session running a plan of two tasks:
/// `invoke_agent forecaster` over `chat` and `execute_tool get_weather` spans (one failed),
/// then `invoke_workflow trip` over `plan packing` and its tasks' turns. Returns the first
/// turn's outcome.
pub async fn run() -> Outcome {
    let model = ScriptedModel::new()
        .tool_calls([
            ("get_weather", json!({ "city": "Bergen" })),
            ("get_weather", json!({ "town": "Bergen" })),
        ])
        .text("A clear sky in Bergen, 21 °C: no umbrella needed.");
    let agent =
        Agent::builder(model).name("forecaster").tool(GetWeather).hook(allow_weather).build();
    let mut conversation = Conversation::new().with_id("umbrella-question");
    let answer = agent.run(&mut conversation, "Do I need an umbrella in Bergen?").await;

    let packer = ScriptedModel::new().text("Sunglasses.").text("A light jacket.");
    let packer = Agent::builder(packer).name("packer").build();
    let mut session = Session::builder(&packer).name("trip").build();
    let plan = Plan::new([Task::new("What for the sun?"), Task::new("What for the evening?")]);
    session.submit_plan(plan.titled("packing")).expect("a new session takes a plan");
    session.run().await.expect("the session runs its plan");
    answer
}
