//! The `#[hook]` attribute of [agentix](https://docs.rs/agentix): it turns a plain `async fn`
//! into a typed lifecycle hook. Use it through `agentix::hook`; its documentation lives there.

mod expand;
mod parse;
mod validate;

use proc_macro::TokenStream;

/// Turns an `async fn` into a hook on one lifecycle event; see `agentix::hook`.
#[proc_macro_attribute]
pub fn hook(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand::hook(attr.into(), item.into()).into()
}
