use agentix::session::QueuedTask;
use agentix::hook;

#[hook(task_start, parallel)]
async fn fetch_context(_task: &QueuedTask) {}

fn main() {}
