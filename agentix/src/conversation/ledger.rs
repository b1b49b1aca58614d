//! The ledger: what the agent knows of the log's size, kept with the conversation between
//! turns, so that a turn's work depends on what it sends, not on how long the log is.

use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use crate::context::TokenCounter;
use crate::message::Message;

use super::{Entry, TurnRef};

/// Each log entry's tokens, counted once — when the first request after its append (or after
/// the conversation was loaded) is rendered — kept as a running total; and where each turn's
/// entries start. It belongs to the counter that counted it: another counter starts it over.
/// Not stored: a loaded conversation counts its log once, on its first turn.
#[derive(Default)]
pub(crate) struct Ledger {
    counter: Option<Arc<dyn TokenCounter>>,
    /// `totals[i]`: the tokens of the log's first `i` entries; one more than the entries
    /// counted.
    totals: Vec<usize>,
    /// Where each turn's entries start, oldest first.
    turn_starts: Vec<usize>,
    /// The turn of the last entry counted.
    last_turn: Option<TurnRef>,
    /// The latest summary counted: its index in the log.
    summary: Option<usize>,
}

impl fmt::Debug for Ledger {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Ledger")
            .field("counted", &self.counted())
            .field("tokens", &self.totals.last().copied().unwrap_or(0))
            .field("turns", &self.turn_starts.len())
            .finish()
    }
}

impl Ledger {
    /// Readies the ledger for `counter`: one it was not counted by starts over.
    #[inline]
    pub(crate) fn count_with(&mut self, counter: &Arc<dyn TokenCounter>) {
        let same = self.counter.as_ref().is_some_and(|kept| Arc::ptr_eq(kept, counter));
        if !same {
            *self = Ledger {
                counter: Some(Arc::clone(counter)),
                totals: vec![0],
                turn_starts: Vec::new(),
                last_turn: None,
                summary: None,
            };
        }
    }

    /// How many of the log's first entries are counted.
    #[inline]
    pub(crate) fn counted(&self) -> usize {
        self.totals.len().saturating_sub(1)
    }

    /// Counts the next entry, `entry`, whose message (if any) is `message`.
    #[inline]
    pub(crate) fn push(&mut self, entry: &Entry, message: Option<&Message>) {
        let Some(counter) = &self.counter else {
            unreachable!("count_with comes first");
        };
        let tokens = message.map_or(0, |message| counter.count_message(message));
        let turn = entry.turn();
        if self.last_turn != Some(turn) {
            self.turn_starts.push(self.counted());
            self.last_turn = Some(turn);
        }
        if let Entry::Summary { .. } = entry {
            self.summary = Some(self.counted());
        }
        let total = self.totals.last().copied().unwrap_or(0) + tokens;
        self.totals.push(total);
    }

    /// The latest summary among the entries counted: its index in the log.
    #[inline]
    pub(crate) fn summary(&self) -> Option<usize> {
        self.summary
    }

    /// Counts every entry of `log` not counted yet.
    pub(crate) fn catch_up(&mut self, log: &[Entry]) {
        for entry in &log[self.counted()..] {
            self.push(entry, entry.to_message().as_ref());
        }
    }

    /// The tokens of the entries in `range`, all counted.
    #[inline]
    pub(crate) fn tokens(&self, range: Range<usize>) -> usize {
        self.totals[range.end] - self.totals[range.start]
    }

    /// Where each turn whose entries start before `end` starts, oldest first.
    pub(crate) fn turns_before(&self, end: usize) -> &[usize] {
        let before = self.turn_starts.partition_point(|&start| start < end);
        &self.turn_starts[..before]
    }
}
