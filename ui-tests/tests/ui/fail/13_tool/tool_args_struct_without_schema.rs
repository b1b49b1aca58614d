use agentix::prelude::*;

/// Search arguments, without a schema.
#[derive(Deserialize, Serialize)]
pub struct Query {
    pub text: String,
}

/// Searches the notes.
#[tool]
async fn search(args: Query) -> Vec<String> {
    vec![args.text]
}

fn main() {}
