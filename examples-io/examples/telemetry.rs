//! Telemetry: one hook struct reports every event of the lifecycle through `tracing`; here the
//! `fmt` subscriber prints it.
//!
//! Run it with `cargo run -p examples-io --example telemetry`.

#[tokio::main(flavor = "current_thread")]
async fn main() {
    tracing_subscriber::fmt().with_target(false).without_time().init();
    let outcome = examples_io::telemetry::run().await;
    match outcome {
        Ok(answer) => println!("reply: {}", answer.joined_text()),
        Err(error) => println!("error: {error}"),
    }
}
