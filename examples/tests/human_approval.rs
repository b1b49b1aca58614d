//! The human_approval example: one call runs unreviewed, and the approver approves one, edits
//! one and rejects one.

use agentix::message::ToolFailure;

#[tokio::test]
async fn the_approver_approves_edits_and_rejects() {
    let (outcome, _conversation, results) = examples::human_approval::run(&|_| {}).await;
    outcome.expect("the turn completes");
    let outputs: Vec<&str> = results.iter().map(|result| result.output.as_str()).collect();
    assert_eq!(outputs[..3], ["sent 40 € to Ada", "sent 1200 € to landlord", "sent 1000 € to Bob"]);
    assert!(matches!(
        &results[3].error,
        Some(ToolFailure::Rejected { by, reason })
            if by.contains("approver") && reason.contains("90000 € is over the 100 € limit")
    ));
    let ids: Vec<&str> = results.iter().map(|result| result.call_id.as_str()).collect();
    assert_eq!(ids, ["call_1", "call_2", "call_3", "call_4"], "each result answers its call");
}
