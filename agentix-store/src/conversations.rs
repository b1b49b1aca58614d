//! Conversations in the store: created whole, grown by commits that each append a step's
//! entries and advance the version in one transaction, and loaded back exactly.

use std::fmt;

use agentix::{Config, Conversation, Entry, scope::Scope};
use serde::{Deserialize, Serialize};
use sqlx::Row;

use crate::model_calls::{self, AuditedCall};
use crate::{Store, StoreError, approvals, sql, to_i64, to_u64};

/// A conversation's version in the store: how many commits it has had. A commit names the
/// version it was made against, and fails with [`StoreError::Conflict`] if another writer
/// moved it first.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Version(pub i64);

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// A conversation as loaded: the conversation, the version to commit its next step against,
/// and whose it is.
#[derive(Debug)]
pub struct Stored {
    /// The conversation, exactly as it was committed.
    pub conversation: Conversation,
    /// Its version in the store.
    pub version: Version,
    /// The subject it belongs to ([`Store::create_owned`]); `None` for one created without an
    /// owner, or stored before conversations had one.
    pub owner: Option<String>,
}

impl Store {
    /// Stores `conversation` under `id` as a new conversation (its config, scope and log), with
    /// no owner; returns its first version.
    pub async fn create(
        &self,
        id: &str,
        conversation: &Conversation,
    ) -> Result<Version, StoreError> {
        self.insert(id, conversation, None).await
    }

    /// Stores `conversation` under `id` as a new conversation belonging to `owner` (a served
    /// agent's subject, which every later read is scoped by); returns its first version. The
    /// owner never changes.
    pub async fn create_owned(
        &self,
        id: &str,
        conversation: &Conversation,
        owner: &str,
    ) -> Result<Version, StoreError> {
        self.insert(id, conversation, Some(owner)).await
    }

    /// Whose conversation `id` is: `Ok(None)` for one without an owner, `NotFound` for none.
    /// One row read, not the log: what a server checks before it lets a request near the
    /// conversation.
    pub async fn owner(&self, id: &str) -> Result<Option<String>, StoreError> {
        let row: Option<(Option<String>,)> =
            sqlx::query_as(sql(self.dialect, "SELECT owner FROM conversations WHERE id = ?"))
                .bind(id)
                .fetch_optional(&self.pool)
                .await?;
        row.map(|(owner,)| owner)
            .ok_or_else(|| StoreError::NotFound { conversation: id.to_owned() })
    }

    /// Gives every conversation without an owner — those stored before conversations had one,
    /// or created with [`create`](Store::create) — to `owner`; how many it gave. Conversations
    /// with an owner keep theirs.
    pub async fn adopt_unowned(&self, owner: &str) -> Result<u64, StoreError> {
        let adopted = sqlx::query(sql(
            self.dialect,
            "UPDATE conversations SET owner = ? WHERE owner IS NULL",
        ))
        .bind(owner)
        .execute(&self.pool)
        .await?;
        Ok(adopted.rows_affected())
    }

    /// How many conversations have no owner.
    pub async fn unowned(&self) -> Result<u64, StoreError> {
        let count: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM conversations WHERE owner IS NULL")
                .fetch_one(&self.pool)
                .await?;
        Ok(to_u64(count))
    }

    async fn insert(
        &self,
        id: &str,
        conversation: &Conversation,
        owner: Option<&str>,
    ) -> Result<Version, StoreError> {
        let (config, scope) = encode_fields(conversation)?;
        let mut transaction = self.dialect.begin(&self.pool).await?;
        let exists: Option<i64> =
            sqlx::query_scalar(sql(self.dialect, "SELECT version FROM conversations WHERE id = ?"))
                .bind(id)
                .fetch_optional(&mut *transaction)
                .await?;
        if exists.is_some() {
            return Err(StoreError::AlreadyExists { conversation: id.to_owned() });
        }
        sqlx::query(sql(
            self.dialect,
            "INSERT INTO conversations (id, version, turns, config, scope, status, owner) \
             VALUES (?, 1, ?, ?, ?, ?, ?)",
        ))
        .bind(id)
        .bind(to_i64(conversation.turns()))
        .bind(config)
        .bind(scope)
        .bind(status(conversation))
        .bind(owner)
        .execute(&mut *transaction)
        .await?;
        insert_entries(self, &mut transaction, id, conversation, 0).await?;
        transaction.commit().await?;
        Ok(Version(1))
    }

