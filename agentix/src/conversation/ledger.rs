//! The ledger: what the agent knows of the log's size, kept with the conversation between
//! turns, so that a turn's work depends on what it sends, not on how long the log is.

use std::fmt;
use std::num::{NonZeroU64, NonZeroUsize};
use std::ops::Range;

use crate::message::Message;

use super::{Entry, TurnRef};

/// Each log entry's tokens, counted once — when the first request after its append (or after
/// the conversation was loaded) is rendered — kept as a running total; and, from the first
/// request that has to be planned on, the total at each entry and where each turn starts (a
/// conversation that always fits never needs them, nor pays for them). It belongs to the
/// counter that counted it: another counter starts it over. Not stored: a loaded conversation
/// counts its log once, on its first turn.
#[derive(Default)]
pub(crate) struct Ledger {
    /// The key of the counter that counted it.
    counter: Option<NonZeroU64>,
    /// How many of the log's first entries are counted, and their tokens.
    counted: usize,
    total: usize,
    /// The latest summary counted: its index in the log (never 0, a user message's).
    summary: Option<NonZeroUsize>,
    /// Boxed: the ledger moves with every turn, and most conversations never need it.
    itemized: Option<Box<Itemized>>,
}

/// The ledger entry by entry, for planning.
#[derive(Default)]
struct Itemized {
    /// `totals[i]`: the tokens of the log's first `i` entries; one more than the entries
    /// counted.
    totals: Vec<usize>,
    /// Where each turn's entries start, oldest first.
    turn_starts: Vec<usize>,
    /// The turn of the last entry counted.
    last_turn: Option<TurnRef>,
}

impl Itemized {
    fn push(&mut self, index: usize, turn: TurnRef, total: usize) {
        if self.last_turn != Some(turn) {
            self.turn_starts.push(index);
            self.last_turn = Some(turn);
        }
        self.totals.push(total);
    }
}

impl fmt::Debug for Ledger {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Ledger")
            .field("counted", &self.counted)
            .field("tokens", &self.total)
            .field("itemized", &self.itemized.is_some())
            .finish()
    }
}

impl Ledger {
    /// Readies the ledger for the counter whose key is `counter`: one it was not counted by
    /// starts over.
    #[inline]
    pub(crate) fn count_with(&mut self, counter: NonZeroU64) {
        if self.counter != Some(counter) {
            *self = Ledger { counter: Some(counter), ..Ledger::default() };
        }
    }

    /// How many of the log's first entries are counted.
    #[inline]
    pub(crate) fn counted(&self) -> usize {
        self.counted
    }

    /// The tokens of the entries counted.
    #[inline]
    pub(crate) fn total(&self) -> usize {
        self.total
    }

    /// Counts the next entry, `entry`, of `tokens` tokens (its message's, by the counter whose
    /// key is `counter`, the one [`count_with`](Ledger::count_with) was given; none if it has
    /// no message).
    #[inline]
    pub(crate) fn push(&mut self, entry: &Entry, tokens: usize, counter: NonZeroU64) {
        debug_assert_eq!(self.counter, Some(counter), "count_with comes first");
        self.total += tokens;
        if let Entry::Summary { .. } = entry {
            self.summary = NonZeroUsize::new(self.counted);
        }
        if let Some(itemized) = &mut self.itemized {
            itemized.push(self.counted, entry.turn(), self.total);
        }
        self.counted += 1;
    }

    /// The latest summary among the entries counted: its index in the log.
    #[inline]
    pub(crate) fn summary(&self) -> Option<usize> {
        self.summary.map(NonZeroUsize::get)
    }

    /// Counts every entry of `log` not counted yet, its message's tokens by `count` (the
    /// counter whose key is `counter`), keeping each entry's total from now on: the entries
    /// counted before are counted again, this once.
    pub(crate) fn itemize(
        &mut self,
        log: &[Entry],
        counter: NonZeroU64,
        mut count: impl FnMut(&Message) -> usize,
    ) {
        if self.itemized.is_none() {
            let itemized = Box::new(Itemized { totals: vec![0], ..Itemized::default() });
            *self = Ledger { counter: self.counter, itemized: Some(itemized), ..Ledger::default() };
        }
        for entry in &log[self.counted..] {
            let tokens = entry.to_message().as_ref().map_or(0, &mut count);
            self.push(entry, tokens, counter);
        }
    }

    fn itemized(&self) -> &Itemized {
        let Some(itemized) = &self.itemized else {
            unreachable!("the planner itemizes the ledger first");
        };
        itemized
    }

    /// The tokens of the entries in `range`, all counted, of an itemized ledger.
    #[inline]
    pub(crate) fn tokens(&self, range: Range<usize>) -> usize {
        let totals = &self.itemized().totals;
        totals[range.end] - totals[range.start]
    }

    /// Where each turn whose entries start before `end` starts, oldest first, of an itemized
    /// ledger.
    pub(crate) fn turns_before(&self, end: usize) -> &[usize] {
        let starts = &self.itemized().turn_starts;
        &starts[..starts.partition_point(|&start| start < end)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::AssistantMessage;

    fn key(n: u64) -> NonZeroU64 {
        NonZeroU64::new(n).unwrap()
    }

    /// Two turns: a question and its answer each, and a summary opening the second.
    fn log() -> Vec<Entry> {
        vec![
            Entry::User { turn: TurnRef(1), message: Message::user("one"), task: None },
            Entry::Assistant { turn: TurnRef(1), message: AssistantMessage::text("two") },
            Entry::User { turn: TurnRef(2), message: Message::user("three"), task: None },
            Entry::Summary { turn: TurnRef(2), through: 2, text: "four".into() },
            Entry::Assistant { turn: TurnRef(2), message: AssistantMessage::text("five") },
        ]
    }

    #[test]
    fn entries_are_counted_once_and_a_new_counter_starts_over() {
        let mut ledger = Ledger::default();
        ledger.count_with(key(1));
        ledger.push(&log()[0], 3, key(1));
        ledger.push(&log()[1], 4, key(1));
        assert_eq!((ledger.counted(), ledger.total(), ledger.summary()), (2, 7, None));
        ledger.count_with(key(1));
        assert_eq!(ledger.total(), 7, "the same counter keeps what it counted");
        ledger.count_with(key(2));
        assert_eq!((ledger.counted(), ledger.total()), (0, 0), "another counter starts over");
    }

    #[test]
    fn an_itemized_ledger_knows_each_entrys_total_and_each_turns_start() {
        let log = log();
        let mut ledger = Ledger::default();
        ledger.count_with(key(1));
        ledger.push(&log[0], 100, key(1));
        // Itemizing counts again, by the count given, every entry from the first.
        ledger.itemize(&log, key(1), |message| message.text().len());
        assert_eq!(ledger.counted(), 5);
        // "one" 3, "two" 3, "three" 5, "four" 4 (a summary is its text), "five" 4.
        assert_eq!(ledger.tokens(0..5), ledger.total());
        assert_eq!(ledger.tokens(0..2), 6);
        assert_eq!(ledger.tokens(2..3), 5);
        assert_eq!(ledger.turns_before(5), [0, 2]);
        assert_eq!(ledger.turns_before(2), [0]);
        assert_eq!(ledger.summary(), Some(3));
    }
}
