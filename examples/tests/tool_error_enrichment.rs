//! The tool_error_enrichment example: an `ORA-` answer carries the docs, and the schema reaches
//! the model after an invalid identifier.

use agentix::ToolFailure;
use examples::tool_error_enrichment::{ORDERS_SCHEMA, run};

#[tokio::test]
async fn an_oracle_error_brings_the_docs_and_an_invalid_identifier_the_schema() {
    let (outcome, _conversation, requests) = run(&|_| {}).await;
    assert_eq!(
        outcome.expect("the turn completes").joined_text(),
        "Order 17 shipped on 20 November 2026."
    );
    assert_eq!(requests.len(), 4);

    let refused = examples::tool_results(&requests[1]).pop().expect("a result");
    assert!(refused.error.is_none(), "the database answered: the call did not fail");
    assert!(refused.output.starts_with("ORA-00942") && refused.output.contains("Oracle docs"));

    let failed = examples::tool_results(&requests[2]).pop().expect("a result");
    assert!(
        matches!(&failed.error, Some(ToolFailure::Failed { message }) if message.contains("ORA-00904"))
    );
    let schema = |index: usize| {
        requests[index].messages.iter().any(|message| message.text().contains(ORDERS_SCHEMA))
    };
    assert!(!schema(1), "no schema before the invalid identifier");
    assert!(schema(2) && schema(3), "the schema, once injected, stays for the rest of the turn");

    let answer = examples::tool_results(&requests[3]).pop().expect("a result");
    assert_eq!(answer.output, "SHIP_DATE: 2026-11-20", "the `when` conditions leave it alone");
}
