use agentix::event::TaskComplete;
use agentix::session::TaskReport;
use agentix::{Verdict, hook};

#[hook(task_complete)]
async fn again(report: &TaskReport) -> Verdict<TaskComplete> {
    if report.answer.is_none() { Verdict::retry("once more") } else { Verdict::Continue }
}

fn main() {}
