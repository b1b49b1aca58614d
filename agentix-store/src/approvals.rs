//! Approvals that wait in the store: a suspended turn's call is written with the step it
//! stopped at, listed from any process, and marked answered when the resumed step commits.

use agentix::{
    Entry, ToolCall,
    approval::{Approval, PendingApproval},
    conversation::TurnRef,
};
use sqlx::Row;

use crate::{Dialect, Store, StoreError, sql, to_i64, to_u64};

/// A tool call waiting in the store for a person's answer: which conversation, where, and
/// what. Resume it by loading the conversation and calling
/// [`Agent::resume`](agentix::Agent::resume) with `.commit(...)` with the answer.
#[derive(Clone, Debug, PartialEq)]
pub struct WaitingApproval {
    /// The conversation whose turn waits.
    pub conversation: String,
    /// The position in its log of the suspended step.
    pub seq: u64,
    /// The turn.
    pub turn: TurnRef,
    /// The call, who escalated it and why.
    pub pending: PendingApproval,
}

impl Store {
    /// Every tool call waiting for an answer, in every conversation, ordered by conversation
    /// id (in the database's order for text) and position. A conversation's approval is listed
    /// from the commit that suspended its turn until the commit that resumed it.
    pub async fn pending_approvals(&self) -> Result<Vec<WaitingApproval>, StoreError> {
        let rows = sqlx::query(
            "SELECT conversation_id, seq, turn, call, hook, reason FROM approvals \
             WHERE status = 'pending' ORDER BY conversation_id, seq",
        )
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|row| {
                let conversation: String = row.try_get("conversation_id")?;
                let seq = to_u64(row.try_get("seq")?);
                let turn = TurnRef(to_u64(row.try_get("turn")?));
                let call: String = row.try_get("call")?;
                let call: ToolCall =
                    serde_json::from_str(&call).map_err(|error| StoreError::CorruptApproval {
                        conversation: conversation.clone(),
                        seq,
                        message: error.to_string(),
                    })?;
                let pending = PendingApproval {
                    call,
                    hook: row.try_get("hook")?,
                    reason: row.try_get("reason")?,
                };
                Ok(WaitingApproval { conversation, seq, turn, pending })
            })
            .collect()
    }
}

/// Writes what an entry being committed at `seq` says of approvals: a suspended step's call
/// waits; a resumption answers the one that waited.
pub(crate) async fn record(
    dialect: Dialect,
    transaction: &mut sqlx::Transaction<'static, sqlx::Any>,
    id: &str,
    seq: i64,
    entry: &Entry,
) -> Result<(), StoreError> {
    match entry {
        Entry::Suspended { turn, suspension } => {
            let call = &suspension.pending.call;
            let text = serde_json::to_string(call).map_err(|error| StoreError::Encode {
                what: "a waiting call",
                message: error.to_string(),
            })?;
            sqlx::query(sql(
                dialect,
                "INSERT INTO approvals (conversation_id, seq, turn, call_id, tool, call, hook, \
                 reason, status) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending')",
            ))
            .bind(id)
            .bind(seq)
            .bind(to_i64(turn.0))
            .bind(&call.id)
            .bind(&call.name)
            .bind(text)
            .bind(&suspension.pending.hook)
            .bind(&suspension.pending.reason)
            .execute(&mut **transaction)
            .await?;
        }
        Entry::Resumed { approval, by, .. } => {
            let (status, answer) = match &**approval {
                Approval::Approve => ("approved", None),
                Approval::Reject(reason) => ("rejected", Some(reason.clone())),
                Approval::Edit(call) => (
                    "edited",
                    Some(serde_json::to_string(call).map_err(|error| StoreError::Encode {
                        what: "an edited call",
                        message: error.to_string(),
                    })?),
                ),
                Approval::Suspend => ("pending", None),
            };
            sqlx::query(sql(
                dialect,
                "UPDATE approvals SET status = ?, answer = ?, answered_seq = ?, answered_by = ? \
                 WHERE conversation_id = ? AND status = 'pending'",
            ))
            .bind(status)
            .bind(answer)
            .bind(seq)
            .bind(by.as_deref())
            .bind(id)
            .execute(&mut **transaction)
            .await?;
        }
        _ => {}
    }
    Ok(())
}
