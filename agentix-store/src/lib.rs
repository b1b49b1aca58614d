//! A durable store for agentix conversations: an append-only log of entries per conversation,
//! each step committed in one transaction that checks and advances the conversation's version,
//! and read back into exactly the conversation that was stored.
//!
//! SQLite is the embedded default (a file, or `sqlite::memory:`; compiled in, nothing to
//! install); PostgreSQL (feature `postgres`) serves many workers sharing one pool of
//! conversations. Both are reached through sqlx's runtime queries: no database is needed to
//! build.
//!
//! ```
//! use agentix::{Agent, Conversation, ScriptedModel};
//! use agentix_store::Store;
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let store = Store::open("sqlite::memory:").await?;
//! let version = store.create("chat-1", &Conversation::new()).await?;
//!
//! // A turn, then its entries committed.
//! let agent = Agent::builder(ScriptedModel::new().text("Hello!")).build();
//! let mut stored = store.load("chat-1").await?;
//! let from = stored.conversation.log().len();
//! agent.run(&mut stored.conversation, "Hi").await.unwrap();
//! let version = store.commit("chat-1", version, &stored.conversation, from).await?;
//!
//! // Read back: exactly the conversation that was stored.
//! let revived = store.load("chat-1").await?;
//! assert_eq!(revived.conversation.log(), stored.conversation.log());
//! assert_eq!(revived.version, version);
//! # Ok::<_, agentix_store::StoreError>(())
//! # }).unwrap();
//! ```

mod approvals;
mod committer;
mod conversations;
mod journal;
mod lease;
mod model_calls;
mod schema;
mod sessions;

use std::borrow::Cow;
use std::time::Duration;

use sqlx::AnyPool;
use sqlx::any::AnyPoolOptions;
use sqlx::{AssertSqlSafe, Executor};

pub use approvals::WaitingApproval;
pub use committer::Committer;
pub use conversations::{Stored, Version};
pub use journal::StoreJournal;
pub use lease::{Lease, Waiting};
pub use model_calls::AuditRecord;
pub use schema::SCHEMA_VERSION;
pub use sessions::{StoredSession, StoredTask, TaskState};

/// A store of conversations over SQLite or PostgreSQL.
#[derive(Clone, Debug)]
pub struct Store {
    pool: AnyPool,
    dialect: Dialect,
}

/// Which database a store speaks to: what its SQL's placeholders and transactions look like.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Dialect {
    Sqlite,
    Postgres,
}

impl Dialect {
    /// Begins a transaction that writes: SQLite takes its write lock at once (`BEGIN
    /// IMMEDIATE`), so two writers queue at the start instead of one failing at its first
    /// write; PostgreSQL locks the rows a statement updates.
    pub(crate) async fn begin(
        self,
        pool: &AnyPool,
    ) -> Result<sqlx::Transaction<'static, sqlx::Any>, sqlx::Error> {
        match self {
            Dialect::Sqlite => pool.begin_with("BEGIN IMMEDIATE").await,
            Dialect::Postgres => pool.begin().await,
        }
    }

    /// Begins a transaction that reads one snapshot of the store: a conversation's row and its
    /// entries as one commit left them, whatever another writer commits meanwhile.
    pub(crate) async fn begin_read(
        self,
        pool: &AnyPool,
    ) -> Result<sqlx::Transaction<'static, sqlx::Any>, sqlx::Error> {
        match self {
            // In WAL mode a read transaction keeps the snapshot of its first read.
            Dialect::Sqlite => pool.begin_with("BEGIN").await,
            Dialect::Postgres => {
                pool.begin_with("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY").await
            }
        }
    }
}

