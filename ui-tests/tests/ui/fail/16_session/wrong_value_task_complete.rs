use agentix::session::TaskReport;
use agentix::hook;

#[hook(task_complete)]
async fn tidy(report: &mut TaskReport) {
    report.reason = None;
}

fn main() {}
