//! PII redaction on the real loop: what is found — e-mail addresses, phone numbers, card numbers
//! that pass Luhn, IBANs that pass their checksum, patterns of one's own — masked, hashed or
//! refused in the requests sent, the streamed answer and tool results.

use std::sync::Arc;

use agentix::event::EventKind;
use agentix::{
    Agent, Conversation, Entry, Error, ScriptedModel, StreamEvent, message::ToolFailure,
};
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
        ("call +1-555-123-4567", "call [redacted phone number]"),
        ("call (555) 123-4567 today", "call [redacted phone number] today"),
        ("call 555.123.4567 today", "call [redacted phone number] today"),
        ("card 4111 1111 1111 1111 ok", "card [redacted card number] ok"),
        ("card 4111-1111-1111-1111", "card [redacted card number]"),
        ("card 378282246310005 (amex)", "card [redacted card number] (amex)"),
        ("to GB82 WEST 1234 5698 7654 32 today", "to [redacted IBAN] today"),
        ("to NO9386011117947.", "to [redacted IBAN]."),
        // Grouped IBANs whose last group is whole, a word after them.
        ("ES91 2100 0418 4502 0005 1332 EUR", "[redacted IBAN] EUR"),
        ("BE68 5390 0754 7034 100 EUR", "[redacted IBAN] 100 EUR"),
        ("AT61 1904 3002 3457 3201 2024", "[redacted IBAN] 2024"),
    ];
    for (text, redacted) in found {
        assert_eq!(redactor.redact(text), redacted, "{text}");
    }
    let left = [
        "card 4111 1111 1111 1112 (a wrong check digit)",
        // Nor any part of a run of digits that is not one.
        "card 4111111111111112, id 1234567890123456789",
        "to GB82 WEST 1234 5698 7654 33 (a wrong checksum)",
        "version 1.2.3, order 123456, on 2024-01-05",
        "call 12 34",
        "1.4.2+20240115, build 20240115-1234 at 20240115 0930",
        "Revenue +1.250.000 EUR",
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
    assert_eq!(tokens[0].len(), 1 + 16 + 1, "64 bits in hex, then `]`: {once}");
    assert!(!once.contains("ola@"), "{once}");
    // Another salt, other tokens.
    let other = Pii::new().action(PiiAction::Hash { salt: "other".into() }).transformer();
    assert_ne!(other.redact("ola@example.no"), redactor.redact("ola@example.no"));
    // Stable across builds and runs (SipHash-2-4, checked against its reference vectors in
    // agentix): a token stored yesterday still names the same value.
    assert_eq!(redactor.redact("ola@example.no"), "[e-mail #fd693ec5c912f0f6]");
    // Masking again, after hashing, masks.
    let masked = pii.action(PiiAction::Mask).transformer();
    assert_eq!(masked.redact("ola@example.no"), "[redacted e-mail]");
    // And the salt stays out of debug output.
    let shown = format!("{:?}", PiiAction::Hash { salt: "s3cret".into() });
    assert!(!shown.contains("s3cret"), "{shown}");
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
    let pii = Pii::empty().pattern("EMP-[0-9]{6}", "employee id").unwrap();
    let agent = Agent::builder(&model).hook(pii).build();
    agent.run(&mut Conversation::new(), "I am EMP-004211").await.unwrap();
    assert_eq!(tests::last_text(&model.requests()[0]), "I am [redacted employee id]");
    assert!(Pii::empty().pattern("EMP-[0-9]+", "unbounded").is_err());
}

/// `find_user`: fails, quoting what it was asked for.
struct FindUser;

impl agentix::Tool for FindUser {
    const NAME: &'static str = "find_user";
    type Args = tests::City;
    type Output = String;
    type Error = String;

    fn description(&self) -> &str {
        "Finds a user."
    }

    async fn call(&self, args: tests::City, _turn: &agentix::Turn) -> Result<String, String> {
        Err(format!("no user {}", args.city))
    }
}

#[tokio::test]
async fn a_failures_message_and_a_number_in_the_arguments_are_redacted_too() {
    let model = ScriptedModel::new()
        .tool_call("find_user", json!({ "city": "ola@example.no", "card": 4111111111111111u64 }))
        .text("Not found.");
    let agent = Agent::builder(&model).tool(FindUser).hook(Pii::new()).build();
    let mut conversation = Conversation::new();
    agent.run(&mut conversation, "find Ola").await.unwrap();
    let result = logged_results(&conversation)[0].clone();
    assert_eq!(result.output, "tool failed: no user [redacted e-mail]");
    assert_eq!(
        result.error,
        Some(ToolFailure::Failed { message: "no user [redacted e-mail]".into() })
    );
    let sent = serde_json::to_string(&model.requests()[1].messages).unwrap();
    assert!(!sent.contains("ola@example.no") && !sent.contains("4111111111111111"), "{sent}");
}

#[tokio::test]
async fn refusing_an_answer_is_not_fooled_by_a_label_the_history_shows() {
    // An earlier turn's e-mail, masked in the request; the model repeats the label it read.
    let model = ScriptedModel::new().text("Noted.").text("You wrote [redacted e-mail] before.");
    let pii = Pii::new().action(PiiAction::Refuse);
    let agent = Agent::builder(&model).transformer(pii.transformer()).hook(pii).build();
    let mut conversation = Conversation::new();
    agent.run(&mut conversation, "hello").await.unwrap();
    // The address reaches the log through a user message the refusal halted: the next request
    // masks it, as an earlier turn's.
    let _ = agent.run(&mut conversation, "I am ola@example.no").await.unwrap_err();
    let reply = agent.run(&mut conversation, "what did I write?").await.unwrap();
    assert_eq!(reply.joined_text(), "You wrote [redacted e-mail] before.");
    let sent = tests::last_text(&model.requests()[1]);
    assert_eq!(sent, "what did I write?");
    let history = serde_json::to_string(&model.requests()[1].messages).unwrap();
    assert!(history.contains("I am [redacted e-mail]"), "{history}");
}
