//! `when` conditions: a function of the event's value and the turn, checked where it is named.

use crate::turn::Turn;

// A `when` condition is called through `(&&When(&condition)).holds(value, turn)`: a function
// of the right shape takes the first method (autoref picks it), any other the fallback, whose
// bound fails with a message that names `when` and the signature expected. A bound on the
// first impl alone would let rustc report the closure's arity or argument types instead.

/// A hook's `when` condition, for method resolution: `V` is the hook's value (`()` for a `pre`
/// hook), named so that a condition over another event's value takes the fallback.
pub struct When<'f, V: ?Sized, F>(pub &'f F, pub core::marker::PhantomData<fn(&V)>);

/// A `when` condition of the right shape, over a hook's value and turn.
pub trait WhenHolds<V: ?Sized> {
    /// Whether the hook runs.
    fn holds(&self, value: &V, turn: &Turn) -> bool;
}

impl<V: ?Sized, F: Fn(&V, &Turn) -> bool> WhenHolds<V> for &When<'_, V, F> {
    fn holds(&self, value: &V, turn: &Turn) -> bool {
        (self.0)(value, turn)
    }
}

/// A `when` condition of another shape: its bound fails, naming the shape expected.
pub trait WhenFallback<V: ?Sized, F> {
    /// Never called: the crate does not compile.
    fn holds(&self, value: &V, turn: &Turn) -> bool
    where
        F: NotACondition<V>;
}

impl<V: ?Sized, F> WhenFallback<V, F> for When<'_, V, F> {
    fn holds(&self, _value: &V, _turn: &Turn) -> bool
    where
        F: NotACondition<V>,
    {
        unreachable!("a `when` condition of the wrong shape does not compile")
    }
}

/// Implemented by nothing: the bound a `when` condition of the wrong shape fails.
#[diagnostic::on_unimplemented(
    message = "`when = ...` must be a `fn(&{V}, &Turn) -> bool`: the hook's value, the turn, whether it runs",
    label = "not a `fn(&{V}, &Turn) -> bool`",
    note = "a `when` condition takes the hook's value and the turn by shared reference and returns `bool` (a `pre` hook's condition takes only `&Turn`)"
)]
pub trait NotACondition<V: ?Sized> {}

/// A `pre` hook's `when` condition of the right shape, over the turn.
pub trait WhenHoldsForTurn {
    /// Whether the hook runs.
    fn holds(&self, turn: &Turn) -> bool;
}

impl<F: Fn(&Turn) -> bool> WhenHoldsForTurn for &When<'_, (), F> {
    fn holds(&self, turn: &Turn) -> bool {
        (self.0)(turn)
    }
}

/// A `pre` hook's `when` condition of another shape.
pub trait WhenFallbackForTurn<F> {
    /// Never called: the crate does not compile.
    fn holds(&self, turn: &Turn) -> bool
    where
        F: NotATurnCondition;
}

impl<F> WhenFallbackForTurn<F> for When<'_, (), F> {
    fn holds(&self, _turn: &Turn) -> bool
    where
        F: NotATurnCondition,
    {
        unreachable!("a `when` condition of the wrong shape does not compile")
    }
}

/// Implemented by nothing: the bound a `pre` hook's `when` condition of the wrong shape fails.
#[diagnostic::on_unimplemented(
    message = "`when = ...` on a `pre` hook must be a `fn(&Turn) -> bool`: whether it runs this turn",
    label = "not a `fn(&Turn) -> bool`",
    note = "a `pre` hook has no value: its `when` condition takes `&Turn` and returns `bool`"
)]
pub trait NotATurnCondition {}
