//! A person in the loop (Turin's ALLOW/REJECT/ESCALATE/MODIFY, Patinox's Approve/Reject): a
//! `before_tool` hook lets small transfers through and escalates large ones; the approver
//! approves one, edits one down and rejects one. The model reads each decision in the results.

use agentix::event::BeforeTool;
use agentix::{
    Agent, Conversation, Outcome, ScriptedModel, Tool, ToolCall, ToolResult, Turn, Verdict,
    approval::Approval, hook, verdict::Escalation,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::trace;

#[derive(Deserialize, JsonSchema)]
struct Transfer {
    /// Who receives the money.
    to: String,
    /// How much, in euros.
    euros: u64,
}

/// Moves money (here, says it did).
struct SendMoney;

impl Tool for SendMoney {
    const NAME: &'static str = "send_money";
    type Args = Transfer;
    type Output = String;
    type Error = std::convert::Infallible;

    fn description(&self) -> &str {
        "Sends money to a person."
    }

    async fn call(&self, args: Transfer, _turn: &Turn) -> Result<String, Self::Error> {
        Ok(format!("sent {} € to {}", args.euros, args.to))
    }
}

/// Transfers up to this amount need nobody's approval.
pub const LIMIT: u64 = 100;

/// `before_tool`: small transfers run; large ones go to a person.
#[hook(before_tool)]
async fn large_transfers_need_approval(call: &ToolCall) -> Verdict<BeforeTool> {
    let euros = call.arguments["euros"].as_u64().unwrap_or(u64::MAX);
    if euros <= LIMIT {
        Verdict::Continue
    } else {
        Verdict::escalate(format!("{euros} € is over the {LIMIT} € limit"))
    }
}

/// The person: approves a transfer to the landlord or of up to 1 000 €, caps one of up to
/// 5 000 € at 1 000 €, rejects the rest.
async fn review(call: ToolCall, escalation: Escalation) -> Approval {
    let euros = call.arguments["euros"].as_u64().unwrap_or(u64::MAX);
    let payee = call.arguments["to"].as_str().unwrap_or_default().to_owned();
    match (payee.as_str(), euros) {
        ("landlord", _) | (_, ..=1_000) => Approval::Approve,
        (_, ..=5_000) => {
            let mut capped = call.clone();
            capped.arguments = json!({ "to": payee, "euros": 1_000 });
            Approval::Edit(capped)
        }
        _ => Approval::Reject(format!("not approved ({})", escalation.reason)),
    }
}

/// One turn: four transfers in one step — one small, three escalated. Returns the outcome, the
/// conversation and the results the model read.
pub async fn run(out: &(dyn Fn(&str) + Sync)) -> (Outcome, Conversation, Vec<ToolResult>) {
    let model = ScriptedModel::new()
        .tool_calls([
            ("send_money", json!({ "to": "Ada", "euros": 40 })),
            ("send_money", json!({ "to": "landlord", "euros": 1_200 })),
            ("send_money", json!({ "to": "Bob", "euros": 4_000 })),
            ("send_money", json!({ "to": "a stranger", "euros": 90_000 })),
        ])
        .text(
            "Done: Ada and your landlord are paid, Bob got 1 000 €, the last transfer was refused.",
        );
    let agent = Agent::builder(&model)
        .tool(SendMoney)
        .hook(large_transfers_need_approval)
        .approver(review)
        .build();
    let mut conversation = Conversation::new();
    let outcome = agent
        .turn(&mut conversation, "Pay this month's bills.")
        .observe(&trace::observer(out))
        .await;
    trace::outcome(out, &outcome);
    trace::log(out, &conversation);
    let results = model.requests().last().map(|request| request.tool_results().cloned().collect());
    let results = results.unwrap_or_default();
    (outcome, conversation, results)
}
