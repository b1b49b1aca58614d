use agentix::session::QueuedTask;
use agentix::hook;

#[hook(step_start)]
async fn pace(task: &QueuedTask) {
    println!("{}", task.id());
}

fn main() {}
