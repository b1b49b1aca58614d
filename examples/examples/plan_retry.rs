//! Plan first: an `after_model` hook retries, with feedback, until the answer starts with a
//! `<plan>`; a model that never complies hits the retry bound.
//!
//! Run it with `cargo run -p examples --example plan_retry`.

#[tokio::main(flavor = "current_thread")]
async fn main() {
    // It prints as it goes; what it returns is for the tests.
    let _ = examples::plan_retry::run(&|line| println!("{line}")).await;
}
