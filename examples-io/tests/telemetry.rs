//! The telemetry example: every event of the lifecycle reaches the `tracing` subscriber, the
//! model and tool calls inside spans.

use std::io::Write;
use std::sync::{Arc, Mutex};

/// Collects what the `fmt` subscriber writes.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn every_event_is_traced() {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .with_target(false)
        .without_time()
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);
    let outcome = examples_io::telemetry::run().await;
    assert!(outcome.expect("the turn completes").joined_text().contains("umbrella"));

    let text = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    for event in agentix::event::EventKind::TURN {
        assert!(text.contains(&format!("event=\"{event}\"")), "{event} is traced:\n{text}");
    }
    assert!(text.contains("model_call{step=0}: event=\"wrap_model\" ok=true"));
    assert!(text.contains("tool_call{tool=get_weather}: event=\"wrap_tool\" failed=true"));
    assert!(text.contains("WARN event=\"tool_error\""));
}
