//! A person in the loop: large transfers are escalated; the approver approves one, edits one
//! and rejects one.
//!
//! Run it with `cargo run -p examples --example human_approval`.

#[tokio::main(flavor = "current_thread")]
async fn main() {
    // It prints as it goes; what it returns is for the tests.
    let _ = examples::human_approval::run(&|line| println!("{line}")).await;
}
