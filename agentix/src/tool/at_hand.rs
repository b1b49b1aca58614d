//! The tool call at hand, for what a [`Turn`] answers per call ([`Turn::tool_call_id`],
//! [`Turn::tool_origin`]): a step's calls run together over one `&Turn`, so what belongs to
//! one of them is put at hand around each poll of that call's future, on the thread that polls
//! it, and read back only by the turn it was put there for.

use std::cell::RefCell;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use pin_project_lite::pin_project;

use super::spec::ToolOrigin;
use crate::turn::Turn;

thread_local! {
    /// The calls at hand on this thread, innermost last: a sub-agent's call is polled inside
    /// its parent's.
    static AT_HAND: RefCell<Vec<(usize, Arc<CallAtHand>)>> = const { RefCell::new(Vec::new()) };
}

/// What one call's code may ask of its turn: the call's id (given only to a tool that asked,
/// [`Tool::WANTS_CALL_ID`](crate::Tool::WANTS_CALL_ID)) and where its tool comes from.
pub(crate) struct CallAtHand {
    id: Option<Box<str>>,
    origin: Option<Arc<ToolOrigin>>,
}

impl CallAtHand {
    /// The call's id, if its tool asked for it.
    pub(crate) fn id(&self) -> Option<&str> {
        self.id.as_deref()
    }

    /// Where the call's tool comes from, if its tool set knows.
    pub(crate) fn origin(&self) -> Option<&Arc<ToolOrigin>> {
        self.origin.as_ref()
    }
}

/// A call of one turn, to put at hand while its future is polled.
pub(crate) struct AtHand {
    /// The turn whose call this is, by address: a sub-agent's turn, polled inside its parent's
    /// call, reads its own calls only.
    turn: usize,
    call: Arc<CallAtHand>,
}

impl AtHand {
    /// `turn`'s call with the id `id` (for a tool that asked for it) and the tool's origin.
    pub(crate) fn new(turn: &Turn, id: Option<&str>, origin: Option<Arc<ToolOrigin>>) -> Self {
        let call = CallAtHand { id: id.map(Box::from), origin };
        AtHand { turn: turn_address(turn), call: Arc::new(call) }
    }

    /// Runs `future` with this call at hand.
    pub(crate) fn scope<F: Future>(self, future: F) -> InCall<F> {
        InCall { future, at_hand: self }
    }

    /// What `read` finds in `turn`'s innermost call at hand that holds it, if one is being
    /// polled on this thread.
    pub(crate) fn read<T>(turn: &Turn, read: impl Fn(&CallAtHand) -> Option<T>) -> Option<T> {
        let turn = turn_address(turn);
        AT_HAND.with_borrow(|calls| {
            calls.iter().rev().filter(|(of, _)| *of == turn).find_map(|(_, call)| read(call))
        })
    }
}

fn turn_address(turn: &Turn) -> usize {
    std::ptr::from_ref(turn) as usize
}

pin_project! {
    /// A call's future, polled with its call at hand.
    pub(crate) struct InCall<F> {
        #[pin]
        future: F,
        at_hand: AtHand,
    }
}

/// Takes the call back off the thread when dropped: after the poll, or as it unwinds.
struct PutBack;

impl Drop for PutBack {
    fn drop(&mut self) {
        AT_HAND.with_borrow_mut(Vec::pop);
    }
}

impl<F: Future> Future for InCall<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.project();
        let at_hand = (this.at_hand.turn, Arc::clone(&this.at_hand.call));
        AT_HAND.with_borrow_mut(|calls| calls.push(at_hand));
        let _put_back = PutBack;
        this.future.poll(cx)
    }
}
