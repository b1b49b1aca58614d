//! The tables, created on open and checked: a store written by a newer agentix is refused, not
//! misread.

use sqlx::AnyPool;

use crate::{Dialect, StoreError, sql};

/// The schema version this crate writes and reads. Each migration below brings a store from
/// the version before it to its own.
pub const SCHEMA_VERSION: i64 = 4;

/// Version 1: conversations, their entries, the audit of model calls, and approvals. JSON is
/// kept as text: both backends read it back byte for byte.
const V1: &[&str] = &[
    "CREATE TABLE conversations (
        id TEXT PRIMARY KEY,
        version BIGINT NOT NULL,
        turns BIGINT NOT NULL,
        config TEXT NOT NULL,
        scope TEXT NOT NULL,
        status TEXT NOT NULL,
        lease_owner TEXT,
        lease_until BIGINT
    )",
    "CREATE TABLE entries (
        conversation_id TEXT NOT NULL REFERENCES conversations (id),
        seq BIGINT NOT NULL,
        turn BIGINT NOT NULL,
        task_id BIGINT,
        plan_id BIGINT,
        entry TEXT NOT NULL,
        PRIMARY KEY (conversation_id, seq)
    )",
    "CREATE TABLE model_calls (
        conversation_id TEXT NOT NULL REFERENCES conversations (id),
        turn BIGINT NOT NULL,
        step BIGINT NOT NULL,
        attempt BIGINT NOT NULL,
        request TEXT NOT NULL,
        response TEXT,
        input_tokens BIGINT,
        output_tokens BIGINT,
        cache_read_tokens BIGINT,
        cache_write_tokens BIGINT,
        latency_ms BIGINT NOT NULL,
        error TEXT,
        PRIMARY KEY (conversation_id, turn, step, attempt)
    )",
    "CREATE TABLE approvals (
        conversation_id TEXT NOT NULL REFERENCES conversations (id),
        turn BIGINT NOT NULL,
        call_id TEXT NOT NULL,
        call TEXT NOT NULL,
        hook TEXT NOT NULL,
        reason TEXT NOT NULL,
        status TEXT NOT NULL,
        answer TEXT,
        PRIMARY KEY (conversation_id, turn, call_id)
    )",
];

/// Version 2: approvals and model calls keyed by their place in the conversation (`seq`: the
/// suspended entry's, the call's order), so that one call id waiting twice, or a model called
/// twice in one step, each keep a row (neither table was written at version 1: recreated);
/// sessions, their plans and their tasks; the journal of turns in flight.
const V2: &[&str] = &[
    "DROP TABLE approvals",
    "CREATE TABLE approvals (
        conversation_id TEXT NOT NULL REFERENCES conversations (id),
        seq BIGINT NOT NULL,
        turn BIGINT NOT NULL,
        call_id TEXT NOT NULL,
        tool TEXT NOT NULL,
        call TEXT NOT NULL,
        hook TEXT NOT NULL,
        reason TEXT NOT NULL,
        status TEXT NOT NULL,
        answer TEXT,
        answered_seq BIGINT,
        PRIMARY KEY (conversation_id, seq)
    )",
    "CREATE INDEX approvals_by_status ON approvals (status, conversation_id, seq)",
    "DROP TABLE model_calls",
    "CREATE TABLE model_calls (
        conversation_id TEXT NOT NULL REFERENCES conversations (id),
        seq BIGINT NOT NULL,
        turn BIGINT NOT NULL,
        step BIGINT NOT NULL,
        request TEXT NOT NULL,
        response TEXT,
        input_tokens BIGINT,
        output_tokens BIGINT,
        cache_read_tokens BIGINT,
        cache_write_tokens BIGINT,
        latency_us BIGINT NOT NULL,
        error TEXT,
        PRIMARY KEY (conversation_id, seq)
    )",
    "CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        conversation_id TEXT NOT NULL REFERENCES conversations (id),
        status TEXT NOT NULL,
        stopped TEXT,
        steps BIGINT NOT NULL,
        follow_ups BIGINT NOT NULL
    )",
    "CREATE TABLE plans (
        session_id TEXT NOT NULL REFERENCES sessions (id),
        plan_id BIGINT NOT NULL,
        title TEXT,
        total BIGINT NOT NULL,
        completed BIGINT NOT NULL,
        succeeded BIGINT NOT NULL,
        PRIMARY KEY (session_id, plan_id)
    )",
    "CREATE TABLE tasks (
        session_id TEXT NOT NULL REFERENCES sessions (id),
        task_id BIGINT NOT NULL,
        position BIGINT NOT NULL,
        plan_id BIGINT,
        title TEXT,
        prompt TEXT NOT NULL,
        max_turns BIGINT,
        status TEXT NOT NULL,
        turn BIGINT,
        steps BIGINT,
        reason TEXT,
        answer TEXT,
        PRIMARY KEY (session_id, task_id)
    )",
    "CREATE TABLE journal (
        conversation_id TEXT NOT NULL REFERENCES conversations (id),
        turn BIGINT NOT NULL,
        part BIGINT NOT NULL,
        seq BIGINT NOT NULL,
        step TEXT NOT NULL,
        value TEXT NOT NULL,
        PRIMARY KEY (conversation_id, turn, part, seq)
    )",
];

