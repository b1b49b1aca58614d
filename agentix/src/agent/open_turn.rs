//! The turn in progress, which hands the conversation back however the turn ends.

use std::mem;
use std::ops::{Deref, DerefMut};

use crate::conversation::{Conversation, Entry};
use crate::message::Message;
use crate::turn::Turn;

/// The turn in progress, owning the conversation it borrowed. However the turn ends — returned,
/// failed, or dropped midway — the conversation goes back to the caller with every committed
/// entry; a dropped turn also records that it was cancelled.
pub(super) struct OpenTurn<'c> {
    home: &'c mut Conversation,
    turn: Turn,
    finished: bool,
}

impl<'c> OpenTurn<'c> {
    pub(super) fn open(home: &'c mut Conversation, message: Message) -> Self {
        let turn = Turn::open(mem::take(home), message);
        OpenTurn { home, turn, finished: false }
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
            let error = "the turn was cancelled before it ended".to_owned();
            self.turn.append(Entry::Failed { turn: self.turn.turn_ref(), error });
        }
        // The conversation goes home; the turn keeps the empty one `open` left there.
        self.turn.swap_conversation(self.home);
    }
}
