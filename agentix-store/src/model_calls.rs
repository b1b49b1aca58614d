//! The audit of model calls: what each call sent and got, stored with the step it belongs to.

use agentix::{conversation::TurnRef, durable::ModelCall, model::Usage};
use sqlx::Row;

use crate::{Dialect, Store, StoreError, sql, to_i64, to_u64};

/// A model call as the store keeps it: encoded when the call returns, written at the next
/// commit.
#[derive(Clone, Debug)]
pub(crate) struct AuditedCall {
    turn: TurnRef,
    step: u32,
    request: String,
    response: Option<String>,
    usage: Option<Usage>,
    latency_us: i64,
    error: Option<String>,
}

impl AuditedCall {
    pub(crate) fn of(call: &ModelCall<'_>) -> Self {
        // A value that will not encode is audited as the reason it would not.
        let encode = |value: Result<String, serde_json::Error>| {
            value.unwrap_or_else(|error| format!("(not encoded: {error})"))
        };
        let (response, usage, error) = match call.outcome {
            Ok(response) => {
                (Some(encode(serde_json::to_string(&response.message))), Some(response.usage), None)
            }
            Err(error) => (None, None, Some(error.to_string())),
        };
        AuditedCall {
            turn: call.turn,
            step: call.step,
            request: encode(serde_json::to_string(call.request)),
            response,
            usage,
            latency_us: i64::try_from(call.latency.as_micros()).unwrap_or(i64::MAX),
            error,
        }
    }
}

/// One audited model call, as read back.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct AuditRecord {
    /// Its place among the conversation's calls, from 0.
    pub seq: u64,
    /// The turn.
    pub turn: TurnRef,
    /// The step within the turn.
    pub step: u32,
    /// The request as sent, as JSON.
    pub request: serde_json::Value,
    /// The assistant message that came back, as JSON; `None` if the call failed.
    pub response: Option<serde_json::Value>,
    /// What it cost, cached tokens included; `None` if the call failed.
    pub usage: Option<Usage>,
    /// From sending the request to the answer's end.
    pub latency: std::time::Duration,
    /// How it failed, displayed.
    pub error: Option<String>,
}

impl Store {
    /// Every model call a conversation's committed turns made, in order.
    pub async fn model_calls(&self, id: &str) -> Result<Vec<AuditRecord>, StoreError> {
        let rows = sqlx::query(sql(
            self.dialect,
            "SELECT seq, turn, step, request, response, input_tokens, output_tokens, \
             cache_read_tokens, cache_write_tokens, latency_us, error FROM model_calls \
             WHERE conversation_id = ? ORDER BY seq",
        ))
        .bind(id)
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(|row| read(id, row)).collect()
    }
}

fn read(id: &str, row: &sqlx::any::AnyRow) -> Result<AuditRecord, StoreError> {
    let count = |column: &str| -> Result<u64, StoreError> { Ok(to_u64(row.try_get(column)?)) };
    let seq = count("seq")?;
    let json = |text: &str| {
        serde_json::from_str(text).map_err(|error| StoreError::CorruptModelCall {
            conversation: id.to_owned(),
            seq,
            message: error.to_string(),
        })
    };
    let tokens = |column: &str| -> Result<Option<u32>, StoreError> {
        let value: Option<i64> = row.try_get(column)?;
        Ok(value.map(|value| u32::try_from(value).unwrap_or(u32::MAX)))
    };
    let usage = match tokens("input_tokens")? {
        Some(input_tokens) => Some(Usage {
            input_tokens,
            output_tokens: tokens("output_tokens")?.unwrap_or(0),
            cache_read_tokens: tokens("cache_read_tokens")?.unwrap_or(0),
            cache_write_tokens: tokens("cache_write_tokens")?.unwrap_or(0),
        }),
        None => None,
    };
    let response: Option<String> = row.try_get("response")?;
    Ok(AuditRecord {
        seq,
        turn: TurnRef(count("turn")?),
        step: u32::try_from(count("step")?).unwrap_or(u32::MAX),
        request: json(&row.try_get::<String, _>("request")?)?,
        response: response.as_deref().map(json).transpose()?,
        usage,
        latency: std::time::Duration::from_micros(count("latency_us")?),
        error: row.try_get("error")?,
    })
}

/// Writes `calls` after the conversation's audited calls, in the commit's transaction.
pub(crate) async fn insert(
    dialect: Dialect,
    transaction: &mut sqlx::Transaction<'static, sqlx::Any>,
    id: &str,
    calls: &[AuditedCall],
) -> Result<(), StoreError> {
    if calls.is_empty() {
        return Ok(());
    }
    let next: Option<i64> = sqlx::query_scalar(sql(
        dialect,
        "SELECT MAX(seq) + 1 FROM model_calls WHERE conversation_id = ?",
    ))
    .bind(id)
    .fetch_one(&mut **transaction)
    .await?;
    for (seq, call) in (next.unwrap_or(0)..).zip(calls) {
        let usage = call.usage;
        sqlx::query(sql(
            dialect,
            "INSERT INTO model_calls (conversation_id, seq, turn, step, request, response, \
             input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, latency_us, \
             error) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        ))
        .bind(id)
        .bind(seq)
        .bind(to_i64(call.turn.0))
        .bind(i64::from(call.step))
        .bind(&call.request)
        .bind(call.response.as_deref())
        .bind(usage.map(|usage| i64::from(usage.input_tokens)))
        .bind(usage.map(|usage| i64::from(usage.output_tokens)))
        .bind(usage.map(|usage| i64::from(usage.cache_read_tokens)))
        .bind(usage.map(|usage| i64::from(usage.cache_write_tokens)))
        .bind(call.latency_us)
        .bind(call.error.as_deref())
        .execute(&mut **transaction)
        .await?;
    }
    Ok(())
}