/// `text` with `?` placeholders, as `dialect` writes them: PostgreSQL numbers them (`$1`, `$2`,
/// …). Only this crate's own statements go through it: no text from outside reaches SQL.
pub(crate) fn sql(dialect: Dialect, text: &'static str) -> AssertSqlSafe<Cow<'static, str>> {
    match dialect {
        Dialect::Sqlite => AssertSqlSafe(Cow::Borrowed(text)),
        Dialect::Postgres => {
            let mut numbered = String::with_capacity(text.len() + 8);
            for (count, part) in text.split('?').enumerate() {
                if count > 0 {
                    numbered.push('$');
                    numbered.push_str(&count.to_string());
                }
                numbered.push_str(part);
            }
            AssertSqlSafe(Cow::Owned(numbered))
        }
    }
}

/// How long SQLite waits for another connection's write lock before it gives up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

impl Store {
    /// Opens the store at `url` and brings its tables up to date: `sqlite://path/to/file.db`
    /// (created if missing), `sqlite::memory:`, or `postgres://user@host/database` (with the
    /// `postgres` feature). SQLite runs in WAL mode with a busy timeout, so readers never wait
    /// for a writer and writers queue rather than fail.
    pub async fn open(url: &str) -> Result<Store, StoreError> {
        sqlx::any::install_default_drivers();
        let dialect = if url.starts_with("sqlite:") {
            Dialect::Sqlite
        } else if url.starts_with("postgres:") || url.starts_with("postgresql:") {
            Dialect::Postgres
        } else {
            return Err(StoreError::UnknownUrl { url: redacted(url) });
        };
        let mut options = AnyPoolOptions::new();
        let mut url = Cow::Borrowed(url);
        if dialect == Dialect::Sqlite {
            if url.contains(":memory:") {
                // Each connection to `:memory:` would be a database of its own.
                options = options.max_connections(1);
            } else if !url.contains("mode=") {
                let separator = if url.contains('?') { '&' } else { '?' };
                url = Cow::Owned(format!("{url}{separator}mode=rwc"));
            }
            let pragmas = format!(
                "PRAGMA journal_mode = WAL; PRAGMA busy_timeout = {}; PRAGMA foreign_keys = ON;",
                BUSY_TIMEOUT.as_millis()
            );
            options = options.after_connect(move |connection, _| {
                let pragmas = pragmas.clone();
                Box::pin(async move {
                    connection.execute(AssertSqlSafe(pragmas)).await?;
                    Ok(())
                })
            });
        }
        let pool = options.connect(&url).await?;
        schema::migrate(&pool, dialect).await?;
        Ok(Store { pool, dialect })
    }

    /// Whether the database answers: a round trip on one of the store's connections (what a
    /// readiness probe asks).
    pub async fn ping(&self) -> Result<(), StoreError> {
        sqlx::query("SELECT 1").execute(&self.pool).await?;
        Ok(())
    }

    /// Closes the store's connections, waiting for those in use.
    pub async fn close(&self) {
        self.pool.close().await;
    }
}

/// What went wrong in the store. A stored row that cannot be read is named by its
/// conversation and `seq`; nothing is deleted or rewritten to make a conversation load.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// Another writer committed to the conversation since it was loaded: its version moved.
    /// Load it again and go on from there; nothing of this commit was written.
    #[error(
        "conversation `{conversation}` changed since it was loaded: version {expected} expected, {found} found"
    )]
    Conflict {
        /// The conversation.
        conversation: String,
        /// The version the commit was made against.
        expected: Version,
        /// The version the store holds.
        found: Version,
    },
    /// Another worker holds the conversation's lease ([`Store::lease`]), past the wait asked
    /// for.
    #[error("conversation `{conversation}` is leased to `{holder}` for {for_ms} ms more")]
    Leased {
        /// The conversation.
        conversation: String,
        /// Who holds the lease.
        holder: String,
        /// How much longer it holds it, unless released first.
        for_ms: i64,
    },
    /// No conversation of that id is stored.
    #[error("no conversation `{conversation}` is stored")]
    NotFound {
        /// The id asked for.
        conversation: String,
    },
    /// A conversation of that id is already stored.
    #[error("conversation `{conversation}` is already stored")]
    AlreadyExists {
        /// The id.
        conversation: String,
    },
    /// A stored entry does not decode.
    #[error(
        "conversation `{conversation}`, entry {seq}: the stored entry does not decode: {message}"
    )]
    CorruptEntry {
        /// The conversation.
        conversation: String,
        /// The entry's position in the log.
        seq: u64,
        /// What the decoder said.
        message: String,
    },
    /// A stored conversation's own fields (config, scope) do not decode.
    #[error("conversation `{conversation}`: its stored {field} does not decode: {message}")]
    CorruptConversation {
        /// The conversation.
        conversation: String,
        /// Which field.
        field: &'static str,
        /// What the decoder said.
        message: String,
    },
    /// A stored approval's call does not decode.
    #[error(
        "conversation `{conversation}`, approval at entry {seq}: the stored call does not decode: {message}"
    )]
    CorruptApproval {
        /// The conversation.
        conversation: String,
        /// The position in the log of the suspended step that waits for it.
        seq: u64,
        /// What the decoder said.
        message: String,
    },
    /// A stored model call's request or response does not decode.
    #[error(
        "conversation `{conversation}`, model call {seq}: the stored call does not decode: {message}"
    )]
    CorruptModelCall {
        /// The conversation.
        conversation: String,
        /// The call's place among the conversation's calls.
        seq: u64,
        /// What the decoder said.
        message: String,
    },
    /// A turn's stored journal has a gap.
    #[error("conversation `{conversation}`, turn {turn}: the stored journal is damaged: {message}")]
    CorruptJournal {
        /// The conversation.
        conversation: String,
        /// The turn.
        turn: u64,
        /// What is wrong.
        message: String,
    },
    /// No session of that id is stored.
    #[error("no session `{session}` is stored")]
    SessionNotFound {
        /// The id asked for.
        session: String,
    },
    /// A stored session's rows do not make a session.
    #[error("session `{session}`: the stored session is damaged: {message}")]
    CorruptSession {
        /// The session.
        session: String,
        /// What is wrong.
        message: String,
    },
    /// The stored log has a gap: an entry is missing.
    #[error("conversation `{conversation}`: entry {seq} is missing from the stored log")]
    MissingEntry {
        /// The conversation.
        conversation: String,
        /// The first position with no entry.
        seq: u64,
    },
    /// The stored log decodes but breaks a rule of a conversation's log.
    #[error("conversation `{conversation}`: {source}")]
    InvalidLog {
        /// The conversation.
        conversation: String,
        /// The entry that breaks the rule.
        seq: u64,
        /// The rule.
        source: agentix::conversation::InvalidLog,
    },
    /// The entries to commit do not continue the stored log from where it ends.
    #[error(
        "conversation `{conversation}`: the commit starts at entry {from}, but the stored log has {stored}"
    )]
    NotContinuous {
        /// The conversation.
        conversation: String,
        /// Where the commit's entries start.
        from: u64,
        /// How many entries are stored.
        stored: u64,
    },
    /// The store was written by a newer agentix: its schema is from the future.
    #[error("the store's schema is version {found}; this agentix-store reads up to {supported}")]
    SchemaFromTheFuture {
        /// The store's schema version.
        found: i64,
        /// The newest this crate reads.
        supported: i64,
    },
    /// The URL names no database this store speaks.
    #[error("`{url}` is not a store URL: expected sqlite://…, sqlite::memory: or postgres://…")]
    UnknownUrl {
        /// The URL given, its password masked ([`redacted`]).
        url: String,
    },
    /// A value could not be written as JSON.
    #[error("{what} could not be written: {message}")]
    Encode {
        /// What.
        what: &'static str,
        /// Why.
        message: String,
    },
    /// The database failed.
    #[error("the database failed: {0}")]
    Database(#[from] sqlx::Error),
}

