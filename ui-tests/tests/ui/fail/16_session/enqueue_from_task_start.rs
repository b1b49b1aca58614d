use agentix::event::TaskStart;
use agentix::session::{QueuedTask, Task};
use agentix::{Verdict, hook};

#[hook(task_start)]
async fn more(_task: &QueuedTask) -> Verdict<TaskStart> {
    Verdict::enqueue([Task::new("and another thing")])
}

fn main() {}
