//! Resilience as hooks: retry with backoff, fallback to a second model, and a tool run twice.
//!
//! Run it with `cargo run -p examples --example resilient_model`.

#[tokio::main(flavor = "current_thread")]
async fn main() {
    // It prints as it goes; what it returns is for the tests.
    let _ = examples::resilient_model::run(&|line| println!("{line}")).await;
}
