use agentix::session::SessionState;
use agentix::hook;

#[hook(all_tasks_complete)]
async fn done(_session: &mut SessionState) {}

fn main() {}
