//! Typed tools and per-tool hooks: a `before_tool` hook rewrites `send_email`'s recipient on
//! its typed arguments, an `after_tool` hook trims `search`'s typed results.
//!
//! Run it with `cargo run -p examples --example typed_tools`.

#[tokio::main(flavor = "current_thread")]
async fn main() {
    // It prints as it goes; what it returns is for the tests.
    let _ = examples::typed_tools::run(&|line| println!("{line}")).await;
}
