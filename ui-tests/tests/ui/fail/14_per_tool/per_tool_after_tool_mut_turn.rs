use agentix::prelude::*;

/// Searches the notes.
#[tool]
async fn search(text: String) -> Vec<String> {
    vec![text]
}

#[hook(after_tool, tool = search)]
async fn count(results: &mut Vec<String>, turn: &mut Turn) {
    let _ = (results, turn);
}

fn main() {}
