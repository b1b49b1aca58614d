//! The journal in the store: each effect of a turn in flight recorded as it completes, so that
//! a turn run again after a crash — on any worker — replays what completed instead of doing it
//! twice. The turn's entries are committed when it ends ([`Store::finish_turn`]), with its
//! journal dropped in the same transaction.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Mutex;

use agentix::{
    Conversation, Entry,
    durable::{Journal, JournalError, JournalStep, replay_recorded},
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use sqlx::Row;

use crate::{Store, StoreError, Stored, Version, sql, to_i64};

/// The journal of a conversation's turn in flight: made by [`Store::journal`], given to one
/// [`TurnRun::journal`](agentix::TurnRun::journal) or
/// [`Agent::resume`](agentix::Agent::resume) with `.journal(...)`. Each step is written as it completes,
/// in a transaction of its own. Finish every journaled turn with [`Store::finish_turn`],
/// however it ended — a failed turn included: until then, the next run of the conversation
/// replays it (and diverges if it opens with another message).
#[derive(Debug)]
pub struct StoreJournal<'s> {
    store: &'s Store,
    conversation: String,
    turn: u64,
    /// Which part of the turn: 0 until it is suspended, then one more for each resumption.
    part: u64,
    /// What a process before this one recorded, by lane ([`JournalStep::lane`], written as
    /// its JSON: `[]` for the turn's own steps): each lane replayed in its order, whatever
    /// order the lanes interleaved in.
    recorded: HashMap<String, Lane>,
    /// Each lane's next place.
    next: Mutex<HashMap<String, usize>>,
    /// Whether the turn was recorded before journals had lanes (schema 2, its rows migrated to
    /// the lane `''`): it goes on as it was recorded, its steps in one order, its calls one at
    /// a time.
    legacy: bool,
}

/// The steps recorded in one lane: the calls it is made in, and each step with its outcome.
#[derive(Debug, Default)]
struct Lane {
    calls: Vec<String>,
    steps: Vec<(String, String)>,
}

/// The lane a journal recorded before lanes (schema 2) holds all its steps.
const LEGACY: &str = "";

impl Store {
    /// The journal for what the conversation `id`, as loaded in `stored`, runs next: its next
    /// turn — or, if its log ends with a suspended turn, that turn's resumption. The steps a
    /// process recorded for it before it died are replayed.
    pub async fn journal(&self, id: &str, stored: &Stored) -> Result<StoreJournal<'_>, StoreError> {
        let log = stored.conversation.log();
        let (turn, part) = match stored.conversation.pending_approval() {
            // Each suspension of the turn opens the part its resumption runs in.
            Some((turn, _)) => {
                let parts = log
                    .iter()
                    .filter(|entry| matches!(entry, Entry::Suspended { turn: t, .. } if *t == turn))
                    .count();
                (turn.0, parts as u64)
            }
            None => (stored.conversation.turns() + 1, 0),
        };
        let rows = sqlx::query(sql(
            self.dialect,
            "SELECT lane, seq, step, value FROM journal WHERE conversation_id = ? AND turn = ? \
             AND part = ? ORDER BY lane, seq",
        ))
        .bind(id)
        .bind(to_i64(turn))
        .bind(to_i64(part))
        .fetch_all(&self.pool)
        .await?;
        let mut recorded: HashMap<String, Lane> = HashMap::new();
        for row in &rows {
            let key: String = row.try_get("lane")?;
            let seq: i64 = row.try_get("seq")?;
            let corrupt = |message: String| StoreError::CorruptJournal {
                conversation: id.to_owned(),
                turn,
                message,
            };
            let lane = match recorded.entry(key.clone()) {
                std::collections::hash_map::Entry::Occupied(lane) => lane.into_mut(),
                std::collections::hash_map::Entry::Vacant(vacant) => {
                    let calls = match key.as_str() {
                        LEGACY => Vec::new(),
                        key => serde_json::from_str(key)
                            .map_err(|error| corrupt(format!("the lane `{key}`: {error}")))?,
                    };
                    vacant.insert(Lane { calls, steps: Vec::new() })
                }
            };
            if seq != lane.steps.len() as i64 {
                let at = lane.steps.len();
                return Err(corrupt(format!("step {at} of the lane `{key}` is missing")));
            }
            lane.steps.push((row.try_get("step")?, row.try_get("value")?));
        }
        let legacy = recorded.contains_key(LEGACY);
        Ok(StoreJournal {
            store: self,
            conversation: id.to_owned(),
            turn,
            part,
            recorded,
            next: Mutex::default(),
            legacy,
        })
    }

    /// Commits what a journaled turn added to `conversation` past its first `from` entries —
    /// its whole turn, or its part up to a suspension — against `expected`, and drops the
    /// journal of that turn in the same transaction.
    pub async fn finish_turn(
        &self,
        id: &str,
        expected: Version,
        conversation: &Conversation,
        from: usize,
    ) -> Result<Version, StoreError> {
        let turn = conversation.log().last().map_or(0, |entry| entry.turn().0);
        self.commit_with(id, expected, conversation, from, &[], Some(turn)).await
    }
}

