//! Running a future inside a span: entered at each poll, so that what the future does — a
//! model's own spans, a tool's logs, a sub-agent's turn — nests under it.

use std::future::Future;
use std::pin::Pin;
use std::sync::OnceLock;
use std::task::{Context, Poll};

use futures::Stream;
use tracing::Span;

pin_project_lite::pin_project! {
    /// A future polled with its span entered, if it has one.
    pub(crate) struct Within<'s, F> {
        #[pin]
        future: F,
        span: Option<&'s Span>,
    }
}

impl<'s, F> Within<'s, F> {
    #[inline]
    pub(crate) fn new(span: Option<&'s Span>, future: F) -> Self {
        Within { future, span }
    }
}

impl<F: Future> Future for Within<'_, F> {
    type Output = F::Output;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.project();
        match this.span {
            Some(span) => {
                let _entered = span.enter();
                this.future.poll(cx)
            }
            None => this.future.poll(cx),
        }
    }
}

impl<S: Stream> Stream for Within<'_, S> {
    type Item = S::Item;

    #[inline]
    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
        let this = self.project();
        match this.span {
            Some(span) => {
                let _entered = span.enter();
                this.future.poll_next(cx)
            }
            None => this.future.poll_next(cx),
        }
    }
}

pin_project_lite::pin_project! {
    /// A future polled inside the span `open` makes when it is first polled, kept in `slot`
    /// for the caller to record the outcome on and close. A future never polled — a call a
    /// journal replays — opens no span; one made without `open` (the turn is not traced)
    /// checks nothing.
    pub(crate) struct Traced<'s, F, M> {
        #[pin]
        future: F,
        slot: &'s OnceLock<Span>,
        open: Option<M>,
        traced: bool,
    }
}

impl<'s, F, M: FnOnce() -> Span> Traced<'s, F, M> {
    #[inline]
    pub(crate) fn new(slot: &'s OnceLock<Span>, open: Option<M>, future: F) -> Self {
        let traced = open.is_some();
        Traced { future, slot, open, traced }
    }
}

impl<F: Future, M: FnOnce() -> Span> Future for Traced<'_, F, M> {
    type Output = F::Output;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.project();
        if !*this.traced {
            return this.future.poll(cx);
        }
        if let Some(open) = this.open.take() {
            let _ = this.slot.get_or_init(open);
        }
        match this.slot.get() {
            Some(span) => {
                let _entered = span.enter();
                this.future.poll(cx)
            }
            None => this.future.poll(cx),
        }
    }
}
