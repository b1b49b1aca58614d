use agentix::session::TaskReport;
use agentix::hook;

#[hook(task_complete, durable)]
async fn remember(_report: &TaskReport) {}

fn main() {}
