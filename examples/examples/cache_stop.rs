//! Answer from the cache: a `before_model` stop returns a cached answer; the model is called
//! once for a question asked twice.
//!
//! Run it with `cargo run -p examples --example cache_stop`.

#[tokio::main(flavor = "current_thread")]
async fn main() {
    // It prints as it goes; what it returns is for the tests.
    let _ = examples::cache_stop::run(&|line| println!("{line}")).await;
}
