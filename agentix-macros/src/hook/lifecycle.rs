//! `#[hook]` on an `impl Hook for ...` block: beside it, the hidden `HookMethods` impl that
//! tells the pipeline which methods the impl defines (it calls only those), which never await
//! (their bodies move to `_in_place` twins there, which the `async` methods call, and the
//! pipeline calls them with no future), and whether the struct is a layer of each wrap onion.
//! `EVENTS`, unless written, is the events it defines. The methods' signatures stay as written:
//! the trait checks them.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, format_ident, quote};
use syn::spanned::Spanned;
use syn::{ImplItem, ImplItemFn, ItemImpl};

use crate::hook::body::{awaits, is_doc_or_lint};
use crate::hook::expand::crate_of;
use crate::hook::parse::Args;

/// `Hook`'s methods: the event each is, and whether it has an `_in_place` twin (the wraps,
/// which own `next`, do not).
const METHODS: [(&str, &str, bool); 10] = [
    ("pre", "Pre", true),
    ("before_model", "BeforeModel", true),
    ("wrap_model", "WrapModel", false),
    ("after_model", "AfterModel", true),
    ("before_tool", "BeforeTool", true),
    ("wrap_tool", "WrapTool", false),
    ("after_tool", "AfterTool", true),
    ("tool_error", "ToolError", true),
    ("before_final", "BeforeFinal", true),
    ("post", "Post", true),
];

