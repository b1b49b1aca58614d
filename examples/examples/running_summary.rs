//! A running summary: a `post, durable` hook's output joins the log for every later turn.
//!
//! Run it with `cargo run -p examples --example running_summary`.

#[tokio::main(flavor = "current_thread")]
async fn main() {
    // It prints as it goes; what it returns is for the tests.
    let _ = examples::running_summary::run(&|line| println!("{line}")).await;
}