impl StoreJournal<'_> {
    /// The steps recorded before this process: what a run with this journal replays, the
    /// turn's own lane first, then each call's, each in its order.
    pub fn recorded(&self) -> impl Iterator<Item = &str> {
        let mut lanes: Vec<(&String, &Lane)> = self.recorded.iter().collect();
        lanes.sort_by_key(|(key, lane)| (lane.calls.len(), *key));
        lanes.into_iter().flat_map(|(_, lane)| lane.steps.iter().map(|(step, _)| step.as_str()))
    }

    /// The next place in `lane`.
    fn place(&self, lane: &str) -> usize {
        self.next
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .get(lane)
            .copied()
            .unwrap_or(0)
    }

    /// The first recorded step, in the lanes of the calls made under `calls` (the lane of a
    /// step made in those calls), that this run has not replayed.
    fn skipped_under(&self, calls: &[&str]) -> Option<&str> {
        let next = self.next.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let under = |lane: &Lane| {
            lane.calls.len() > calls.len() && lane.calls.iter().zip(calls).all(|(a, b)| a == b)
        };
        let mut skipped: Vec<(&String, &str)> = self
            .recorded
            .iter()
            .filter(|(_, lane)| under(lane))
            .filter_map(|(key, lane)| {
                let at = next.get(key.as_str()).copied().unwrap_or(0);
                lane.steps.get(at).map(|(step, _)| (key, step.as_str()))
            })
            .collect();
        skipped.sort();
        skipped.first().map(|(_, step)| *step)
    }

    /// Moves `lane` on past the place `from`, replayed or written.
    fn move_on(&self, lane: &str, from: usize) {
        let mut next = self.next.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        next.insert(lane.to_owned(), from + 1);
    }
}

impl Journal for StoreJournal<'_> {
    fn journal<T, F>(
        &self,
        step: &JournalStep<'_>,
        effect: F,
    ) -> impl Future<Output = Result<T, JournalError>> + Send
    where
        T: Serialize + DeserializeOwned + Send,
        F: Future<Output = T> + Send,
    {
        let asked = step.to_string();
        let calls = step.lane();
        let lane = if self.legacy {
            LEGACY.to_owned()
        } else {
            serde_json::to_string(&calls).unwrap_or_default()
        };
        let other_turn = step.turn().0 != self.turn;
        async move {
            if other_turn {
                let turn = self.turn;
                let message = format!("this journal is turn {turn}'s: take one for each run");
                return Err(JournalError::Failed { step: asked, message });
            }
            // A step moves the journal on only once replayed or written: one whose effect never
            // finished (its run was dropped) leaves no gap, and is asked for again.
            // Within a lane, steps come in one order on every run: the lane's place.
            let at = self.place(&lane);
            if let Some((recorded, value)) =
                self.recorded.get(&lane).and_then(|recorded| recorded.steps.get(at))
            {
                let replayed = replay_recorded(asked, recorded, || serde_json::from_str(value));
                if !matches!(replayed, Err(JournalError::Diverged { .. })) {
                    self.move_on(&lane, at);
                }
                return replayed;
            }
            // A step that runs afresh comes after every step of the calls under its lane (a
            // model call after its step's calls): one of theirs recorded but not asked for is
            // a replay that went another way.
            if let Some(skipped) = self.skipped_under(&calls).filter(|_| !self.legacy) {
                return Err(JournalError::Diverged { recorded: skipped.to_owned(), asked });
            }
            let value = effect.await;
            let failed = |message: String| JournalError::Failed { step: asked.clone(), message };
            let text = serde_json::to_string(&value).map_err(|error| failed(error.to_string()))?;
            sqlx::query(sql(
                self.store.dialect,
                "INSERT INTO journal (conversation_id, turn, part, lane, seq, step, value) \
                 VALUES (?, ?, ?, ?, ?, ?, ?)",
            ))
            .bind(&self.conversation)
            .bind(to_i64(self.turn))
            .bind(to_i64(self.part))
            .bind(&lane)
            .bind(at as i64)
            .bind(&asked)
            .bind(text)
            .execute(&self.store.pool)
            .await
            .map_err(|error| failed(error.to_string()))?;
            self.move_on(&lane, at);
            Ok(value)
        }
    }

    // Each call's steps are a lane of their own: a step's calls run together (but in a turn
    // recorded before lanes, which goes on in the one order it was recorded in).
    fn concurrent_calls(&self) -> bool {
        !self.legacy
    }
}
