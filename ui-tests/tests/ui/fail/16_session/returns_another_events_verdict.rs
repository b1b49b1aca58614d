use agentix::event::TaskStart;
use agentix::session::TaskReport;
use agentix::{Verdict, hook};

#[hook(task_complete)]
async fn report(_report: &TaskReport) -> Verdict<TaskStart> {
    Verdict::Continue
}

fn main() {}
