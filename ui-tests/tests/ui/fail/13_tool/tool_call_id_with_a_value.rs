use agentix::{Turn, tool};

/// Pays, once.
#[tool(call_id = "yes")]
async fn pay(amount: u32, turn: &Turn) -> String {
    format!("{amount} paid under {:?}", turn.tool_idempotency_key())
}

fn main() {}
