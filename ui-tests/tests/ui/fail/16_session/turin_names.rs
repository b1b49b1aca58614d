use agentix::session::TaskReport;
use agentix::hook;

#[hook(on_task_complete)]
async fn report(_report: &TaskReport) {}

fn main() {}
