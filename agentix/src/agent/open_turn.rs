//! The turn in progress, which hands the conversation back however the turn ends.

use std::mem;
use std::ops::{Deref, DerefMut};

use crate::approval::TurnState;
use crate::conversation::{Conversation, Entry, TurnRef};
use crate::message::Message;
use crate::task::TaskContext;
use crate::turn::Turn;

use super::step::StepSlot;

/// The turn in progress, owning the conversation it borrowed. However the turn ends — returned,
/// failed, or dropped midway — the conversation goes back to the caller with every appended
/// entry; a dropped turn also records that it was cancelled.
pub(super) struct OpenTurn<'c> {
    home: &'c mut Conversation,
    pub(super) turn: Turn,
    /// A step the loop's future was running when it was dropped: appended from here.
    pub(super) step: StepSlot,
    finished: bool,
}

impl<'c> OpenTurn<'c> {
    pub(super) fn open(
        home: &'c mut Conversation,
        message: Message,
        task: Option<Box<TaskContext>>,
    ) -> Self {
        let turn = Turn::open(mem::take(home), message, task);
        OpenTurn { home, turn, step: StepSlot::default(), finished: false }
    }

    /// Reopens the suspended turn `turn_ref`, whose resumption `home`'s log ends with.
    pub(super) fn reopen(home: &'c mut Conversation, turn_ref: TurnRef, state: TurnState) -> Self {
        let turn = Turn::reopen(mem::take(home), turn_ref, state);
        OpenTurn { home, turn, step: StepSlot::default(), finished: false }
    }

    /// Commits the step the loop's future left behind, if it was dropped midway through one;
    /// `reason` answers the calls that did not run.
    pub(super) fn append_left_step(&mut self, reason: &str) {
        let left = self.step.get_mut().unwrap_or_else(|poisoned| poisoned.into_inner()).take();
        if let Some(step) = left {
            step.append(&mut self.turn, reason);
        }
    }

    /// Marks the turn ended, so dropping it records no cancellation. By reference: moving the
    /// turn out to consume it would copy all of it.
    pub(super) fn finish(&mut self) {
        self.finished = true;
    }
}

impl Deref for OpenTurn<'_> {
    type Target = Turn;

    fn deref(&self) -> &Turn {
        &self.turn
    }
}

impl DerefMut for OpenTurn<'_> {
    fn deref_mut(&mut self) -> &mut Turn {
        &mut self.turn
    }
}

impl Drop for OpenTurn<'_> {
    fn drop(&mut self) {
        if !self.finished {
            self.append_left_step("the turn was cancelled");
            let error = "the turn was cancelled before it ended".to_owned();
            if let Some(trace) = &self.turn.trace {
                crate::trace::turn_cancelled(trace, &error);
            }
            self.turn.append(Entry::Failed { turn: self.turn.turn_ref(), error });
        }
        // The conversation goes home; the turn keeps the empty one `open` left there.
        self.turn.swap_conversation(self.home);
    }
}
