use agentix::tool;

/// Moves the one arm the lab has.
#[tool(sequential = true)]
async fn move_arm(degrees: i32) -> String {
    format!("moved {degrees}°")
}

fn main() {}
