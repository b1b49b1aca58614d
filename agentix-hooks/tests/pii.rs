//! PII redaction on the real loop: what is found — e-mail addresses, phone numbers, card numbers
//! that pass Luhn, IBANs that pass their checksum, patterns of one's own — masked, hashed or
//! refused in the requests sent, the streamed answer and tool results.

use std::sync::Arc;

use agentix::event::EventKind;
use agentix::{Agent, Conversation, Entry, Error, ScriptedModel, StreamEvent, ToolFailure};
use agentix_hooks::{Pii, PiiAction};
use futures::StreamExt;
use serde_json::json;
use tests::{Flaky, logged_results, tool_results};

#[test]
fn what_is_found_and_what_is_left() {
    let redactor = Pii::new().transformer();
    let found = [
        ("mail ola.nordmann@example.no now", "mail [redacted e-mail] now"),
        ("call +47 22 33 44 55.", "call [redacted phone number]."),
        ("call +4722334455.", "call [redacted phone number]."),
        ("call (555) 123-4567 today", "call [redacted phone number] today"),
        ("card 4111 1111 1111 1111 ok", "card [redacted card number] ok"),
        ("card 4111-1111-1111-1111", "card [redacted card number]"),
        ("card 378282246310005 (amex)", "card [redacted card number] (amex)"),
        ("to GB82 WEST 1234 5698 7654 32 today", "to [redacted IBAN] today"),
        ("to NO9386011117947.", "to [redacted IBAN]."),
    ];
    for (text, redacted) in found {
        assert_eq!(redactor.redact(text), redacted, "{text}");
    }
    let left = [
        "card 4111 1111 1111 1112 (a wrong check digit)",
        "to GB82 WEST 1234 5698 7654 33 (a wrong checksum)",
        "version 1.2.3, order 123456, on 2024-01-05",
        "call 12 34",
    ];
    for text in left {
        assert_eq!(redactor.redact(text), text);
    }
}

#[test]
fn a_hashed_value_is_the_same_token_each_time_and_another_value_another() {
    let pii = Pii::new().action(PiiAction::Hash { salt: "s3cret".into() });
    let redactor = pii.transformer();
    let once = redactor.redact("ola@example.no and kari@example.no, again ola@example.no");
    let tokens: Vec<&str> = once.split([',', ' ']).filter(|w| w.starts_with('#')).collect();
    assert_eq!(tokens.len(), 3, "{once}");
    assert_eq!(tokens[0], tokens[2]);
    assert_ne!(tokens[0], tokens[1]);
    assert!(once.starts_with("[e-mail #"), "{once}");
    assert!(!once.contains("ola@"), "{once}");
    // Another salt, other tokens.
    let other = Pii::new().action(PiiAction::Hash { salt: "other".into() }).transformer();
    assert_ne!(other.redact("ola@example.no"), redactor.redact("ola@example.no"));
}

#[tokio::test]
async fn the_request_sent_hides_what_the_user_wrote_and_the_log_keeps_it() {
    let model = ScriptedModel::new().text("Noted.");
    let agent = Agent::builder(&model).hook(Pii::new()).build();
    let mut conversation = Conversation::new();
    let said = "My card is 4111 1111 1111 1111 and my mail ola@example.no";
    agent.run(&mut conversation, said).await.unwrap();
    let sent = tests::last_text(&model.requests()[0]);
    assert_eq!(sent, "My card is [redacted card number] and my mail [redacted e-mail]");
    let Entry::User { message, .. } = &conversation.log()[0] else { panic!() };
    assert_eq!(message.text(), said);
}

#[tokio::test]
async fn a_tool_result_is_redacted_before_the_model_or_the_log_reads_it() {
    let model =
        ScriptedModel::new().tool_call("flaky", json!({ "city": "ola@example.no" })).text("Done.");
    let agent = Agent::builder(&model)
        .tool(Flaky { failures: 0, calls: Arc::default() })
        .hook(Pii::new())
        .build();
    let mut conversation = Conversation::new();
    agent.run(&mut conversation, "go").await.unwrap();
    assert_eq!(logged_results(&conversation)[0].output, "reached [redacted e-mail]");
    let read = tool_results(&model.requests()[1]);
    assert_eq!(read[0].output, "reached [redacted e-mail]");
    // The call's own arguments, as the next request repeats them.
    let sent = serde_json::to_string(&model.requests()[1].messages).unwrap();
    assert!(!sent.contains("ola@example.no"), "{sent}");
}

