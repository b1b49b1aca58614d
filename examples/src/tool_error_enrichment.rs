//! Tool errors the model can act on (seed 002, examples 2 and 3): an `after_tool` hook adds
//! documentation to a result that reports a failure in its content (an order that does not
//! exist), and a `tool_error` hook, when the model's arguments do not fit, injects the tool's
//! schema into the next request.

use agentix::{
    Agent, Conversation, ModelRequest, Outcome, ScriptedModel, Tool, ToolFailure, ToolResult, Turn,
    hook,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::trace;

#[derive(Deserialize, JsonSchema)]
struct Order {
    /// The order's id, as `ORD-` and five digits.
    order_id: String,
}

/// Looks an order up. An unknown id is not a failed call: the shop answers, with a 404.
struct LookupOrder;

impl Tool for LookupOrder {
    const NAME: &'static str = "lookup_order";
    type Args = Order;
    type Output = String;
    type Error = std::convert::Infallible;

    fn description(&self) -> &str {
        "Looks an order up by id."
    }

    async fn call(&self, args: Order, _turn: &Turn) -> Result<String, Self::Error> {
        Ok(match args.order_id.as_str() {
            "ORD-12345" => "ORD-12345: two tickets Oslo–Bergen, shipped 2026-11-20.".into(),
            other => format!("404: no order {other}"),
        })
    }
}

/// What the shop's documentation says about order ids.
pub const ORDER_ID_DOCS: &str =
    "Order ids look like ORD-12345 (five digits); they are on the receipt, under the total.";

/// `after_tool`: a 404 gets the documentation, so the model can ask the right question.
#[hook(after_tool)]
async fn document_not_found(result: &mut ToolResult) {
    if result.output.starts_with("404") {
        result.output = format!("{} ({ORDER_ID_DOCS})", result.output);
    }
}

/// `tool_error`: arguments that do not fit get the tool's schema in the next request.
#[hook(tool_error)]
async fn inject_schema(result: &ToolResult, turn: &mut Turn) {
    if let Some(ToolFailure::InvalidArguments { .. }) = result.error {
        let schema = schemars::schema_for!(Order);
        turn.inject(format!(
            "`{}` takes arguments of this schema: {}",
            result.name,
            schema.as_value()
        ));
    }
}

/// One turn: the model calls the tool with the wrong field, then with an unknown id, then with
/// a real one. Returns the outcome, the conversation and the requests the model saw.
pub async fn run(out: &(dyn Fn(&str) + Sync)) -> (Outcome, Conversation, Vec<ModelRequest>) {
    let model = ScriptedModel::new()
        .tool_call("lookup_order", json!({ "id": "A-17" }))
        .tool_call("lookup_order", json!({ "order_id": "A-17" }))
        .tool_call("lookup_order", json!({ "order_id": "ORD-12345" }))
        .text("Your order ORD-12345 (two tickets Oslo–Bergen) shipped on 20 November.");
    let agent = Agent::builder(&model)
        .tool(LookupOrder)
        .hook(document_not_found)
        .hook(inject_schema)
        .build();
    let mut conversation = Conversation::new();
    let outcome = agent
        .run_observed(&mut conversation, "Where is my order A-17?", &trace::observer(out))
        .await;
    trace::outcome(out, &outcome);
    trace::log(out, &conversation);
    (outcome, conversation, model.requests())
}
