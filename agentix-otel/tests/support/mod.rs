//! A real OpenTelemetry pipeline in memory: `tracing-opentelemetry` to the SDK's tracer, whose
//! spans an in-memory exporter keeps; the metrics layer to the SDK's meter, read by hand.

#![allow(dead_code)]

use opentelemetry::trace::{SpanId, Status, TracerProvider as _};
use opentelemetry::{Key, KeyValue, Value};
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, HistogramDataPoint, MetricData};
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use tracing::subscriber::DefaultGuard;
use tracing_subscriber::layer::SubscriberExt;

/// A scripted model with a provider, a default model, and what each call costs.
pub struct Priced(pub agentix::ScriptedModel, pub agentix::model::Usage);

impl agentix::Model for Priced {
    fn provider(&self, _model: Option<&str>) -> &str {
        "test-provider"
    }

    fn model_name<'a>(&'a self, model: Option<&'a str>) -> Option<&'a str> {
        Some(model.unwrap_or("model-1"))
    }

    async fn complete(
        &self,
        request: &agentix::model::ModelRequest,
    ) -> Result<agentix::model::ModelResponse, agentix::model::ModelError> {
        let mut response = self.0.complete(request).await?;
        response.usage = self.1;
        Ok(response)
    }
}

/// Everything a test's turns report, while it is alive (on this thread).
pub struct Collected {
    spans: InMemorySpanExporter,
    tracer: SdkTracerProvider,
    metrics: InMemoryMetricExporter,
    meter: SdkMeterProvider,
    _guard: DefaultGuard,
}

/// Starts collecting on this thread (a current-thread runtime's turns run here).
pub fn collect() -> Collected {
    let spans = InMemorySpanExporter::default();
    let tracer = SdkTracerProvider::builder().with_simple_exporter(spans.clone()).build();
    let metrics = InMemoryMetricExporter::default();
    let meter = SdkMeterProvider::builder()
        .with_reader(PeriodicReader::builder(metrics.clone()).build())
        .build();
    let subscriber = tracing_subscriber::registry()
        .with(tracing_opentelemetry::layer().with_tracer(tracer.tracer("agentix-tests")))
        .with(agentix_otel::GenAiMetrics::new(&opentelemetry::metrics::MeterProvider::meter(
            &meter,
            "agentix-tests",
        )));
    let _guard = tracing::subscriber::set_default(subscriber);
    Collected { spans, tracer, metrics, meter, _guard }
}

impl Collected {
    /// The spans that ended, in the order they started.
    pub fn spans(&self) -> Vec<SpanData> {
        self.tracer.force_flush().unwrap();
        let mut spans = self.spans.get_finished_spans().unwrap();
        spans.sort_by_key(|span| span.start_time);
        spans
    }

    /// What the meter holds now: cumulative, so the last export has every measurement.
    fn exported(&self) -> Vec<opentelemetry_sdk::metrics::data::ResourceMetrics> {
        self.meter.force_flush().unwrap();
        let mut exports = self.metrics.get_finished_metrics().unwrap();
        exports.pop().into_iter().collect()
    }

    /// The data points of histogram `name`, as (attributes, count, sum).
    pub fn histogram(&self, name: &str) -> Vec<(Vec<KeyValue>, u64, f64)> {
        let mut points = Vec::new();
        for resource in self.exported() {
            for scope in resource.scope_metrics() {
                for metric in scope.metrics().filter(|metric| metric.name() == name) {
                    match metric.data() {
                        AggregatedMetrics::U64(MetricData::Histogram(histogram)) => {
                            points.extend(
                                histogram.data_points().map(|point| point_of(point, |v| v as f64)),
                            );
                        }
                        AggregatedMetrics::F64(MetricData::Histogram(histogram)) => {
                            points.extend(
                                histogram.data_points().map(|point| point_of(point, |v| v)),
                            );
                        }
                        _ => panic!("{name} is not a histogram"),
                    }
                }
            }
        }
        points
    }

