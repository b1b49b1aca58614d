//! Retrieval and memory: two parallel `pre` hooks inject fenced, untrusted content.
//!
//! Run it with `cargo run -p examples --example retrieval`.

#[tokio::main(flavor = "current_thread")]
async fn main() {
    // It prints as it goes; what it returns is for the tests.
    let _ = examples::retrieval::run(&|line| println!("{line}")).await;
}
