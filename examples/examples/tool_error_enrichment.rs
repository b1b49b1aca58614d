//! Tool errors the model can act on: the Oracle docs added to an error the database reports,
//! the table's schema injected after an invalid identifier.
//!
//! Run it with `cargo run -p examples --example tool_error_enrichment`.

#[tokio::main(flavor = "current_thread")]
async fn main() {
    // It prints as it goes; what it returns is for the tests.
    let _ = examples::tool_error_enrichment::run(&|line| println!("{line}")).await;
}
