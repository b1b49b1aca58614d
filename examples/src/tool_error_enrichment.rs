//! Tool errors the model can act on (seed 002, examples 2 and 3), over a SQL tool backed by
//! Oracle. When the database reports an error code in its answer, an `after_tool` hook adds
//! what the documentation says about it; when the call fails on an invalid identifier, a
//! `tool_error` hook injects the table's schema into the next request. Each hook has a `when`
//! condition, as the seed's `.when(...)`: the hook runs only where it applies.

use agentix::{
    Agent, Conversation, Outcome, ScriptedModel, Tool, ToolResult, Turn, hook,
    message::ToolFailure, model::ModelRequest,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::trace;

#[derive(Deserialize, JsonSchema)]
struct Sql {
    /// One SQL query.
    query: String,
}

/// Runs a query. A query the database refuses still gets an answer, with an `ORA-` code in it;
/// an identifier the table does not have fails the call.
struct QueryDb;

impl Tool for QueryDb {
    const NAME: &'static str = "query_db";
    type Args = Sql;
    type Output = String;
    type Error = String;

    fn description(&self) -> &str {
        "Runs a SQL query on the shop's Oracle database."
    }

    async fn call(&self, args: Sql, _turn: &Turn) -> Result<String, String> {
        let query = args.query.to_uppercase();
        if query.contains("FETCH ALL") {
            Err("ORA-01013: user requested cancel of current operation".into())
        } else if query.contains("FROM ORDRS") {
            Ok("ORA-00942: table or view does not exist".into())
        } else if query.contains("SHIPPED_ON") {
            Err(r#"ORA-00904: "SHIPPED_ON": invalid identifier"#.into())
        } else {
            Ok("SHIP_DATE: 2026-11-20".into())
        }
    }
}

/// What the Oracle documentation says about the codes this shop's queries hit.
const ORACLE_DOCS: [(&str, &str); 1] = [(
    "ORA-00942",
    "the table is misspelled or not visible to this user; this schema has ORDERS and CUSTOMERS",
)];

/// The schema the model should query against.
pub const ORDERS_SCHEMA: &str =
    "ORDERS(ID NUMBER, CUSTOMER_ID NUMBER, SHIP_DATE DATE, TOTAL NUMBER)";

/// What the documentation says about the code an answer starts with, if anything.
fn oracle_docs(output: &str) -> Option<&'static str> {
    ORACLE_DOCS.iter().find(|(code, _)| output.starts_with(code)).map(|(_, docs)| *docs)
}

fn is_oracle_error_with_docs(result: &ToolResult, _turn: &Turn) -> bool {
    oracle_docs(&result.output).is_some()
}

/// `after_tool`, when the answer carries a documented `ORA-` code: the docs join the result.
#[hook(after_tool, when = is_oracle_error_with_docs)]
async fn enrich_with_oracle_docs(result: &mut ToolResult) {
    let docs = oracle_docs(&result.output).unwrap_or("none");
    result.output = format!("{} (Oracle docs: {docs})", result.output);
}

fn is_invalid_identifier_error(result: &ToolResult, _turn: &Turn) -> bool {
    matches!(&result.error, Some(ToolFailure::Failed { message }) if message.contains("ORA-00904"))
}

/// `tool_error`, when a query names a column that does not exist: the schema goes into the
/// next request.
#[hook(tool_error, when = is_invalid_identifier_error)]
async fn inject_schema(_failed: &ToolResult, turn: &mut Turn) {
    turn.inject(format!("The table to query: {ORDERS_SCHEMA}"));
}

/// One turn: a query the database cancels, a misspelled table, a column that does not exist,
/// then the right query. Returns the outcome, the conversation and the requests the model saw.
pub async fn run(out: &(dyn Fn(&str) + Sync)) -> (Outcome, Conversation, Vec<ModelRequest>) {
    let model = ScriptedModel::new()
        .tool_call("query_db", json!({ "query": "SELECT * FROM orders FETCH ALL" }))
        .tool_call("query_db", json!({ "query": "SELECT * FROM ordrs WHERE id = 17" }))
        .tool_call("query_db", json!({ "query": "SELECT shipped_on FROM orders WHERE id = 17" }))
        .tool_call("query_db", json!({ "query": "SELECT ship_date FROM orders WHERE id = 17" }))
        .text("Order 17 shipped on 20 November 2026.");
    let agent = Agent::builder(&model)
        .tool(QueryDb)
        .hook(enrich_with_oracle_docs)
        .hook(inject_schema)
        .build();
    let mut conversation = Conversation::new();
    let outcome = agent
        .turn(&mut conversation, "When did order 17 ship?")
        .observe(&trace::observer(out))
        .await;
    trace::outcome(out, &outcome);
    trace::log(out, &conversation);
    (outcome, conversation, model.requests())
}
