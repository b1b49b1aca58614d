use agentix::session::TaskReport;
use agentix::hook;

#[agentix::tool]
/// The time.
async fn clock() -> String {
    "noon".to_owned()
}

#[hook(task_complete, tool = clock)]
async fn report(_report: &TaskReport) {}

fn main() {}
