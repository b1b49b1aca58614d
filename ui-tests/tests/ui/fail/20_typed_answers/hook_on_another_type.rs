//! A `before_final` hook that reads the answer as a type reads the agent's own output type:
//! one on another type does not compile where it is added.

use agentix::prelude::*;

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(crate = "agentix::serde")]
#[schemars(crate = "agentix::schemars")]
struct Invoice {
    total: f64,
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(crate = "agentix::serde")]
#[schemars(crate = "agentix::schemars")]
struct Receipt {
    paid: f64,
}

#[hook(before_final)]
async fn rounded(receipt: &mut Receipt) {
    receipt.paid = receipt.paid.round();
}

fn main() {
    let _agent = Agent::builder(ScriptedModel::new()).output::<Invoice>().hook(rounded).build();
}
