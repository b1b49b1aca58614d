//! Running one event's chain of hooks from the loop: skipped, in place, or awaited.

use crate::event::EventKind;
use crate::pipeline::node::Chain;

/// Runs one event's chain, skipped at compile time when no hook is on the event. When none of
/// the event's hooks awaits, the chain runs in place (`$in_place`: no future at all); otherwise in
/// the loop's own future (no future of its own). No guard of its own: a panic in one of its
/// hooks unwinds out of the loop to the turn's one guard (`conclude`), which names the hook.
/// The loop holds nothing at these events that the log must keep, so it loses nothing by
/// unwinding.
macro_rules! run_chain {
    ($agent:expr, $turn:expr, $observer:expr, $event:ident, $method:ident / $in_place:ident($($value:expr)?)) => {{
        let chain = $agent.hooks.chain();
        if !$crate::agent::chains::handles(chain, $crate::event::EventKind::$event) {
            $crate::pipeline::Flow::Continue
        } else if $crate::agent::chains::runs_in_place(chain, $crate::event::EventKind::$event) {
            chain.$in_place($($value,)? &mut *$turn, $observer)
        } else {
            chain.$method($($value,)? &mut *$turn, $observer).await
        }
    }};
}

/// [`run_chain!`] under a panic guard of its own, for the events after which the loop must still
/// write something to the log: the tool events (the step, with a result for every call) and
/// `post` (which runs after the turn's guard). `in SPAN;` runs the hooks in the turn's span
/// (`Option<&Span>`): entered around hooks that never await, polled within it otherwise.
///
/// What it gives is the flow of a hook that ended the chain, boxed (a panic's too), or `None`
/// when every hook continued: one word, which the loop tests, where a `Flow` read back from
/// behind the guard would cost some ten instructions an event. Only a turn a hook ends (or
/// panics in) allocates for it.
macro_rules! run_guarded_chain {
    (in $span:expr; $agent:expr, $turn:expr, $observer:expr, $event:ident, $method:ident / $in_place:ident($($value:expr)?)) => {{
        let chain = $agent.hooks.chain();
        if !$crate::agent::chains::handles(chain, $crate::event::EventKind::$event) {
            None
        } else if $crate::agent::chains::runs_in_place(chain, $crate::event::EventKind::$event) {
            let _entered = $span.map(::tracing::Span::enter);
            let run = || $crate::agent::chains::ended(chain.$in_place($($value,)? &mut *$turn, $observer));
            let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(run));
            $crate::pipeline::settle_ended(caught, $turn, $observer)
        } else {
            let future = chain.$method($($value,)? &mut *$turn, $observer);
            let guarded = ::futures::FutureExt::catch_unwind(std::panic::AssertUnwindSafe(future));
            let caught = $crate::trace::Within::new($span, guarded).await;
            $crate::pipeline::settle_ended(caught.map($crate::agent::chains::ended), $turn, $observer)
        }
    }};
    ($agent:expr, $turn:expr, $observer:expr, $event:ident, $method:ident / $in_place:ident($($value:expr)?)) => {{
        let chain = $agent.hooks.chain();
        if !$crate::agent::chains::handles(chain, $crate::event::EventKind::$event) {
            None
        } else if $crate::agent::chains::runs_in_place(chain, $crate::event::EventKind::$event) {
            let run = || $crate::agent::chains::ended(chain.$in_place($($value,)? &mut *$turn, $observer));
            let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(run));
            $crate::pipeline::settle_ended(caught, $turn, $observer)
        } else {
            let future = chain.$method($($value,)? &mut *$turn, $observer);
            // A plain `CatchUnwind`, not `caught`: a chain's future runs no code until it is
            // polled, so there is no panic in making it to catch (and that check costs about a
            // dozen instructions an event).
            let caught = ::futures::FutureExt::catch_unwind(std::panic::AssertUnwindSafe(future)).await;
            $crate::pipeline::settle_ended(caught.map($crate::agent::chains::ended), $turn, $observer)
        }
    }};
}

/// A chain's flow as what crosses its panic guard: `None` when every hook continued, or the
/// flow, boxed ([`run_guarded_chain!`]).
#[inline(always)]
pub(crate) fn ended<E: crate::event::Event>(
    flow: crate::pipeline::Flow<E>,
) -> Option<Box<crate::pipeline::Flow<E>>> {
    if flow.is_continue() {
        // `Continue` owns nothing: no drop call for it.
        std::mem::forget(flow);
        None
    } else {
        Some(Box::new(flow))
    }
}

/// Whether `chain` has hooks on `event`: a constant, once `C` is known.
pub(super) fn handles<C: Chain>(_chain: &C, event: EventKind) -> bool {
    C::EVENTS.contains(event)
}

/// Whether none of `chain`'s hooks on `event` awaits: a constant, once `C` is known.
pub(super) fn runs_in_place<C: Chain>(_chain: &C, event: EventKind) -> bool {
    C::IN_PLACE_EVENTS.contains(event)
}
