//! The durable_agent example: the agent it serves mails once per idempotency key, after a
//! person's answer; what it prints tells how to reach it. Turns of an agent of this shape (a
//! tool with its idempotency key, an escalation that waits) through a real restate-server are
//! tested by `agentix-restate/tests/crash.rs`.

use agentix::{Conversation, Error, approval::Approval};
use agentix::{ToolCall, approval::PendingApproval};
use agentix_restate::WaitingApproval;
use examples_io::durable_agent::{MailModel, Outbox, agent, announcement, usage};

#[tokio::test]
async fn a_mail_waits_for_a_person_and_goes_once_under_its_key() {
    let outbox = Outbox::default();
    let agent = agent(MailModel, outbox.clone());
    let mut conversation = Conversation::new().with_id("chat-1");
    let waiting = agent.run(&mut conversation, "The build is green").await;
    let Err(Error::AwaitingApproval { pending, .. }) = waiting else {
        panic!("the mail waits: {waiting:?}")
    };
    assert_eq!(pending.call.name, "send_email");
    assert_eq!(pending.reason, "mail leaves the building");
    assert!(outbox.sent().is_empty(), "nothing sent before the answer");

    let answer = agent.resume(&mut conversation, Approval::Approve).await.unwrap();
    assert_eq!(answer.joined_text(), "Done: mailed team@example.com.");
    let sent = outbox.sent();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent["chat-1/1/call_1"], "The build is green");
    assert!(!outbox.send("chat-1/1/call_1", "again"), "a key is sent once");
}

#[test]
fn the_usage_tells_how_to_start_restate_and_register_the_service() {
    let text =
        usage("127.0.0.1:9080".parse().unwrap(), "http://localhost:8080", "http://localhost:9070");
    assert!(text.contains("npx @restatedev/restate-server@1.7.12"));
    assert!(text.contains(
        r#"curl http://localhost:9070/deployments --json '{"uri": "http://127.0.0.1:9080"}'"#
    ));
    assert!(text.contains("curl -X POST http://localhost:8080/Conversation/chat-1/pending"));
}

#[test]
fn the_announcement_gives_the_commands_that_answer_the_call() {
    let waiting = WaitingApproval {
        awakeable: "sign_1abc".into(),
        conversation: "chat-1".into(),
        approval: PendingApproval {
            call: ToolCall::new("call_1", "send_email", serde_json::json!({ "to": "team" })),
            hook: "AskFirst".into(),
            reason: "mail leaves the building".into(),
        },
    };
    let text = announcement(&waiting, "http://localhost:8080");
    assert!(text.starts_with("[approval] chat-1: send_email {\"to\":\"team\"} waits"), "{text}");
    assert!(text.contains(
        r#"curl http://localhost:8080/Conversation/chat-1/approve --json '"sign_1abc"'"#
    ));
    assert!(text.contains(r#"--json '{"awakeable": "sign_1abc", "reason": "not now"}'"#));
}
