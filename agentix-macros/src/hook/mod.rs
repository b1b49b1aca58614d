//! `#[hook]`: an `async fn` becomes a typed hook on one lifecycle event. `parse` reads the
//! attribute's words (`#[tool]` reads its own with it), `validate` checks them and the
//! function against the event's contract, `expand` writes the hook; `events` is the table of
//! events the three share, and `body` what a body's tokens say (whether it awaits). On an
//! `impl Hook` block, `lifecycle` says which methods the impl defines.

pub(crate) mod body;
pub(crate) mod events;
pub(crate) mod expand;
pub(crate) mod lifecycle;
pub(crate) mod parse;
pub(crate) mod validate;

pub use expand::hook;
