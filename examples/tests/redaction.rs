//! The redaction example: the secrets it streams, split across chunks, reach neither the
//! consumer nor the log.

use agentix::Entry;
use examples::redaction::{LEAKY_ANSWER, run};

#[tokio::test]
async fn split_secrets_are_caught_in_the_stream_and_the_log() {
    assert!(LEAKY_ANSWER.contains("sk-abcdefghij0123456789XYZ"));
    let chunks = std::sync::Mutex::new(0);
    let (received, conversation) = run(&|line| {
        if line.starts_with("consumer receives") {
            *chunks.lock().unwrap() += 1;
        }
    })
    .await;
    assert_eq!(received, examples::redaction::redactor().redact(LEAKY_ANSWER));
    assert!(received.contains("yours is [redacted API key] (keep it secret)"));
    assert!(received.contains("[redacted e-mail] can issue"));
    assert!(!received.contains("sk-abc") && !received.contains("lovelace"));
    assert!(*chunks.lock().unwrap() > 10, "the answer streamed in pieces, not all at the end");
    let logged: Vec<String> = conversation
        .log()
        .iter()
        .filter_map(|entry| match entry {
            Entry::Assistant { message, .. } => Some(message.joined_text().into_owned()),
            _ => None,
        })
        .collect();
    assert_eq!(logged, [received]);
}