/// `url` with its password masked (`postgres://app:***@db/chats`, `…?password=***`): what to
/// print or log of a store's URL.
///
/// ```
/// assert_eq!(
///     agentix_store::redacted("postgres://app:s3cret@db:5432/chats?sslmode=require"),
///     "postgres://app:***@db:5432/chats?sslmode=require"
/// );
/// assert_eq!(agentix_store::redacted("postgres://db/chats?password=s3cret"), "postgres://db/chats?password=***");
/// assert_eq!(agentix_store::redacted("sqlite://chats.db"), "sqlite://chats.db");
/// ```
pub fn redacted(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let authority = match authority.rsplit_once('@') {
        Some((user, host)) => match user.split_once(':') {
            Some((name, _password)) => format!("{name}:***@{host}"),
            None => authority.to_owned(),
        },
        None => authority.to_owned(),
    };
    let tail = match tail.split_once('?') {
        Some((path, query)) => {
            let query: Vec<String> = query
                .split('&')
                .map(|pair| match pair.split_once('=') {
                    Some((key, _)) if key.eq_ignore_ascii_case("password") => format!("{key}=***"),
                    _ => pair.to_owned(),
                })
                .collect();
            format!("{path}?{}", query.join("&"))
        }
        None => tail.to_owned(),
    };
    if scheme.is_empty() && !url.contains("://") {
        return format!("{authority}{tail}");
    }
    format!("{scheme}://{authority}{tail}")
}

/// A count as the databases' BIGINT holds it (saturating: no count reaches it).
pub(crate) fn to_i64(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

/// A BIGINT read back as a count (a negative one, which only a bad hand writes, as 0).
pub(crate) fn to_u64(value: i64) -> u64 {
    u64::try_from(value).unwrap_or(0)
}
