//! Expansion: a unit struct named after the function, which keeps the function as its `call`,
//! and the event's trait of `agentix::on` implemented for it. A hook that runs in place also
//! gets a plain `call_in_place` holding the body (`call` then calls it) and the trait's
//! `IN_PLACE` items. Generated code names the runtime only through `<crate>::__private`; its
//! locals have mixed-site hygiene; the user's types keep their spans, so a type error points at
//! the user's token.

use proc_macro2::{Span, TokenStream};
use quote::ToTokens;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Attribute, Ident, ItemFn, Type};

use crate::hook::body::calls_inject;
use crate::hook::events::Event;
use crate::hook::parse::Args;
use crate::hook::validate::{Hook, Role, validate};

pub fn hook(attr: TokenStream, item: TokenStream) -> TokenStream {
    if let Ok(block) = syn::parse2::<syn::ItemImpl>(item.clone()) {
        return crate::hook::lifecycle::hook_impl(attr, block);
    }
    let function: ItemFn = match syn::parse2(item.clone()) {
        Ok(function) => function,
        Err(error) => return with_error(item, error),
    };
    let args: Args = match syn::parse2(attr) {
        Ok(args) => args,
        Err(error) => return stand_in(function, &crate_of(None), error, true),
    };
    let krate = crate_of(Some(&args));
    // A parallel hook that injects: its body would add a borrow error to the one that says so.
    let parallel = args.words.iter().any(|word| word.key == "parallel" || word.key == "tripwire");
    let keep_body = !(parallel && calls_inject(function.block.to_token_stream()).is_some());
    match validate(args, &function) {
        Ok(hook) => expand(&hook, function),
        Err(error) => stand_in(function, &krate, error, keep_body),
    }
}

