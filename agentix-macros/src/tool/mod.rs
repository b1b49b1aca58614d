//! `#[tool]`: an `async fn` becomes a [`Tool`](https://docs.rs/agentix/latest/agentix/trait.Tool.html)
//! whose arguments are its parameters. Parsing is the hook's (`crate::hook::parse`); `validate` reads
//! the function into a [`validate::ToolFn`], `expand` writes the tool.

mod expand;
mod validate;

use proc_macro2::TokenStream;
use quote::quote;
use syn::ItemFn;
use syn::ext::IdentExt;

use crate::hook::parse::Args;

pub fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    let function: ItemFn = match syn::parse2(item.clone()) {
        Ok(function) => function,
        Err(error) => return with_error(item, error),
    };
    let args: Args = match syn::parse2(attr) {
        Ok(args) => args,
        Err(error) => return stand_in(&function, &crate::hook::expand::crate_of(None), error),
    };
    let krate = crate::hook::expand::crate_of(Some(&args));
    match validate::validate(args, &function) {
        Ok(tool) => expand::expand(tool, function),
        Err(error) => stand_in(&function, &krate, error),
    }
}

/// The errors, beside a stand-in for the tool: a tool of the function's name that takes no
/// arguments and is never run (the crate does not compile), so that where it is added to an
/// agent no second error says it is not a tool. A method (it takes `self`) stays as it is.
fn stand_in(function: &ItemFn, krate: &syn::Path, error: syn::Error) -> TokenStream {
    if matches!(function.sig.inputs.first(), Some(syn::FnArg::Receiver(_))) {
        return with_error(quote! { #function }, error);
    }
    let error = error.into_compile_error();
    let ident = &function.sig.ident;
    let vis = &function.vis;
    let name = ident.unraw().to_string();
    let private = quote! { #krate::__private };
    // The function as written, renamed and unused, its parameters' attributes (legal only
    // through `#[tool]`) removed: its body is checked, its imports used.
    let mut as_written = function.clone();
    as_written.sig.ident = quote::format_ident!("__{}_as_written", ident);
    as_written.vis = syn::Visibility::Inherited;
    for input in &mut as_written.sig.inputs {
        if let syn::FnArg::Typed(typed) = input {
            typed.attrs.clear();
        }
    }
    let unit = crate::hook::expand::unit_type(ident, vis, &[], true);
    quote! {
        #[allow(dead_code, non_snake_case)]
        #as_written

        #unit

        impl #private::Tool for #ident {
            const NAME: &'static #private::str = #name;
            type Args = ();
            type Output = ();
            type Error = #private::Infallible;

            fn description(&self) -> &#private::str {
                ""
            }

            fn call(
                &self,
                _args: (),
                _turn: &#private::Turn,
            ) -> impl #private::CoreFuture<Output = #private::Result<(), #private::Infallible>> + #private::CoreSend {
                ::core::future::ready(#private::Result::Ok(()))
            }
        }

        #error
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
