use agentix::{Turn, hook};

fn late(turn: &Turn) -> bool {
    turn.task_step_index() > 10
}

#[hook(step_start, when = late)]
async fn slow_down(_turn: &Turn) {}

fn main() {}
