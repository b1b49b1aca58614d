//! The tool_error_enrichment example: the schema reaches the model after bad arguments, and the
//! 404 carries the documentation.

use agentix::ToolFailure;
use examples::tool_error_enrichment::{ORDER_ID_DOCS, run};

#[tokio::test]
async fn bad_arguments_bring_the_schema_and_a_404_brings_the_docs() {
    let (outcome, _conversation, requests) = run(&|_| {}).await;
    assert!(outcome.expect("the turn completes").joined_text().contains("ORD-12345"));
    assert_eq!(requests.len(), 4);

    let first = examples::tool_results(&requests[1]);
    assert!(matches!(first[0].error, Some(ToolFailure::InvalidArguments { .. })));
    let said: Vec<String> = requests[1].messages.iter().map(|m| m.text().into_owned()).collect();
    let schema = said.iter().find(|text| text.contains("takes arguments of this schema"));
    assert!(schema.is_some_and(|text| text.contains("order_id")), "the schema is injected");

    let not_found = examples::tool_results(&requests[2]).pop().expect("a result");
    assert!(not_found.error.is_none(), "a 404 is an answer, not a failed call");
    assert!(not_found.output.starts_with("404") && not_found.output.contains(ORDER_ID_DOCS));

    let found = examples::tool_results(&requests[3]).pop().expect("a result");
    assert!(!found.output.contains(ORDER_ID_DOCS), "only the 404 is documented");
}
