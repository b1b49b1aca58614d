//! Streaming through the redactor: the model leaks an API key and an e-mail address, each split
//! across chunks; the consumer and the log only ever see them redacted.

use agentix::{Agent, Conversation, Entry, ScriptedModel, StreamEvent, transform::Redactor};
use futures::StreamExt;

/// What the model says, streamed in 6-character chunks, so the key and the address arrive in
/// pieces.
pub const LEAKY_ANSWER: &str = "Sure. To call the API you need a key; yours is sk-abcdefghij0123456789XYZ \
     (keep it secret). If it stops working, ada.lovelace@example.org can issue a new one. \
     Keys expire after ninety days, so mark the date.";

/// The redactor for this example: API keys and short e-mail addresses. Its window — the text it
/// holds back — is its longest pattern, 67 characters; the rest of the answer streams on.
pub fn redactor() -> Redactor {
    Redactor::empty()
        .with_pattern(r"sk-[A-Za-z0-9_-]{20,64}", "API key")
        .and_then(|redactor| {
            redactor.with_pattern(r"[A-Za-z0-9._-]{1,24}@[a-z0-9-]{1,24}\.[a-z]{2,6}", "e-mail")
        })
        .expect("the patterns compile")
}

/// Streams one turn, writing each chunk as the consumer receives it and then what the log
/// kept; returns the text the consumer received.
pub async fn run(out: &(dyn Fn(&str) + Sync)) -> (String, Conversation) {
    let model = ScriptedModel::new().text(LEAKY_ANSWER).chunked(6);
    let raw_chunks: Vec<String> = LEAKY_ANSWER
        .chars()
        .collect::<Vec<_>>()
        .chunks(6)
        .map(|chunk| chunk.iter().collect())
        .collect();
    out(&format!("the model streams: {raw_chunks:?}"));

    let agent = Agent::builder(model).transformer(redactor()).build();
    let mut conversation = Conversation::new();
    let mut received = String::new();
    {
        let mut events =
            std::pin::pin!(agent.turn(&mut conversation, "How do I reach the API?").stream());
        while let Some(event) = events.next().await {
            match event {
                StreamEvent::Text(text) => {
                    out(&format!("consumer receives: {text:?}"));
                    received.push_str(&text);
                }
                StreamEvent::Finished(Ok(answer)) => {
                    out(&format!("final answer: {}", answer.joined_text()))
                }
                StreamEvent::Finished(Err(error)) => out(&format!("error: {error}")),
                _ => {}
            }
        }
    }
    for entry in conversation.log() {
        if let Entry::Assistant { message, .. } = entry {
            out(&format!("the log keeps: {}", message.joined_text()));
        }
    }
    (received, conversation)
}
