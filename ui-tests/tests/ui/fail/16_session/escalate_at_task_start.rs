use agentix::event::TaskStart;
use agentix::session::QueuedTask;
use agentix::{Verdict, hook};

#[hook(task_start)]
async fn ask(task: &QueuedTask) -> Verdict<TaskStart> {
    if task.task.prompt.contains("deploy") { Verdict::escalate("deploys need a person") } else { Verdict::Continue }
}

fn main() {}
