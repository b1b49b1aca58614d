use agentix::prelude::*;

/// Searches the notes.
#[tool]
async fn search(text: String) -> Vec<String> {
    vec![text]
}

#[hook(after_tool, tool = search)]
async fn trim(results: &mut String) {
    results.truncate(10);
}

fn main() {}
