use agentix::session::{SessionState, TaskReport};
use agentix::{Turn, hook};

#[hook(task_complete)]
async fn report(_report: &TaskReport, _session: &SessionState, _turn: &Turn) {}

fn main() {}
