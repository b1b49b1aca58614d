//! A research team: a planner delegates to a researcher (a sub-agent with a search tool) and
//! hands the rest of its turn to a writer, all three under one policy whose guard refuses any
//! deleting call, the researcher's included.
//!
//! Run it with `cargo run -p examples --example research_team`.

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let report = examples::research_team::run(&|line| println!("{line}")).await;
    if report.answer.is_err() {
        std::process::exit(1);
    }
}
