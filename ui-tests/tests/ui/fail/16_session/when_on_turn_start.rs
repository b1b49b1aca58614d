use agentix::{Turn, hook};

fn late(turn: &Turn) -> bool {
    turn.task_turn_index() > 10
}

#[hook(turn_start, when = late)]
async fn slow_down(_turn: &Turn) {}

fn main() {}
