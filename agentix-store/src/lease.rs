//! Leases: the policy of waiting, for workers that would rather queue behind a turn running on
//! a conversation than lose the race to commit. The version check keeps the log whole either
//! way; a lease only decides who runs first.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::{Store, StoreError, sql};

/// A conversation's lease, held by one worker until it is released or runs out. Take it
/// before loading the conversation and running a turn, release it after; a worker that dies
/// holding it holds it until it runs out.
#[derive(Debug)]
#[must_use = "a lease is held until released or it runs out"]
pub struct Lease<'s> {
    store: &'s Store,
    conversation: String,
    owner: String,
}

/// How long to wait for a lease another worker holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Waiting {
    /// Not at all: [`StoreError::Leased`] at once.
    No,
    /// Up to this long, then [`StoreError::Leased`].
    UpTo(Duration),
}

impl Store {
    /// Takes the lease on conversation `id` for `owner`, for `ttl`: granted if nobody holds it,
    /// its holder's ran out, or `owner` holds it already (then it is renewed). Held by another
    /// worker, it is waited for as `waiting` says. Expiry is by the workers' clocks: keep them
    /// in step, and `ttl` well above the longest turn.
    pub async fn lease(
        &self,
        id: &str,
        owner: &str,
        ttl: Duration,
        waiting: Waiting,
    ) -> Result<Lease<'_>, StoreError> {
        let deadline = match waiting {
            Waiting::No => None,
            Waiting::UpTo(patience) => Some(tokio::time::Instant::now() + patience),
        };
        let mut pause = Duration::from_millis(5);
        loop {
            let now = now_ms();
            let granted = sqlx::query(sql(
                self.dialect,
                "UPDATE conversations SET lease_owner = ?, lease_until = ? WHERE id = ? \
                 AND (lease_owner IS NULL OR lease_until < ? OR lease_owner = ?)",
            ))
            .bind(owner)
            .bind(now.saturating_add(i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX)))
            .bind(id)
            .bind(now)
            .bind(owner)
            .execute(&self.pool)
            .await?;
            if granted.rows_affected() == 1 {
                let (conversation, owner) = (id.to_owned(), owner.to_owned());
                return Ok(Lease { store: self, conversation, owner });
            }
            let holder: Option<(Option<String>, Option<i64>)> = sqlx::query_as(sql(
                self.dialect,
                "SELECT lease_owner, lease_until FROM conversations WHERE id = ?",
            ))
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
            let Some((holder, until)) = holder else {
                return Err(StoreError::NotFound { conversation: id.to_owned() });
            };
            let out_of_patience =
                deadline.is_none_or(|deadline| tokio::time::Instant::now() + pause > deadline);
            if out_of_patience {
                return Err(StoreError::Leased {
                    conversation: id.to_owned(),
                    holder: holder.unwrap_or_default(),
                    for_ms: until.map_or(0, |until| until.saturating_sub(now).max(0)),
                });
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(Duration::from_millis(100));
        }
    }
}

impl Lease<'_> {
    /// The conversation it is on.
    pub fn conversation(&self) -> &str {
        &self.conversation
    }

    /// Gives the lease back: the next worker waiting takes it. A lease that ran out and was
    /// taken by another worker is left to that worker.
    pub async fn release(self) -> Result<(), StoreError> {
        sqlx::query(sql(
            self.store.dialect,
            "UPDATE conversations SET lease_owner = NULL, lease_until = NULL \
             WHERE id = ? AND lease_owner = ?",
        ))
        .bind(&self.conversation)
        .bind(&self.owner)
        .execute(&self.store.pool)
        .await?;
        Ok(())
    }
}

/// Milliseconds since the Unix epoch, by this worker's clock.
fn now_ms() -> i64 {
    let since = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    i64::try_from(since.as_millis()).unwrap_or(i64::MAX)
}
