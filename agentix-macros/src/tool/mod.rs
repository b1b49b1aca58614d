//! `#[tool]`: an `async fn` becomes a [`Tool`](https://docs.rs/agentix/latest/agentix/trait.Tool.html)
//! whose arguments are its parameters. Parsing is the hook's (`crate::parse`); `validate` reads
//! the function into a [`validate::ToolFn`], `expand` writes the tool.

mod expand;
mod validate;

use proc_macro2::TokenStream;
use quote::quote;
use syn::ItemFn;

use crate::parse::Args;

pub fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    let function: ItemFn = match syn::parse2(item.clone()) {
        Ok(function) => function,
        Err(error) => return with_error(item, error),
    };
    let args: Args = match syn::parse2(attr) {
        Ok(args) => args,
        Err(error) => return with_error(item, error),
    };
    match validate::validate(args, &function) {
        Ok(tool) => expand::expand(tool, function),
        Err(error) => with_error(item, error),
    }
}

/// The user's item beside the errors, its parameters' attributes removed (a doc comment on a
/// parameter is only legal through `#[tool]`): the rest of the crate keeps type-checking and the
/// errors are the attribute's own.
fn with_error(item: TokenStream, error: syn::Error) -> TokenStream {
    let error = error.into_compile_error();
    match syn::parse2::<ItemFn>(item.clone()) {
        Ok(mut function) => {
            for input in &mut function.sig.inputs {
                match input {
                    syn::FnArg::Typed(typed) => typed.attrs.clear(),
                    syn::FnArg::Receiver(receiver) => receiver.attrs.clear(),
                }
            }
            quote! { #function #error }
        }
        Err(_) => quote! { #item #error },
    }
}
