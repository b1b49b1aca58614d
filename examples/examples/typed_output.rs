//! A typed answer: an invoice read out of an email into an `Invoice`, with a currency-lookup
//! tool on the way, an answer sent back until it reads, and a validator.
//!
//! Run it with `cargo run -p examples --example typed_output`.

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let (invoice, _) = examples::typed_output::run(&|line| println!("{line}")).await;
    if invoice.is_err() {
        std::process::exit(1);
    }
}
