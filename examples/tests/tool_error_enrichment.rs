//! The tool_error_enrichment example: an `ORA-` answer carries the docs, the schema reaches the
//! model after an invalid identifier, and each hook keeps out of what its `when` excludes.

use agentix::message::ToolFailure;
use examples::tool_error_enrichment::{ORDERS_SCHEMA, run};

#[tokio::test]
async fn an_oracle_error_brings_the_docs_and_an_invalid_identifier_the_schema() {
    let (outcome, _conversation, requests) = run(&|_| {}).await;
    let answer = outcome.expect("the turn completes");
    assert_eq!(answer.joined_text(), "Order 17 shipped on 20 November 2026.");
    assert_eq!(requests.len(), 5);
    let result = |request: usize| requests[request].tool_results().last().cloned().unwrap();
    let schema = |request: usize| {
        requests[request].messages.iter().any(|message| message.text().contains(ORDERS_SCHEMA))
    };

    let cancelled = result(1);
    assert!(
        matches!(&cancelled.error, Some(ToolFailure::Failed { message }) if message.contains("ORA-01013"))
    );
    assert!(!schema(1), "another failure: `inject_schema`'s condition keeps it out");

    let refused = result(2);
    assert!(refused.error.is_none(), "the database answered: the call did not fail");
    assert!(
        refused.output.starts_with("ORA-00942")
            && refused.output.contains("Oracle docs: the table is misspelled")
    );
    assert!(!schema(2));

    let failed = result(3);
    assert!(
        matches!(&failed.error, Some(ToolFailure::Failed { message }) if message.contains("ORA-00904"))
    );
    assert!(schema(3) && schema(4), "the schema, once injected, stays for the rest of the turn");

    assert_eq!(result(4).output, "SHIP_DATE: 2026-11-20", "no docs where none apply");
}