#[tokio::test]
async fn a_streamed_answer_never_shows_a_match_even_split_across_chunks() {
    let answer = "Reach Ola at +47 22 33 44 55 or ola@example.no; pay to NO9386011117947.";
    let model = ScriptedModel::new().text(answer).chunked(3);
    let pii = Pii::new();
    let agent = Agent::builder(&model).transformer(pii.transformer()).hook(pii).build();
    let mut conversation = Conversation::new();
    let mut received = String::new();
    {
        let mut events = std::pin::pin!(agent.turn(&mut conversation, "who?").stream());
        while let Some(event) = events.next().await {
            if let StreamEvent::Text(text) = event {
                for secret in ["22 33", "ola@", "9386011117947"] {
                    assert!(!text.contains(secret), "a piece showed {secret}: {text:?}");
                }
                received.push_str(&text);
            }
        }
    }
    let redacted =
        "Reach Ola at [redacted phone number] or [redacted e-mail]; pay to [redacted IBAN].";
    assert_eq!(received, redacted);
    let Some(Entry::Assistant { message, .. }) = conversation.log().last() else { panic!() };
    assert_eq!(message.joined_text(), redacted);
}

#[tokio::test]
async fn refused_a_request_is_not_sent_a_result_is_withheld_and_an_answer_ends_the_turn() {
    // The user's own message.
    let model = ScriptedModel::new().text("never asked");
    let agent = Agent::builder(&model).hook(Pii::new().action(PiiAction::Refuse)).build();
    let error = agent.run(&mut Conversation::new(), "I am ola@example.no").await.unwrap_err();
    match error {
        Error::Halted { event: EventKind::BeforeModel, hook: Pii::NAME, reason } => {
            assert_eq!(reason, "the request holds an e-mail: it was not sent");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(model.calls(), 0);

    // A tool's result: withheld, a failure in its place. (The tool gets the model's arguments as
    // they are.)
    let model = ScriptedModel::new()
        .tool_call("flaky", json!({ "city": "4111111111111111" }))
        .text("It was withheld.");
    let agent = Agent::builder(&model)
        .tool(Flaky { failures: 0, calls: Arc::default() })
        .hook(Pii::empty().card_numbers().action(PiiAction::Refuse))
        .build();
    let mut conversation = Conversation::new();
    let outcome = agent.run(&mut conversation, "go").await;
    let result = logged_results(&conversation)[0].clone();
    assert_eq!(result.output, "the result held a card number: it was withheld");
    assert!(matches!(result.error, Some(ToolFailure::Failed { .. })));
    // The next request repeats the model's call, which holds the number: it is not sent.
    assert!(matches!(outcome, Err(Error::Halted { hook: Pii::NAME, .. })), "{outcome:?}");

    // An answer, streamed through the transformer: masked as it streams, then refused.
    let model = ScriptedModel::new().text("Your IBAN is NO9386011117947.").chunked(4);
    let pii = Pii::new().action(PiiAction::Refuse);
    let agent = Agent::builder(&model).transformer(pii.transformer()).hook(pii).build();
    let mut conversation = Conversation::new();
    let error = agent.run(&mut conversation, "my IBAN?").await.unwrap_err();
    match error {
        Error::Halted { event: EventKind::AfterModel, reason, .. } => {
            assert_eq!(reason, "the answer held an IBAN");
        }
        other => panic!("{other:?}"),
    }
    let logged = serde_json::to_string(conversation.log()).unwrap();
    assert!(!logged.contains("9386011117947"), "{logged}");
}

#[tokio::test]
async fn a_pattern_of_ones_own_is_found_too() {
    let model = ScriptedModel::new().text("Noted.");
    let pii = Pii::empty().pattern("employee id", "EMP-[0-9]{6}").unwrap();
    let agent = Agent::builder(&model).hook(pii).build();
    agent.run(&mut Conversation::new(), "I am EMP-004211").await.unwrap();
    assert_eq!(tests::last_text(&model.requests()[0]), "I am [redacted employee id]");
    assert!(Pii::empty().pattern("unbounded", "EMP-[0-9]+").is_err());
}
