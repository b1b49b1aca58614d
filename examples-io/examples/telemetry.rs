//! Telemetry: a turn's spans and metrics as OpenTelemetry's GenAI conventions name them.
//!
//! With `OTEL_EXPORTER_OTLP_ENDPOINT` set (a collector's OTLP/HTTP endpoint, such as Jaeger's
//! `http://localhost:4318`), they go there; without it, each span is printed as it closes.
//!
//!     cargo run -p examples-io --example telemetry
//!     OTEL_EXPORTER_OTLP_ENDPOINT=http://localhost:4318 cargo run -p examples-io --example telemetry

use tracing_subscriber::fmt::format::FmtSpan;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    match std::env::var("OTEL_EXPORTER_OTLP_ENDPOINT") {
        Ok(endpoint) => {
            let otlp = examples_io::telemetry::Otlp::install(&endpoint)?;
            let outcome = examples_io::telemetry::run().await;
            otlp.shutdown()?;
            println!("reply: {}", outcome?.joined_text());
            println!("spans and metrics sent to {endpoint}");
        }
        Err(_) => {
            tracing_subscriber::fmt()
                .with_span_events(FmtSpan::CLOSE)
                .with_target(false)
                .without_time()
                .init();
            let outcome = examples_io::telemetry::run().await;
            println!("reply: {}", outcome?.joined_text());
        }
    }
    Ok(())
}
