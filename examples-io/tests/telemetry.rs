//! The telemetry example, exporting for real: OTLP over HTTP to a loopback receiver started
//! here, which decodes the protobuf payloads as a collector would and keeps what arrived.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value;
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue};
use opentelemetry_proto::tonic::trace::v1::{Span, status::StatusCode as SpanStatus};
use prost::Message;

/// What the receiver was sent.
#[derive(Clone, Default)]
struct Received {
    traces: Arc<Mutex<Vec<ExportTraceServiceRequest>>>,
    metrics: Arc<Mutex<Vec<ExportMetricsServiceRequest>>>,
}

async fn traces(State(received): State<Received>, headers: HeaderMap, body: Bytes) -> StatusCode {
    assert_eq!(headers["content-type"], "application/x-protobuf");
    let request = ExportTraceServiceRequest::decode(body).expect("an OTLP trace export");
    received.traces.lock().unwrap().push(request);
    StatusCode::OK
}

async fn metrics(State(received): State<Received>, body: Bytes) -> StatusCode {
    let request = ExportMetricsServiceRequest::decode(body).expect("an OTLP metrics export");
    received.metrics.lock().unwrap().push(request);
    StatusCode::OK
}

fn string(value: &Option<AnyValue>) -> Option<&str> {
    match value.as_ref()?.value.as_ref()? {
        Value::StringValue(text) => Some(text),
        _ => None,
    }
}

fn attribute<'a>(attributes: &'a [KeyValue], key: &str) -> Option<&'a str> {
    attributes.iter().find(|kv| kv.key == key).and_then(|kv| string(&kv.value))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_example_sends_its_spans_and_metrics_over_otlp() {
    let received = Received::default();
    let app = Router::new()
        .route("/v1/traces", post(traces))
        .route("/v1/metrics", post(metrics))
        .with_state(received.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    let otlp = examples_io::telemetry::Otlp::install(&endpoint).unwrap();
    let outcome = examples_io::telemetry::run().await;
    assert!(outcome.unwrap().joined_text().contains("umbrella"));
    // Shutting down sends what the batch still holds; the receiver has it all after.
    let shutdown = tokio::task::spawn_blocking(move || otlp.shutdown().map_err(|e| e.to_string()));
    shutdown.await.unwrap().unwrap();

    let exports = received.traces.lock().unwrap().clone();
    assert!(!exports.is_empty(), "no trace export arrived");
    let mut spans: Vec<Span> = Vec::new();
    for export in &exports {
        for resource_spans in &export.resource_spans {
            let resource = resource_spans.resource.as_ref().expect("a resource");
            assert_eq!(
                attribute(&resource.attributes, "service.name"),
                Some("agentix-telemetry-example")
            );
            for scope in &resource_spans.scope_spans {
                spans.extend(scope.spans.iter().cloned());
            }
        }
    }
    let mut names: BTreeMap<&str, usize> = BTreeMap::new();
    for span in &spans {
        *names.entry(span.name.as_str()).or_default() += 1;
    }
    let expected = [
        ("invoke_agent forecaster", 1),
        ("chat", 4),
        ("execute_tool get_weather", 2),
        ("invoke_workflow trip", 1),
        ("plan packing", 1),
        ("invoke_agent packer", 2),
    ];
    assert_eq!(names, expected.into_iter().collect(), "the spans that arrived");

    let by_id = |id: &[u8]| spans.iter().find(|span| span.span_id == id);
    let turn = spans.iter().find(|span| span.name == "invoke_agent forecaster").unwrap();
    assert_eq!(attribute(&turn.attributes, "gen_ai.agent.name"), Some("forecaster"));
    assert_eq!(attribute(&turn.attributes, "gen_ai.conversation.id"), Some("umbrella-question"));
    let calls: Vec<&Span> =
        spans.iter().filter(|span| span.name == "execute_tool get_weather").collect();
    for call in &calls {
        assert_eq!(call.parent_span_id, turn.span_id);
        assert_eq!(call.trace_id, turn.trace_id);
    }
    // The call with the wrong arguments failed, and says so.
    let failed: Vec<&&Span> = calls
        .iter()
        .filter(|call| call.status.as_ref().is_some_and(|s| s.code == SpanStatus::Error as i32))
        .collect();
    assert_eq!(failed.len(), 1);
    assert_eq!(attribute(&failed[0].attributes, "error.type"), Some("invalid_arguments"));
    let hook = turn.events.iter().find(|event| event.name == "agentix.hook").expect("an event");
    assert_eq!(attribute(&hook.attributes, "agentix.hook"), Some("allow_weather"));
    // The session's plan holds its tasks' turns.
    for packer in spans.iter().filter(|span| span.name == "invoke_agent packer") {
        let parent = by_id(&packer.parent_span_id).expect("a parent that arrived");
        assert_eq!(parent.name, "plan packing");
    }

    let metrics = received.metrics.lock().unwrap().clone();
    let names: Vec<String> = metrics
        .iter()
        .flat_map(|export| &export.resource_metrics)
        .flat_map(|resource| &resource.scope_metrics)
        .flat_map(|scope| &scope.metrics)
        .map(|metric| metric.name.clone())
        .collect();
    for expected in [agentix_otel::TOKEN_USAGE, agentix_otel::OPERATION_DURATION] {
        assert!(names.iter().any(|name| name == expected), "{expected} among {names:?}");
    }
}