/// Version 3: the journal keeps each lane of a turn's steps apart (`lane`: `''` for the
/// turn's own steps, a tool call's id for that call's), so that a step's calls running together
/// replay whatever order they finished in. The steps a version 2 journal holds are the turn's
/// own lane's (its calls ran one at a time).
const V3: &[&str] = &[
    // Made beside the old table and renamed to it: PostgreSQL names a key's index after its
    // table as made, so the old table keeps its own until it is dropped.
    "CREATE TABLE journal_lanes (
        conversation_id TEXT NOT NULL REFERENCES conversations (id),
        turn BIGINT NOT NULL,
        part BIGINT NOT NULL,
        lane TEXT NOT NULL,
        seq BIGINT NOT NULL,
        step TEXT NOT NULL,
        value TEXT NOT NULL,
        PRIMARY KEY (conversation_id, turn, part, lane, seq)
    )",
    "INSERT INTO journal_lanes (conversation_id, turn, part, lane, seq, step, value)
        SELECT conversation_id, turn, part, '', seq, step, value FROM journal",
    "DROP TABLE journal",
    "ALTER TABLE journal_lanes RENAME TO journal",
];

/// Version 4: a conversation's owner (the subject that created it; `NULL` for those stored
/// before, until [`Store::adopt_unowned`](crate::Store::adopt_unowned) gives them one), and who
/// answered each approval.
const V4: &[&str] = &[
    "ALTER TABLE conversations ADD COLUMN owner TEXT",
    "CREATE INDEX conversations_by_owner ON conversations (owner)",
    "ALTER TABLE approvals ADD COLUMN answered_by TEXT",
];

/// Every migration, by the version it brings the store to.
const MIGRATIONS: &[(i64, &[&str])] = &[(1, V1), (2, V2), (3, V3), (4, V4)];

/// Brings the store's schema to [`SCHEMA_VERSION`], in one transaction per migration; refuses
/// a store whose version is newer than this crate's.
pub(crate) async fn migrate(pool: &AnyPool, dialect: Dialect) -> Result<(), StoreError> {
    // Workers opening one store at once migrate it once: the first holds the lock (SQLite's
    // `BEGIN IMMEDIATE`, PostgreSQL's advisory lock), the others then find it migrated.
    let mut transaction = dialect.begin(pool).await?;
    if dialect == Dialect::Postgres {
        sqlx::query("SELECT pg_advisory_xact_lock(7375830561) ").execute(&mut *transaction).await?;
    }
    sqlx::query("CREATE TABLE IF NOT EXISTS agentix_schema (version BIGINT NOT NULL)")
        .execute(&mut *transaction)
        .await?;
    let found: Option<i64> = sqlx::query_scalar("SELECT MAX(version) FROM agentix_schema")
        .fetch_one(&mut *transaction)
        .await?;
    let found = found.unwrap_or(0);
    if found > SCHEMA_VERSION {
        return Err(StoreError::SchemaFromTheFuture { found, supported: SCHEMA_VERSION });
    }
    for (version, statements) in MIGRATIONS.iter().filter(|(version, _)| *version > found) {
        for statement in *statements {
            sqlx::query(*statement).execute(&mut *transaction).await?;
        }
        sqlx::query(sql(dialect, "INSERT INTO agentix_schema (version) VALUES (?)"))
            .bind(*version)
            .execute(&mut *transaction)
            .await?;
    }
    transaction.commit().await?;
    Ok(())
}
