//! Streams a turn to the terminal through the redactor: an API key and an e-mail address split
//! across chunks are caught, in the stream and in the log.
//!
//! Run it with `cargo run -p examples --example redaction`.

#[tokio::main(flavor = "current_thread")]
async fn main() {
    examples::redaction::run(&|line| println!("{line}")).await;
}