/// The user's item unchanged, beside the errors: the rest of the crate keeps type-checking.
fn with_error(item: TokenStream, error: syn::Error) -> TokenStream {
    let error = error.into_compile_error();
    quote! { #item #error }
}

/// The errors, beside a stand-in for the hook that registers as one and adds nothing: where the
/// function is registered, no second error says it is not a hook. The function stays, renamed
/// and unused, so its body is checked as written (and its imports are used), unless
/// `keep_body` is false. A method (it takes `self`) stays as it is: no struct can stand in for
/// it inside its `impl`.
pub fn stand_in(
    mut function: ItemFn,
    krate: &syn::Path,
    error: syn::Error,
    keep_body: bool,
) -> TokenStream {
    if matches!(function.sig.inputs.first(), Some(syn::FnArg::Receiver(_))) {
        return with_error(function.to_token_stream(), error);
    }
    let error = error.into_compile_error();
    let ident = function.sig.ident.clone();
    let vis = function.vis.clone();
    let docs: Vec<Attribute> =
        function.attrs.iter().filter(|attr| attr.path().is_ident("doc")).cloned().collect();
    function.sig.ident = format_ident!("__{}_as_written", ident);
    function.vis = syn::Visibility::Inherited;
    if !keep_body {
        function.block = syn::parse_quote!({ ::core::unreachable!() });
    }
    let as_written = quote! {
        #[allow(dead_code, non_snake_case, unused_variables)]
        #function
    };
    let unit = unit_type(&ident, &vis, &docs, true);
    quote! {
        #as_written

        #unit

        impl #krate::__private::StandIn for #ident {}

        #error
    }
}

/// The unit struct a hook or a tool is, named after its function, beside the function of the
/// same name that makes it (for `.hook(f)` and `.tool(f)`). A braced struct lives in the type
/// namespace only, and the function in the value namespace: a local binding or parameter
/// spelled like it shadows the function instead of turning into a pattern. A stand-in's may go
/// unused.
pub fn unit_type(
    ident: &Ident,
    vis: &syn::Visibility,
    docs: &[Attribute],
    stand_in: bool,
) -> TokenStream {
    let unused = stand_in.then(|| quote! { #[allow(dead_code)] });
    quote! {
        #(#docs)*
        #[allow(non_camel_case_types)]
        #unused
        #[derive(Clone, Copy, Debug, Default)]
        #vis struct #ident {}

        #[doc(hidden)]
        #unused
        #vis fn #ident() -> #ident {
            #ident {}
        }
    }
}

/// The path of the agentix crate: `crate = "..."` when the attribute says it, else `::agentix`.
pub fn crate_of(args: Option<&Args>) -> syn::Path {
    args.into_iter()
        .flat_map(|args| &args.words)
        .find(|word| word.key == "crate")
        .and_then(|word| match &word.value {
            Some(crate::hook::parse::Value::Str(text)) => crate::hook::validate::crate_path(text),
            _ => None,
        })
        .unwrap_or_else(|| syn::parse_quote!(::agentix))
}

fn expand(hook: &Hook, mut function: ItemFn) -> TokenStream {
    let krate = &hook.krate;
    let private = quote! { #krate::__private };
    let ident = function.sig.ident.clone();
    let vis = function.vis.clone();
    let (docs, attrs): (Vec<Attribute>, Vec<Attribute>) =
        function.attrs.drain(..).partition(|attr| attr.path().is_ident("doc"));
    function.sig.ident = Ident::new("call", ident.span());
    let sig = &function.sig;
    let block = &function.block;
    let name = &hook.name;
    let implementation = match (&hook.tool, &hook.answer) {
        (Some(tool), _) => per_tool_implementation(hook, tool, &ident, &private),
        (None, Some(answer)) => answer_implementation(hook, answer, &ident, &private),
        (None, None) if hook.event.is_session() => session_implementation(hook, &ident, &private),
        (None, None) => implementation(hook, &ident, &private),
    };
    let functions = if hook.runs_in_place {
        // `call` stays the user's `async fn` (for unit tests that await it); the body moves to
        // `call_in_place`, a plain function the chain calls in place. One body: its errors once.
        let mut in_place_sig = sig.clone();
        in_place_sig.asyncness = None;
        in_place_sig.ident = Ident::new("call_in_place", ident.span());
        let mut call_sig = sig.clone();
        let mut args = Vec::new();
        for (index, input) in call_sig.inputs.iter_mut().enumerate() {
            if let syn::FnArg::Typed(typed) = input {
                let arg = format_ident!("arg{}", index, span = Span::mixed_site());
                *typed.pat = syn::parse_quote!(#arg);
                args.push(arg);
            }
        }
        quote! {
            impl #ident {
                #(#docs)*
                #vis #call_sig {
                    #ident::call_in_place(#(#args),*)
                }

                #[doc(hidden)]
                #(#attrs)*
                #vis #in_place_sig #block
            }
        }
    } else {
        quote! {
            impl #ident {
                #(#docs)*
                #(#attrs)*
                #vis #sig #block
            }
        }
    };
    let durable = hook.durable.then(|| quote! { const DURABLE: #private::bool = true; });
    let timeout = hook.timeout_ms.map(|millis| {
        quote! {
            const TIMEOUT: #private::Option<#private::Duration> =
                #private::Option::Some(#private::Duration::from_millis(#millis));
        }
    });
    let on_error = hook
        .skip_on_error
        .then(|| quote! { const ON_ERROR: #private::on::OnError = #private::on::OnError::Skip; });
    let trait_ident = if hook.parallel {
        format_ident!("ParallelPre")
    } else if hook.tool.is_some() || hook.answer.is_some() {
        format_ident!("{}Of", hook.event.type_name())
    } else {
        format_ident!("{}", hook.event.type_name())
    };

    // The name is a literal: cheaper asked at each call than read from a copy.
    let of_one_event = !hook.parallel && hook.tool.is_none() && hook.answer.is_none();
    let named = (of_one_event && !hook.event.is_session())
        .then(|| quote! { const NAMED: #private::bool = true; });
    let reads_only = (of_one_event && leaves_value_alone(hook))
        .then(|| quote! { const EDITS: #private::bool = false; });
    // A hook the turn is not lent to (no `&mut Turn`) injects nothing: the chain need not mark
    // it as the one the turn is lent to.
    let chained = matches!(
        hook.event,
        Event::Pre
            | Event::BeforeModel
            | Event::AfterModel
            | Event::BeforeTool
            | Event::AfterTool
            | Event::ToolError
            | Event::BeforeFinal
            | Event::Post
    );
    let lends_turn = hook.params.iter().any(|param| {
        param.role == Role::Turn
            && matches!(&param.ty, Type::Reference(r) if r.mutability.is_some())
    });
    let keeps_turn = (of_one_event && chained && !lends_turn)
        .then(|| quote! { const TURNS: #private::bool = false; });
    let unit = unit_type(&ident, &vis, &docs, false);
    quote! {
        #unit

        #functions

        impl #private::on::#trait_ident for #ident {
            #named
            #reads_only
            #keeps_turn
            #durable
            #timeout
            #on_error

            fn name(&self) -> &'static #private::str {
                #name
            }

            #implementation
        }
    }
}

/// Whether the hook cannot change its event's value: it borrows the value shared (or not at
/// all) and returns nothing, a `Verdict`, or a `Result` of either — never a replacement. Read
/// from the syntax alone: any other return type is taken to be one that may replace the value.
fn leaves_value_alone(hook: &Hook) -> bool {
    let has_value = matches!(
        hook.event,
        Event::BeforeModel
            | Event::AfterModel
            | Event::BeforeTool
            | Event::AfterTool
            | Event::ToolError
            | Event::BeforeFinal
    );
    let borrows_shared = hook.params.iter().all(|param| {
        param.role != Role::Value
            || matches!(&param.ty, Type::Reference(r) if r.mutability.is_none())
    });
    has_value && borrows_shared && returns_no_value(&hook.output)
}

/// `()`, `Verdict<..>`, or `Result<T, E>` with `T` one of these.
fn returns_no_value(output: &Type) -> bool {
    match output {
        Type::Tuple(tuple) => tuple.elems.is_empty(),
        Type::Paren(inner) => returns_no_value(&inner.elem),
        Type::Path(path) if path.qself.is_none() => {
            let Some(last) = path.path.segments.last() else { return false };
            match last.ident.to_string().as_str() {
                "Verdict" => true,
                "Result" => match &last.arguments {
                    syn::PathArguments::AngleBracketed(args) => match args.args.first() {
                        Some(syn::GenericArgument::Type(ok)) => returns_no_value(ok),
                        _ => false,
                    },
                    _ => false,
                },
                _ => false,
            }
        }
        _ => false,
    }
}

/// The trait method: it lends the event's value and turn to `call`, and turns its return into
/// the event's output. Each lending and conversion is a trait bound spanned at the user's type.
fn implementation(hook: &Hook, ident: &Ident, private: &TokenStream) -> TokenStream {
    let value = Ident::new("value", Span::mixed_site());
    let turn = Ident::new("turn", Span::mixed_site());
    let next = Ident::new("next", Span::mixed_site());
    let returned = Ident::new("returned", Span::mixed_site());
    let event = hook.event;
    let event_type = format_ident!("{}", event.type_name());
    let shared_turn = hook.parallel || event.is_wrap() || event == Event::Tripwire;

    let args: Vec<TokenStream> = hook
        .params
        .iter()
        .map(|param| {
            let ty = &param.ty;
            let span = ty.span();
            match param.role {
                Role::Value => {
                    let lend = format_ident!("{}Value", event.type_name());
                    let lent = if matches!(
                        event,
                        Event::WrapModel | Event::WrapTool | Event::Post | Event::Tripwire
                    ) {
                        quote! { #value }
                    } else {
                        quote! { &mut *#value }
                    };
                    quote_spanned! {span=> <#ty as #private::#lend<'_>>::lend(#lent) }
                }
                Role::Turn if hook.parallel => {
                    quote_spanned! {span=> <#ty as #private::ParallelTurnParam<'_>>::lend(#turn) }
                }
                Role::Turn if event.is_wrap() => {
                    quote_spanned! {span=> <#ty as #private::WrapTurnParam<'_>>::lend(#turn) }
                }
                Role::Turn if event == Event::Tripwire => {
                    quote_spanned! {span=> <#ty as #private::TripwireTurnParam<'_>>::lend(#turn) }
                }
                Role::Turn => {
                    quote_spanned! {span=> <#ty as #private::TurnParam<'_>>::lend(&mut *#turn) }
                }
                Role::Next => quote! { #next },
                Role::Session => unreachable!("a turn's event has no session parameter"),
            }
        })
        .collect();
    let call = quote! { let #returned = #ident::call(#(#args),*).await; };
    let output = &hook.output;
    let output_span = output.span();
    let turn_type = if shared_turn {
        quote! { &#private::Turn }
    } else {
        quote! { &mut #private::Turn }
    };

    // Each event: the method, its parameters, what its future yields, and the conversion of
    // what the call returned.
    let (method, params, yields, finish) = match event {
        Event::Pre if hook.parallel => {
            let parts =
                quote_spanned! {output_span=> <#output as #private::IntoParts>::into_parts };
            (
                quote! { pre },
                quote! { #turn: #turn_type },
                quote! { #private::Vec<#private::Part> },
                quote! { #parts(#returned) },
            )
        }
        Event::Pre => {
            let returned_as = quote_spanned! {output_span=> <#output as #private::IntoVerdict<#private::Pre>>::returned };
            (
                quote! { pre },
                quote! { #turn: #turn_type },
                quote! { #private::Verdict<#private::Pre> },
                quote! { #private::verdict(#returned_as(#returned)) },
            )
        }
        Event::Tripwire => {
            // As a wrap hook's: the user's future, converted by a plain one.
            let into = quote_spanned! {output_span=> #private::trip_result::<#output, _> };
            let converted = quote! { #into(#ident::call(#(#args),*)) };
            let value_type = quote! { #private::ModelRequest };
            let params = quote! { #value: &#value_type, #turn: #turn_type };
            let future_span = hook.future_span;
            let returns = quote_spanned! {future_span=> impl #private::CoreFuture<Output = #private::Trip> + #private::CoreSend };
            let condition = condition(hook, private, Some(&value_type));
            return quote! {
                #condition

                fn tripwire(&self, #params) -> #returns {
                    #converted
                }
            };
        }
        Event::WrapModel | Event::WrapTool => {
            let (method, value_type, next_trait, result_type, into_result) =
                if event == Event::WrapModel {
                    (
                        quote! { wrap_model },
                        quote! { #private::ModelRequest },
                        quote! { #private::NextModel },
                        quote! { #private::Result<#private::ModelResponse, #private::ModelError> },
                        quote! { model_result },
                    )
                } else {
                    (
                        quote! { wrap_tool },
                        quote! { #private::ToolCall },
                        quote! { #private::NextTool },
                        quote! { #private::ToolResult },
                        quote! { tool_result },
                    )
                };
            // No `async` block of its own: a wrap hook's future is the user's, converted by a
            // plain future, so each layer of the onion nests one coroutine, not two (the
            // onion's depth is what rustc's layout queries pay for). The conversion's bound is
            // checked once, at the user's return type; what it returns is a future of the
            // call's result either way, so a wrong return type is one error.
            let into = quote_spanned! {output_span=> #private::#into_result::<#output, _> };
            let converted = quote! { #into(#ident::call(#(#args),*)) };
            let params =
                quote! { #value: &#value_type, #turn: #turn_type, #next: &impl #next_trait };
            let future_span = hook.future_span;
            let returns = quote_spanned! {future_span=> impl #private::CoreFuture<Output = #result_type> + #private::CoreSend };
            let condition = condition(hook, private, Some(&value_type));
            return quote! {
                #condition

                fn #method(&self, #params) -> #returns {
                    #converted
                }
            };
        }
        _ => {
            let value_type = match event {
                Event::BeforeModel => quote! { &mut #private::ModelRequest },
                Event::AfterModel | Event::BeforeFinal => {
                    quote! { &mut #private::AssistantMessage }
                }
                Event::BeforeTool => quote! { &mut #private::ToolCall },
                Event::AfterTool | Event::ToolError => quote! { &mut #private::ToolResult },
                _ => quote! { &#private::Outcome },
            };
            let returned_as = quote_spanned! {output_span=> <#output as #private::IntoVerdict<#private::#event_type>>::returned };
            let finish = if event == Event::Post {
                quote! { #private::verdict(#returned_as(#returned)) }
            } else {
                quote! { #private::apply(#returned_as(#returned), #value) }
            };
            let method = format_ident!("{}", event.word());
            (
                quote! { #method },
                quote! { #value: #value_type, #turn: #turn_type },
                quote! { #private::Verdict<#private::#event_type> },
                finish,
            )
        }
    };

    // The future and its `Send` bound carry the user's `async`: an error about them points there.
    let future_span = hook.future_span;
    let future = quote_spanned! {future_span=> async move { #call #finish } };
    let returns = quote_spanned! {future_span=> impl #private::CoreFuture<Output = #yields> + #private::CoreSend };
    let in_place = hook.runs_in_place.then(|| {
        let method_in_place = format_ident!("{}_in_place", event.word());
        let call_in_place = quote! { let #returned = #ident::call_in_place(#(#args),*); };
        quote! {
            const IN_PLACE: #private::bool = true;

            fn #method_in_place(&self, #params) -> #yields {
                #call_in_place #finish
            }
        }
    });
    let shared_value = match event {
        Event::Pre => None,
        Event::BeforeModel => Some(quote! { #private::ModelRequest }),
        Event::AfterModel | Event::BeforeFinal => Some(quote! { #private::AssistantMessage }),
        Event::BeforeTool => Some(quote! { #private::ToolCall }),
        Event::AfterTool | Event::ToolError => Some(quote! { #private::ToolResult }),
        _ => Some(quote! { #private::Outcome }),
    };
    let condition = condition(hook, private, shared_value.as_ref());
    quote! {
        #condition

        fn #method(&self, #params) -> #returns {
            #future
        }

        #in_place
    }
}

/// The trait method of a session hook: it lends the event's value and the session's state to
/// `call`, and turns its return into the event's verdict.
fn session_implementation(hook: &Hook, ident: &Ident, private: &TokenStream) -> TokenStream {
    let value = Ident::new("value", Span::mixed_site());
    let session = Ident::new("session", Span::mixed_site());
    let returned = Ident::new("returned", Span::mixed_site());
    let event = hook.event;
    let event_type = format_ident!("{}", event.type_name());
    let args = hook.params.iter().map(|param| {
        let ty = &param.ty;
        let span = ty.span();
        match param.role {
            Role::Value => {
                let lend = format_ident!("{}Value", event.type_name());
                let lent = if event.edits_value() {
                    quote! { &mut *#value }
                } else {
                    quote! { #value }
                };
                quote_spanned! {span=> <#ty as #private::#lend<'_>>::lend(#lent) }
            }
            _ => quote_spanned! {span=> <#ty as #private::SessionParam<'_>>::lend(#session) },
        }
    });
    let value_param = match event {
        Event::TaskStart => Some(quote! { #value: &mut #private::QueuedTask, }),
        Event::StepStart => Some(quote! { #value: &mut #private::Turn, }),
        Event::PlanSubmit => Some(quote! { #value: &mut #private::Plan, }),
        Event::TaskComplete => Some(quote! { #value: &#private::TaskReport, }),
        Event::PlanComplete => Some(quote! { #value: &#private::PlanReport, }),
        _ => None,
    };
    let output = &hook.output;
    let returned_as = quote_spanned! {output.span()=>
        <#output as #private::IntoVerdict<#private::#event_type>>::returned
    };
    let call = quote! { #ident::call(#(#args),*) };
    let finish = quote! { #private::verdict(#returned_as(#returned)) };
    let (returns, future) = verdict_future(hook, private, &event_type, call, &returned, finish);
    let method = format_ident!("{}", event.word());
    quote! {
        fn #method(&self, #value_param #session: &#private::SessionState) -> #returns {
            #future
        }
    }
}

/// The trait items of a per-tool hook: it lends the tool's typed arguments (or output, or
/// error) and the turn to `call`. The tool is named once, at the user's path.
fn per_tool_implementation(
    hook: &Hook,
    tool: &syn::Path,
    ident: &Ident,
    private: &TokenStream,
) -> TokenStream {
    let value = Ident::new("value", Span::mixed_site());
    let turn = Ident::new("turn", Span::mixed_site());
    let returned = Ident::new("returned", Span::mixed_site());
    let (method, associated, turn_type) = match hook.event {
        Event::BeforeTool => {
            (quote! { before_tool }, quote! { Args }, quote! { &mut #private::Turn })
        }
        Event::AfterTool => (quote! { after_tool }, quote! { Output }, quote! { &#private::Turn }),
        _ => (quote! { tool_error }, quote! { Error }, quote! { &#private::Turn }),
    };
    let value_type = quote! { <Self::Tool as #private::Tool>::#associated };
    let args = hook.params.iter().map(|param| {
        let ty = &param.ty;
        let span = ty.span();
        match (param.role, hook.event) {
            (Role::Value, _) => quote_spanned! {span=>
                <#ty as #private::ToolValueParam<'_, Self::Tool, #value_type>>::lend(&mut *#value)
            },
            (_, Event::BeforeTool) => {
                quote_spanned! {span=> <#ty as #private::TurnParam<'_>>::lend(&mut *#turn) }
            }
            _ => quote_spanned! {span=> <#ty as #private::InCallTurnParam<'_>>::lend(#turn) },
        }
    });
    let output = &hook.output;
    let event_type = format_ident!("{}", hook.event.type_name());
    let returned_as = quote_spanned! {output.span()=>
        <#output as #private::IntoTypedVerdict<#private::#event_type>>::verdict
    };
    let call = quote! { #ident::call(#(#args),*) };
    let finish = quote! { #returned_as(#returned) };
    let (returns, future) = verdict_future(hook, private, &event_type, call, &returned, finish);
    let edits = (hook.event == Event::BeforeTool).then(|| {
        let edits = hook.params.iter().any(|param| {
            param.role == Role::Value
                && matches!(&param.ty, syn::Type::Reference(reference) if reference.mutability.is_some())
        });
        quote! { const EDITS: #private::bool = #edits; }
    });
    let condition = condition(hook, private, Some(&value_type));
    quote! {
        type Tool = #tool;
        #edits

        #condition

        fn #method(&self, #value: &mut #value_type, #turn: #turn_type) -> #returns {
            #future
        }
    }
}

/// The trait items of a typed agent's `before_final` hook: it lends the answer, read as the
/// agent's output type, and the turn to `call`. The type is named once, at the user's type, so
/// one that cannot be an output type is an error there.
fn answer_implementation(
    hook: &Hook,
    answer: &Type,
    ident: &Ident,
    private: &TokenStream,
) -> TokenStream {
    let value = Ident::new("value", Span::mixed_site());
    let turn = Ident::new("turn", Span::mixed_site());
    let returned = Ident::new("returned", Span::mixed_site());
    let takes_mut = |param: &crate::hook::validate::Param| matches!(&param.ty, Type::Reference(reference) if reference.mutability.is_some());
    let args = hook.params.iter().map(|param| {
        let ty = &param.ty;
        let span = ty.span();
        match param.role {
            Role::Value if takes_mut(param) => quote! { &mut *#value },
            Role::Value => quote! { &*#value },
            _ => quote_spanned! {span=> <#ty as #private::TurnParam<'_>>::lend(&mut *#turn) },
        }
    });
    let output = &hook.output;
    let returned_as = quote_spanned! {output.span()=>
        <#output as #private::IntoTypedVerdict<#private::BeforeFinal>>::verdict
    };
    let call = quote! { #ident::call(#(#args),*) };
    let finish = quote! { #returned_as(#returned) };
    let event_type = format_ident!("BeforeFinal");
    let (returns, future) = verdict_future(hook, private, &event_type, call, &returned, finish);
    let edits = hook.params.iter().any(|param| param.role == Role::Value && takes_mut(param));
    let condition = condition(hook, private, Some(&quote! { Self::Answer }));
    quote! {
        type Answer = #answer;
        const EDITS: #private::bool = #edits;

        #condition

        fn before_final(&self, #value: &mut Self::Answer, #turn: &mut #private::Turn) -> #returns {
            #future
        }
    }
}

/// A hook method's return type and body, for a future that yields `Verdict<event_type>`: the
/// user's `call` awaited into `returned`, then `finish`. Both carry the user's `async`, so an
/// error about the future (it must be `Send`) points there.
fn verdict_future(
    hook: &Hook,
    private: &TokenStream,
    event_type: &Ident,
    call: TokenStream,
    returned: &Ident,
    finish: TokenStream,
) -> (TokenStream, TokenStream) {
    let future_span = hook.future_span;
    let returns = quote_spanned! {future_span=>
        impl #private::CoreFuture<Output = #private::Verdict<#private::#event_type>> + #private::CoreSend
    };
    let future = quote_spanned! {future_span=>
        async move {
            let #returned = #call.await;
            #finish
        }
    };
    (returns, future)
}

/// The hook's `when` condition, as the trait's `applies`: the pipeline asks it before each call
/// and reports a hook it skips. `value` is the type of the event's value, if it has one.
fn condition(hook: &Hook, private: &TokenStream, value: Option<&TokenStream>) -> TokenStream {
    if let (Some(pattern), Some(value_type)) = (&hook.tools, value) {
        return tools_condition(hook, pattern, private, value_type);
    }
    let Some(when) = &hook.when else {
        return TokenStream::new();
    };
    let turn = Ident::new("turn", Span::mixed_site());
    // Spanned at the user's path: a condition of the wrong shape is an error there.
    let span = when.span();
    let (params, holds) = match value {
        Some(value_type) => {
            let value = Ident::new("value", Span::mixed_site());
            (
                quote! { #value: &#value_type, #turn: &#private::Turn },
                quote_spanned! {span=> {
                    #[allow(unused_imports)]
                    use #private::{WhenFallback as _, WhenHolds as _};
                    (&&#private::When::<#value_type, _>(&#when, #private::PhantomData))
                        .holds(#value, #turn)
                }},
            )
        }
        None => (
            quote! { #turn: &#private::Turn },
            quote_spanned! {span=> {
                #[allow(unused_imports)]
                use #private::{WhenFallbackForTurn as _, WhenHoldsForTurn as _};
                (&&#private::When::<(), _>(&#when, #private::PhantomData)).holds(#turn)
            }},
        ),
    };
    quote! {
        const CONDITIONAL: #private::bool = true;

        fn applies(&self, #params) -> #private::bool {
            #holds
        }
    }
}

/// `tools = "..."`: the hook runs on the calls whose tool name the glob matches (checked when
/// the attribute was read), and, with `when` too, only where that also holds.
fn tools_condition(
    hook: &Hook,
    pattern: &syn::LitStr,
    private: &TokenStream,
    value_type: &TokenStream,
) -> TokenStream {
    let value = Ident::new("value", Span::mixed_site());
    let turn = Ident::new("turn", Span::mixed_site());
    let when = hook.when.as_ref().map(|when| {
        let span = when.span();
        quote_spanned! {span=> && {
            #[allow(unused_imports)]
            use #private::{WhenFallback as _, WhenHolds as _};
            (&&#private::When::<#value_type, _>(&#when, #private::PhantomData)).holds(#value, #turn)
        }}
    });
    quote! {
        const CONDITIONAL: #private::bool = true;

        fn applies(&self, #value: &#value_type, #turn: &#private::Turn) -> #private::bool {
            let _ = #turn;
            #private::tool_pattern_matches(#pattern, &#value.name) #when
        }
    }
}

#[cfg(test)]
mod tests {
    use super::returns_no_value;
    use syn::{Type, parse_quote};

    #[test]
    fn a_verdict_nothing_or_a_result_of_them_replaces_no_value() {
        let none: [Type; 5] = [
            parse_quote!(()),
            parse_quote!(Verdict<AfterModel>),
            parse_quote!(agentix::Verdict<agentix::event::AfterModel>),
            parse_quote!(Result<(), String>),
            parse_quote!(std::result::Result<Verdict<BeforeTool>, anyhow::Error>),
        ];
        for ty in none {
            assert!(returns_no_value(&ty), "{}", quote::quote!(#ty));
        }
        let may_replace: [Type; 5] = [
            parse_quote!(AssistantMessage),
            parse_quote!(Result<AssistantMessage, String>),
            parse_quote!(Option<AssistantMessage>),
            parse_quote!(MyAlias),
            parse_quote!(<X as Trait>::Verdict),
        ];
        for ty in may_replace {
            assert!(!returns_no_value(&ty), "{}", quote::quote!(#ty));
        }
    }
}
