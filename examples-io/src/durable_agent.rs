//! An agent whose turns survive a crash: served to restate-server as the `Conversation`
//! virtual object (`agentix-restate`). The demo model asks to mail what the user wrote; a
//! `before_tool` hook escalates every mail to a person, who answers through the object's
//! `approve` / `reject` / `edit` handlers — the turn waits on a Restate awakeable, across
//! restarts. The outbox sends each idempotency key once, as a real mail API that takes an
//! idempotency key does.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use agentix::event::BeforeTool;
use agentix::{
    Agent, AssistantMessage, Model, ToolCall, Turn, Verdict,
    model::{ModelError, ModelRequest, ModelResponse},
};
use agentix_restate::{Conversations, WaitingApproval};
use serde_json::json;

use agentix_server::demo::{last_user_text, tool_result_answered};

/// The mails sent, by idempotency key: a key sent twice is sent once.
#[derive(Clone, Debug, Default)]
pub struct Outbox(Arc<Mutex<BTreeMap<String, String>>>);

impl Outbox {
    /// Sends `body` under `key`, unless a mail went under it already: whether it went now.
    pub fn send(&self, key: &str, body: &str) -> bool {
        let mut sent = lock(&self.0);
        if sent.contains_key(key) {
            return false;
        }
        sent.insert(key.to_owned(), body.to_owned());
        true
    }

    /// Every mail sent, by key.
    pub fn sent(&self) -> BTreeMap<String, String> {
        lock(&self.0).clone()
    }
}

/// Nothing behind the outbox's lock is left half-written by a panic: a map insert or a clone.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Mails what the user wrote to the team, then says so. Deterministic: a replay asks the same.
#[derive(Clone, Copy, Debug, Default)]
pub struct MailModel;

impl Model for MailModel {
    async fn complete(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        if let Some(result) = tool_result_answered(request) {
            return Ok(AssistantMessage::text(format!("Done: {}.", result.output)).into());
        }
        let text = last_user_text(request);
        let call = ToolCall::new(
            format!("call_{}", request.messages.len()),
            "send_email",
            json!({ "to": "team@example.com", "body": text.trim() }),
        );
        Ok(AssistantMessage::default().with_tool_call(call).into())
    }
}

/// Sends a mail through the outbox, under the call's idempotency key.
pub struct SendEmail(pub Outbox);

impl agentix::Tool for SendEmail {
    const NAME: &'static str = "send_email";
    const WANTS_CALL_ID: bool = true;
    type Args = serde_json::Value;
    type Output = String;
    type Error = std::convert::Infallible;

    fn description(&self) -> &str {
        "Sends a mail."
    }

    async fn call(&self, args: serde_json::Value, turn: &Turn) -> Result<String, Self::Error> {
        let key = turn.tool_idempotency_key().unwrap_or_default();
        let body = args["body"].as_str().unwrap_or_default();
        let to = args["to"].as_str().unwrap_or("?");
        if self.0.send(&key, body) {
            println!("[outbox] sent to {to} under {key}: {body}");
        } else {
            println!("[outbox] {key} was sent already: not again");
        }
        Ok(format!("mailed {to}"))
    }
}

/// Every mail waits for a person.
pub struct AskFirst;

impl agentix::on::BeforeTool for AskFirst {
    async fn before_tool(&self, _: &mut ToolCall, _: &mut Turn) -> Verdict<BeforeTool> {
        Verdict::escalate("mail leaves the building")
    }
}

/// The agent: the mail model (or `model`), `send_email` through `outbox`, every mail escalated
/// and left to a person (`Suspend`: on Restate, the turn waits).
pub fn agent<M: Model>(
    model: M,
    outbox: Outbox,
) -> Agent<
    M,
    impl agentix::ToolSet,
    impl agentix::pipeline::Pipeline,
    impl agentix::approval::Approver,
> {
    Agent::builder(model)
        .tool(SendEmail(outbox))
        .hook(AskFirst)
        .approver(|_: ToolCall, _| async { agentix::approval::Approval::Suspend })
        .build()
}

/// The virtual object served: the agent, each waiting mail announced on standard output with
/// the command that approves it.
pub fn conversations(outbox: Outbox, ingress: &str) -> Conversations {
    let ingress = ingress.to_owned();
    Conversations::new(agent(MailModel, outbox)).announce(move |waiting: WaitingApproval| {
        let text = announcement(&waiting, &ingress);
        async move { println!("{text}") }
    })
}

/// What a person is told of a waiting call.
pub fn announcement(waiting: &WaitingApproval, ingress: &str) -> String {
    let (call, id) = (&waiting.approval.call, &waiting.conversation);
    format!(
        "[approval] {id}: {} {} waits ({}). Answer it:\n  \
         curl {ingress}/Conversation/{id}/approve --json '\"{awakeable}\"'\n  \
         curl {ingress}/Conversation/{id}/reject \
         --json '{{\"awakeable\": \"{awakeable}\", \"reason\": \"not now\"}}'",
        call.name,
        call.arguments,
        waiting.approval.reason,
        awakeable = waiting.awakeable,
    )
}

/// How to start restate-server, register the service and talk to it.
pub fn usage(addr: SocketAddr, ingress: &str, admin: &str) -> String {
    format!(
        "Serving the Conversation virtual object to restate-server on http://{addr}.

1. Start restate-server (BSL 1.1; not started by this example):
     npx @restatedev/restate-server@1.7.12        # or: $(scripts/restate.sh --path)
2. Register this service with it:
     curl {admin}/deployments --json '{{\"uri\": \"http://{addr}\"}}'
3. Talk to a conversation (the call returns when the turn ends):
     curl {ingress}/Conversation/chat-1/send --json '\"The build is green\"'
   The mail waits for a person: this process prints the command that approves it, and
     curl -X POST {ingress}/Conversation/chat-1/pending
   shows it from anywhere. Then the log:
     curl -X POST {ingress}/Conversation/chat-1/history

Kill this process while a turn runs or waits (kill -9) and start it again: Restate runs the
turn again here, the completed steps replayed, not redone; the mail goes under the same
idempotency key (chat-1/1/call_1), by which a mail API that takes one sends it once (this
demo's outbox lives in memory: it forgets across restarts)."
    )
}
