//! A planning session: the model submits a plan through `submit_plan`, a `plan_submit` hook adds
//! a review task, the tasks run, a `task_complete` hook reports their statuses, and
//! `all_tasks_complete` enqueues one follow-up.
//!
//! Run it with `cargo run -p examples --example planner`.

#[tokio::main(flavor = "current_thread")]
async fn main() {
    // It prints as it goes; what it returns is for the tests.
    let _ = examples::planner::run(&|line| println!("{line}")).await;
}