    /// Commits what `conversation` holds past its first `from` entries — a step, a turn's end —
    /// in one transaction that checks the conversation is still at `expected` and advances it.
    /// The conversation's turn counter, config and scope are stored with it. Returns the new
    /// version. A commit that finds another writer's version fails with
    /// [`StoreError::Conflict`] and writes nothing.
    pub async fn commit(
        &self,
        id: &str,
        expected: Version,
        conversation: &Conversation,
        from: usize,
    ) -> Result<Version, StoreError> {
        self.commit_with(id, expected, conversation, from, &[], None).await
    }

    /// [`commit`](Store::commit), with the model calls made since the last commit, and
    /// dropping the journal of turn `finished` if one is given.
    pub(crate) async fn commit_with(
        &self,
        id: &str,
        expected: Version,
        conversation: &Conversation,
        from: usize,
        calls: &[AuditedCall],
        finished: Option<u64>,
    ) -> Result<Version, StoreError> {
        let (config, scope) = encode_fields(conversation)?;
        let mut transaction = self.dialect.begin(&self.pool).await?;
        let advanced = sqlx::query(sql(
            self.dialect,
            "UPDATE conversations SET version = version + 1, turns = ?, config = ?, scope = ?, \
             status = ? WHERE id = ? AND version = ?",
        ))
        .bind(to_i64(conversation.turns()))
        .bind(config)
        .bind(scope)
        .bind(status(conversation))
        .bind(id)
        .bind(expected.0)
        .execute(&mut *transaction)
        .await?;
        if advanced.rows_affected() == 0 {
            return Err(self.conflict_or_missing(&mut transaction, id, expected).await?);
        }
        let stored: Option<i64> = sqlx::query_scalar(sql(
            self.dialect,
            "SELECT MAX(seq) + 1 FROM entries WHERE conversation_id = ?",
        ))
        .bind(id)
        .fetch_one(&mut *transaction)
        .await?;
        let stored = to_u64(stored.unwrap_or(0));
        if stored != from as u64 {
            return Err(StoreError::NotContinuous {
                conversation: id.to_owned(),
                from: from as u64,
                stored,
            });
        }
        insert_entries(self, &mut transaction, id, conversation, from).await?;
        model_calls::insert(self.dialect, &mut transaction, id, calls).await?;
        if let Some(turn) = finished {
            sqlx::query(sql(
                self.dialect,
                "DELETE FROM journal WHERE conversation_id = ? AND turn = ?",
            ))
            .bind(id)
            .bind(to_i64(turn))
            .execute(&mut *transaction)
            .await?;
        }
        transaction.commit().await?;
        Ok(Version(expected.0 + 1))
    }

    /// Why conversation `id` is not at `expected`: another writer moved it, or it is not stored.
    pub(crate) async fn conflict_or_missing(
        &self,
        transaction: &mut sqlx::Transaction<'static, sqlx::Any>,
        id: &str,
        expected: Version,
    ) -> Result<StoreError, StoreError> {
        let found: Option<i64> =
            sqlx::query_scalar(sql(self.dialect, "SELECT version FROM conversations WHERE id = ?"))
                .bind(id)
                .fetch_optional(&mut **transaction)
                .await?;
        Ok(match found {
            None => StoreError::NotFound { conversation: id.to_owned() },
            Some(found) => StoreError::Conflict {
                conversation: id.to_owned(),
                expected,
                found: Version(found),
            },
        })
    }

