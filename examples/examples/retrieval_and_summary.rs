//! Parallel retrieval injecting fenced documents, and a durable running summary, over three
//! turns; prints what each turn's request contained.
//!
//! Run it with `cargo run -p examples --example retrieval_and_summary`.

#[tokio::main(flavor = "current_thread")]
async fn main() {
    examples::retrieval_and_summary::run(&|line| println!("{line}")).await;
}
