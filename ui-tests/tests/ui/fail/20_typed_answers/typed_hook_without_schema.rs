//! The type a `before_final` hook reads the answer as is an output type: one without a JSON
//! schema is an error at the hook's parameter.

use agentix::prelude::*;

#[derive(Serialize, Deserialize)]
#[serde(crate = "agentix::serde")]
struct Invoice {
    total: f64,
}

#[hook(before_final)]
async fn rounded(invoice: &mut Invoice) {
    invoice.total = invoice.total.round();
}

fn main() {}
