//! The retrieval-and-summary example: documents reach only their own turn's request; summaries
//! reach the log and every later turn.

use agentix::{Entry, Part};

#[tokio::test]
async fn documents_stay_in_their_turn_and_summaries_carry_over() {
    let (conversation, sent) = examples::retrieval_and_summary::run(&|_| {}).await;
    let requests: Vec<String> =
        sent.iter().map(|(_, request)| serde_json::to_string(request).unwrap()).collect();
    assert_eq!(requests.len(), 3);

    assert!(requests[0].contains("Oslo–Kiel ferry"), "turn 1 gets the ferry document");
    assert!(!requests[1].contains("Oslo–Kiel ferry"), "turn 2 does not: retrieval is transient");
    assert!(requests[1].contains("Night trains"));
    assert!(requests[2].contains("240 days of rain"));
    assert!(
        requests.iter().all(|request| request.contains("<untrusted-")),
        "retrieved text is fenced"
    );

    assert!(!requests[0].contains("Summary of turn"));
    assert!(requests[1].contains("Summary of turn 1"));
    assert!(requests[2].contains("Summary of turn 1") && requests[2].contains("Summary of turn 2"));

    let summaries: Vec<String> = conversation
        .log()
        .iter()
        .filter_map(|entry| match entry {
            Entry::HookOutput { hook, parts, .. } if hook == "running_summary" => {
                Some(parts.iter().filter_map(Part::as_text).collect())
            }
            _ => None,
        })
        .collect();
    assert_eq!(summaries.len(), 3);
    let log = serde_json::to_string(conversation.log()).unwrap();
    assert!(!log.contains("untrusted-"), "no retrieved document reached the log");
}
