//! Another event's value in a `before_final` hook's first place is named as such: it is not
//! taken for a typed answer.

use agentix::prelude::*;

#[hook(before_final)]
async fn looks_at_a_call(call: &ToolCall) {
    let _ = call;
}

fn main() {}