    /// The bucket boundaries of histogram `name`'s first point.
    pub fn bounds(&self, name: &str) -> Vec<f64> {
        for resource in self.exported() {
            for scope in resource.scope_metrics() {
                if let Some(metric) = scope.metrics().find(|metric| metric.name() == name) {
                    return match metric.data() {
                        AggregatedMetrics::U64(MetricData::Histogram(histogram)) => {
                            histogram.data_points().next().unwrap().bounds().collect()
                        }
                        AggregatedMetrics::F64(MetricData::Histogram(histogram)) => {
                            histogram.data_points().next().unwrap().bounds().collect()
                        }
                        _ => panic!("{name} is not a histogram"),
                    };
                }
            }
        }
        panic!("no metric {name}")
    }

    /// The unit of metric `name`.
    pub fn unit(&self, name: &str) -> String {
        for resource in self.exported() {
            for scope in resource.scope_metrics() {
                if let Some(metric) = scope.metrics().find(|metric| metric.name() == name) {
                    return metric.unit().to_owned();
                }
            }
        }
        panic!("no metric {name}")
    }
}

fn point_of<T: Copy>(
    point: &HistogramDataPoint<T>,
    float: impl Fn(T) -> f64,
) -> (Vec<KeyValue>, u64, f64) {
    (point.attributes().cloned().collect(), point.count(), float(point.sum()))
}

/// The spans named `name` (the OpenTelemetry name: `chat gpt-4`).
pub fn named<'a>(spans: &'a [SpanData], name: &str) -> Vec<&'a SpanData> {
    spans.iter().filter(|span| span.name == name).collect()
}

/// The one span named `name`.
pub fn one<'a>(spans: &'a [SpanData], name: &str) -> &'a SpanData {
    let found = named(spans, name);
    let names: Vec<&str> = spans.iter().map(|span| span.name.as_ref()).collect();
    assert_eq!(found.len(), 1, "one span named {name:?} among {names:?}");
    found[0]
}

/// The spans whose `gen_ai.operation.name` is `operation`, in the order they started.
pub fn operations<'a>(spans: &'a [SpanData], operation: &str) -> Vec<&'a SpanData> {
    spans
        .iter()
        .filter(|span| {
            attr(span, "gen_ai.operation.name") == Some(Value::from(operation.to_owned()))
        })
        .collect()
}

/// A span's attribute.
pub fn attr(span: &SpanData, key: &str) -> Option<Value> {
    span.attributes.iter().find(|kv| kv.key == Key::from(key.to_owned())).map(|kv| kv.value.clone())
}

/// A span's string attribute, which it must have.
pub fn text(span: &SpanData, key: &str) -> String {
    match attr(span, key) {
        Some(Value::String(value)) => value.to_string(),
        other => panic!("{key} of {} is {other:?}, not a string", span.name),
    }
}

/// A span's integer attribute, which it must have.
pub fn int(span: &SpanData, key: &str) -> i64 {
    match attr(span, key) {
        Some(Value::I64(value)) => value,
        other => panic!("{key} of {} is {other:?}, not an integer", span.name),
    }
}

/// Whether `child`'s parent is `parent`.
pub fn is_child(child: &SpanData, parent: &SpanData) -> bool {
    child.parent_span_id == parent.span_context.span_id()
}

/// Whether the span has no parent.
pub fn is_root(span: &SpanData) -> bool {
    span.parent_span_id == SpanId::INVALID
}

/// Whether the span ended in an error.
pub fn failed(span: &SpanData) -> bool {
    matches!(span.status, Status::Error { .. })
}

/// A point's attribute.
pub fn point_attr(attributes: &[KeyValue], key: &str) -> Option<String> {
    attributes.iter().find(|kv| kv.key.as_str() == key).map(|kv| kv.value.to_string())
}

/// The events of a span named `name`, as their attributes by key.
pub fn events(span: &SpanData, name: &str) -> Vec<Vec<(String, String)>> {
    span.events
        .iter()
        .filter(|event| event.name == name)
        .map(|event| {
            event.attributes.iter().map(|kv| (kv.key.to_string(), kv.value.to_string())).collect()
        })
        .collect()
}
