//! Two minds: a critic model reviews each draft and the creator retries with the critique.
//!
//! Run it with `cargo run -p examples --example bicameral_critic`.

#[tokio::main(flavor = "current_thread")]
async fn main() {
    // It prints as it goes; what it returns is for the tests.
    let _ = examples::bicameral_critic::run(&|line| println!("{line}")).await;
}
