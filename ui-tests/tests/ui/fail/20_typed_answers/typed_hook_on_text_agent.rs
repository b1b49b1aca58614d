//! A typed `before_final` hook needs a typed agent: added before `.output::<T>()` (or to an
//! agent that answers with text), it does not compile.

use agentix::prelude::*;

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(crate = "agentix::serde")]
#[schemars(crate = "agentix::schemars")]
struct Invoice {
    total: f64,
}

#[hook(before_final)]
async fn rounded(invoice: &mut Invoice) {
    invoice.total = invoice.total.round();
}

fn main() {
    let _agent = Agent::builder(ScriptedModel::new()).hook(rounded).output::<Invoice>().build();
}
