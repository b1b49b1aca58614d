//! The `#[hook]` and `#[tool]` attributes of [agentix](https://docs.rs/agentix): they turn a
//! plain `async fn` into a typed lifecycle hook, or into a tool. Use them through
//! `agentix::hook` and `agentix::tool`; their documentation lives there.

mod hook;
mod tool;

use proc_macro::TokenStream;

/// Turns an `async fn` into a hook on one lifecycle event; see `agentix::hook`.
#[proc_macro_attribute]
pub fn hook(attr: TokenStream, item: TokenStream) -> TokenStream {
    hook::hook(attr.into(), item.into()).into()
}

/// Turns an `async fn` into a tool whose arguments are its parameters; see `agentix::tool`.
#[proc_macro_attribute]
pub fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    tool::tool(attr.into(), item.into()).into()
}