    /// Loads the conversation stored under `id` (its [`id`](Conversation::id) then), checked as
    /// a conversation read back with serde is: a row that does not decode, a gap in the log, or
    /// a log that breaks a rule is an error naming the conversation and the entry, and nothing
    /// is changed to make it load.
    pub async fn load(&self, id: &str) -> Result<Stored, StoreError> {
        // One snapshot: the row and the entries of the same commit.
        let mut snapshot = self.dialect.begin_read(&self.pool).await?;
        let row = sqlx::query(sql(
            self.dialect,
            "SELECT version, turns, config, scope, owner FROM conversations WHERE id = ?",
        ))
        .bind(id)
        .fetch_optional(&mut *snapshot)
        .await?
        .ok_or_else(|| StoreError::NotFound { conversation: id.to_owned() })?;
        let version: i64 = row.try_get("version")?;
        let turns: i64 = row.try_get("turns")?;
        let config: Config = decode_field(id, "config", &row.try_get::<String, _>("config")?)?;
        let scope: Scope = decode_field(id, "scope", &row.try_get::<String, _>("scope")?)?;
        let owner: Option<String> = row.try_get("owner")?;
        let rows = sqlx::query(sql(
            self.dialect,
            "SELECT seq, entry FROM entries WHERE conversation_id = ? ORDER BY seq",
        ))
        .bind(id)
        .fetch_all(&mut *snapshot)
        .await?;
        snapshot.commit().await?;
        let mut log = Vec::with_capacity(rows.len());
        for (index, row) in rows.iter().enumerate() {
            let seq: i64 = row.try_get("seq")?;
            if seq != index as i64 {
                return Err(StoreError::MissingEntry {
                    conversation: id.to_owned(),
                    seq: index as u64,
                });
            }
            let text: String = row.try_get("entry")?;
            let entry: Entry =
                serde_json::from_str(&text).map_err(|error| StoreError::CorruptEntry {
                    conversation: id.to_owned(),
                    seq: index as u64,
                    message: error.to_string(),
                })?;
            log.push(entry);
        }
        let turns = to_u64(turns);
        let conversation =
            Conversation::from_parts(config, log, turns, scope).map_err(|source| {
                StoreError::InvalidLog {
                    conversation: id.to_owned(),
                    seq: source.index as u64,
                    source,
                }
            })?;
        Ok(Stored { conversation: conversation.with_id(id), version: Version(version), owner })
    }
}

/// Inserts `conversation`'s entries from `from` on, each with its turn and its session task.
async fn insert_entries(
    store: &Store,
    transaction: &mut sqlx::Transaction<'static, sqlx::Any>,
    id: &str,
    conversation: &Conversation,
    from: usize,
) -> Result<(), StoreError> {
    for (seq, (entry, task)) in (from..).zip(conversation.log_with_tasks(from)) {
        let text = serde_json::to_string(entry).map_err(|error| StoreError::Encode {
            what: "a log entry",
            message: error.to_string(),
        })?;
        sqlx::query(sql(
            store.dialect,
            "INSERT INTO entries (conversation_id, seq, turn, task_id, plan_id, entry) \
             VALUES (?, ?, ?, ?, ?, ?)",
        ))
        .bind(id)
        .bind(seq as i64)
        .bind(to_i64(entry.turn().0))
        .bind(task.map(|tag| to_i64(tag.task.get())))
        .bind(task.and_then(|tag| tag.plan).map(|plan| to_i64(plan.get())))
        .bind(text)
        .execute(&mut **transaction)
        .await?;
        if matches!(entry, Entry::Suspended { .. } | Entry::Resumed { .. }) {
            approvals::record(store.dialect, transaction, id, seq as i64, entry).await?;
        }
    }
    Ok(())
}

/// What a conversation is doing, as its `status` column says: waiting for an approval, or idle.
fn status(conversation: &Conversation) -> &'static str {
    if conversation.pending_approval().is_some() { "waiting" } else { "idle" }
}

/// A conversation's config and scope, as stored.
fn encode_fields(conversation: &Conversation) -> Result<(String, String), StoreError> {
    let encode = |what, value: Result<String, serde_json::Error>| {
        value.map_err(|error| StoreError::Encode { what, message: error.to_string() })
    };
    Ok((
        encode("the config", serde_json::to_string(conversation.config()))?,
        encode("the scope", serde_json::to_string(conversation.scope()))?,
    ))
}

fn decode_field<T: serde::de::DeserializeOwned>(
    id: &str,
    field: &'static str,
    text: &str,
) -> Result<T, StoreError> {
    serde_json::from_str(text).map_err(|error| StoreError::CorruptConversation {
        conversation: id.to_owned(),
        field,
        message: error.to_string(),
    })
}
