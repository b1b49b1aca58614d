//! An agent's output type must describe itself with a JSON schema: the model is held to it.

use agentix::prelude::*;

/// An invoice that derives no `JsonSchema`.
#[derive(Serialize, Deserialize)]
#[serde(crate = "agentix::serde")]
struct Invoice {
    total: f64,
}

fn main() {
    let _agent = Agent::builder(ScriptedModel::new()).output::<Invoice>().build();
}
