//! Running a future inside a span: entered at each poll, so that what the future does — a
//! model's own spans, a tool's logs, a sub-agent's turn — nests under it.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::Stream;
use tracing::Span;

use super::TurnTrace;

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

pin_project_lite::pin_project! {
    /// A call's future — the model's answer, a tool's — polled inside the call's span, which
    /// the turn's trace keeps (an untraced call holds no span), and `open` opens when the
    /// future is first polled: a call a journal replays, never polled, opens none.
    pub(crate) struct Spanned<'t, F, M> {
        #[pin]
        future: F,
        turn: Option<&'t TurnTrace>,
        call: Option<&'t str>,
        open: Option<M>,
    }
}

impl<'t, F, M: FnOnce() -> Span> Spanned<'t, F, M> {
    /// `future` in the span of `call` (`None`: the model's) of `turn`, if it is traced.
    #[inline]
    pub(crate) fn new(
        turn: Option<&'t TurnTrace>,
        call: Option<&'t str>,
        open: Option<M>,
        future: F,
    ) -> Self {
        Spanned { future, turn, call, open }
    }
}

impl<F: Future, M: FnOnce() -> Span> Future for Spanned<'_, F, M> {
    type Output = F::Output;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.project();
        let Some(turn) = this.turn else {
            return this.future.poll(cx);
        };
        if let Some(open) = this.open.take() {
            turn.open(*this.call, open);
        }
        let span = turn.span_of(*this.call);
        let _entered = span.as_ref().map(Span::enter);
        this.future.poll(cx)
    }
}

impl<S: Stream, M: FnOnce() -> Span> Stream for Spanned<'_, S, M> {
    type Item = S::Item;

    #[inline]
    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
        let this = self.project();
        let Some(turn) = this.turn else {
            return this.future.poll_next(cx);
        };
        if let Some(open) = this.open.take() {
            turn.open(*this.call, open);
        }
        let span = turn.span_of(*this.call);
        let _entered = span.as_ref().map(Span::enter);
        this.future.poll_next(cx)
    }
}
