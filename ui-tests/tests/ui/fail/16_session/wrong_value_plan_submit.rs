use agentix::session::Task;
use agentix::hook;

#[hook(plan_submit)]
async fn count(tasks: &Vec<Task>) {
    println!("{} tasks", tasks.len());
}

fn main() {}