pub fn hook_impl(attr: TokenStream, mut item: ItemImpl) -> TokenStream {
    let args: Args = match syn::parse2(attr) {
        Ok(args) => args,
        Err(error) => return with_error(&item, error),
    };
    // An event or option where none belongs: said once, and the impl expanded as without it,
    // so that no second error says the impl lacks `#[hook]`.
    let misplaced = args.words.iter().find(|word| word.key != "crate").map(|word| {
        syn::Error::new(
            word.key.span(),
            "`#[hook]` on an `impl Hook` block takes no event or option: its events are the \
             methods the impl defines, and the trait's constants (`TIMEOUT`, `DURABLE`) set the rest",
        )
        .into_compile_error()
    });
    let is_hook = item
        .trait_
        .as_ref()
        .and_then(|(_, path, _)| path.segments.last())
        .is_some_and(|segment| segment.ident == "Hook");
    if !is_hook {
        let span = item.trait_.as_ref().map_or(item.self_ty.span(), |(_, path, _)| path.span());
        let error = syn::Error::new(
            span,
            "`#[hook]` goes on an `async fn` (a hook on one event) or on an `impl Hook for ...` \
             block (a struct on several)",
        );
        return with_error(&item, error);
    }
    let krate = crate_of(Some(&args));
    let private = quote! { #krate::__private };

    let mut runs = Vec::new();
    let mut in_place = Vec::new();
    // The events whose method may change the value, and the turn: all but those whose
    // parameter for it is `_`, which the body cannot name.
    let mut edits = Vec::new();
    let mut turns = Vec::new();
    let mut writes_events = false;
    let mut twins = Vec::new();
    let mut wrong_verdicts = Vec::new();
    for impl_item in &mut item.items {
        match impl_item {
            ImplItem::Const(constant) if constant.ident == "EVENTS" => writes_events = true,
            ImplItem::Fn(method) => {
                let name = method.sig.ident.to_string();
                let Some(&(_, event, has_twin)) = METHODS.iter().find(|(word, ..)| *word == name)
                else {
                    continue;
                };
                if let Some(error) = own_verdict(method, event, &private) {
                    wrong_verdicts.push(error);
                }
                let event = format_ident!("{}", event);
                runs.push(event.clone());
                let (value_named, turn_named) = names_value_and_turn(method);
                if value_named {
                    edits.push(event.clone());
                }
                if turn_named {
                    turns.push(event.clone());
                }
                if has_twin && never_awaits(method) {
                    in_place.push(event);
                    twins.push(split_in_place(method, &private));
                }
            }
            _ => {}
        }
    }
    let set = |events: &[syn::Ident]| {
        quote! { #private::EventSet::NONE #(.with(#private::EventKind::#events))* }
    };
    let runs_set = set(&runs);
    let in_place_set = set(&in_place);
    // The events the impl does not define keep the default (they never run).
    let edits_set = set(&edits);
    let turns_set = set(&turns);
    if !writes_events {
        item.items.push(syn::parse_quote! {
            const EVENTS: #private::EventSet = #runs_set;
        });
    }
    let membership = |event: &str| {
        if runs.iter().any(|ran| ran == event) {
            quote! { #private::Joins }
        } else {
            quote! { #private::PassesBy }
        }
    };
    let (wraps_model, wraps_tool) = (membership("WrapModel"), membership("WrapTool"));
    let (impl_generics, _, where_clause) = item.generics.split_for_impl();
    let self_ty = &item.self_ty;
    quote! {
        #misplaced
        #(#wrong_verdicts)*

        #item

        impl #impl_generics #private::HookMethods for #self_ty #where_clause {
            const RUNS: #private::EventSet = #runs_set;
            const IN_PLACE: #private::EventSet = #in_place_set;
            const EDITS: #private::EventSet = #edits_set;
            const TURNS: #private::EventSet = #turns_set;
            type WrapsModel = #wraps_model;
            type WrapsTool = #wraps_tool;

            #(#twins)*
        }
    }
}

/// The events whose methods return a `Verdict` of their own.
const VERDICT_EVENTS: [&str; 8] = [
    "Pre",
    "BeforeModel",
    "AfterModel",
    "BeforeTool",
    "AfterTool",
    "ToolError",
    "BeforeFinal",
    "Post",
];

/// A method that returns another event's verdict (`before_tool` returning
/// `Verdict<AfterModel>`): the error, at the event it names, and the method's return type set to
/// its own event's, so that the mistake is said once — not again by the trait, the twin and the
/// body.
fn own_verdict(method: &mut ImplItemFn, event: &str, private: &TokenStream) -> Option<TokenStream> {
    if !VERDICT_EVENTS.contains(&event) {
        return None;
    }
    let syn::ReturnType::Type(_, output) = &mut method.sig.output else { return None };
    let syn::Type::Path(path) = &mut **output else { return None };
    let last = path.path.segments.last_mut()?;
    if last.ident != "Verdict" {
        return None;
    }
    let syn::PathArguments::AngleBracketed(arguments) = &mut last.arguments else { return None };
    let Some(syn::GenericArgument::Type(syn::Type::Path(named))) = arguments.args.first_mut()
    else {
        return None;
    };
    let named_event = named.path.segments.last()?.ident.to_string();
    if named_event == event || !VERDICT_EVENTS.contains(&named_event.as_str()) {
        return None;
    }
    let error = syn::Error::new_spanned(
        &*named,
        format!(
            "`{}` returns `Verdict<{event}>`, not `Verdict<{named_event}>`: each method \
             decides its own event, under that event's contract",
            method.sig.ident
        ),
    );
    let own = format_ident!("{}", event, span = named.span());
    let written = named.clone();
    *named = syn::parse_quote!(#private::#own);
    // The type the user wrote stays named, so that its import is not also reported unused.
    let mut tokens = error.into_compile_error();
    tokens.extend(quote! {
        const _: () = {
            fn written(_: ::core::option::Option<#written>) {}
        };
    });
    Some(tokens)
}

/// Whether a `Hook` method names its value parameter (the one after `&self`, when the event has
/// a value besides the turn) and its turn parameter (the last): one written `_` cannot be
/// touched by the body. `pre` has no value; `post`'s outcome is lent shared.
fn names_value_and_turn(method: &ImplItemFn) -> (bool, bool) {
    let typed: Vec<&syn::PatType> = method
        .sig
        .inputs
        .iter()
        .filter_map(|input| match input {
            syn::FnArg::Typed(typed) => Some(typed),
            syn::FnArg::Receiver(_) => None,
        })
        .collect();
    let named = |typed: &&syn::PatType| !matches!(*typed.pat, syn::Pat::Wild(_));
    let turn = typed.last().is_some_and(named);
    let value = method.sig.ident != "pre"
        && method.sig.ident != "post"
        && typed.first().is_some_and(|first| typed.len() > 1 && named(first));
    (value, turn)
}

/// Whether an `async` method's body never awaits, and its attributes (lint levels only) mean
/// the same on a plain method.
fn never_awaits(method: &ImplItemFn) -> bool {
    method.sig.asyncness.is_some()
        && method.attrs.iter().all(is_doc_or_lint)
        && !awaits(method.block.to_token_stream())
}

/// Moves an `async` method's body to its plain `_in_place` twin, returned for the
/// `HookMethods` impl, and has the method call it. One body: its errors once, at the user's
/// tokens.
fn split_in_place(method: &mut ImplItemFn, private: &TokenStream) -> ImplItemFn {
    let mut twin = method.clone();
    twin.sig.asyncness = None;
    twin.sig.ident = format_ident!("{}_in_place", method.sig.ident, span = method.sig.ident.span());
    twin.attrs.retain(|attr| !attr.path().is_ident("doc"));
    let mut args = Vec::new();
    for (index, input) in method.sig.inputs.iter_mut().enumerate() {
        if let syn::FnArg::Typed(typed) = input {
            let arg = format_ident!("arg{}", index, span = Span::mixed_site());
            *typed.pat = syn::parse_quote!(#arg);
            args.push(arg);
        }
    }
    let twin_ident = &twin.sig.ident;
    method.block = syn::parse_quote!({
        <Self as #private::HookMethods>::#twin_ident(self, #(#args),*)
    });
    twin
}

/// The impl unchanged, beside the error.
fn with_error(item: &ItemImpl, error: syn::Error) -> TokenStream {
    let error = error.into_compile_error();
    quote! { #item #error }
}
