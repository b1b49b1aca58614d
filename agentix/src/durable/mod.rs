//! Keeping a turn through a crash: a [`Commit`] stores each step as it joins the log, so a
//! process that dies mid-turn loses at most the step it was in; a [`Journal`] records each
//! effect of a turn, so that the turn run again replays what completed instead of doing it twice.

mod commit;
mod journal;

pub use commit::{Commit, CommitError, ModelCall};
pub(crate) use journal::JournalDyn;
pub use journal::{Journal, JournalError, JournalStep, replay_recorded};
