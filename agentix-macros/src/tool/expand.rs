//! Expansion of `#[tool]`: a unit struct named after the function, keeping the function as its
//! `call`; for a function of plain parameters, the arguments struct (`GetWeatherArgs` for
//! `get_weather`) with a field per parameter; and `agentix::Tool` for the unit struct. Each
//! field deserializes through one bound in `agentix::__private`, spanned at the user's type, so
//! a type that cannot be an argument is one error there; its schema and serialization go through
//! probes that say nothing when that bound has already failed.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{Attribute, FnArg, Ident, ItemFn, LitStr};

use super::validate::{Field, Form, Param, Returns, ToolFn};

pub fn expand(tool: ToolFn, mut function: ItemFn) -> TokenStream {
    let krate = &tool.krate;
    let private = quote! { #krate::__private };
    let ident = function.sig.ident.clone();
    let vis = function.vis.clone();
    let (docs, attrs): (Vec<Attribute>, Vec<Attribute>) =
        function.attrs.drain(..).partition(|attr| attr.path().is_ident("doc"));
    for input in &mut function.sig.inputs {
        if let FnArg::Typed(typed) = input {
            typed.attrs.clear();
        }
    }
    function.sig.ident = Ident::new("call", ident.span());
    let sig = &function.sig;
    let block = &function.block;

    let args = Ident::new("args", Span::mixed_site());
    let turn = Ident::new("turn", Span::mixed_site());
    let uses_turn = tool.params.iter().any(|param| matches!(param, Param::Turn));
    let turn_param = if uses_turn { turn.clone() } else { Ident::new("_turn", Span::mixed_site()) };
    let call_args = tool.params.iter().map(|param| match param {
        Param::Argument(field) => {
            let field = &field.ident;
            quote! { #field }
        }
        Param::Struct(_) => quote! { #args },
        Param::Turn => quote! { #turn },
    });

    let (args_type, args_struct, bind) = match &tool.form {
        Form::Struct(ty) => (quote! { #ty }, TokenStream::new(), TokenStream::new()),
        Form::Generated(args_ident) => {
            let fields: Vec<&Field> = tool
                .params
                .iter()
                .filter_map(|param| match param {
                    Param::Argument(field) => Some(field),
                    _ => None,
                })
                .collect();
            let names = fields.iter().map(|field| &field.ident);
            let bind = quote! { let #args_ident { #(#names),* } = #args; };
            let definition = arguments_struct(&tool, args_ident, &fields, &vis, &ident, &private);
            (quote! { #args_ident }, definition, bind)
        }
    };

    let (output, error, into) = match &tool.returns {
        Returns::Result(ty) => {
            let span = ty.span();
            (
                quote_spanned! {span=> <#ty as #private::ToolReturn>::Output },
                quote_spanned! {span=> <#ty as #private::ToolReturn>::Error },
                quote_spanned! {span=> <#ty as #private::ToolReturn>::into_result },
            )
        }
        Returns::Plain(ty) => {
            (quote! { #ty }, quote! { #private::Infallible }, quote! { #private::Result::Ok })
        }
    };
    let future_span = tool.future_span;
    let returns = quote_spanned! {future_span=>
        impl #private::CoreFuture<Output = #private::Result<#output, #error>> + #private::CoreSend
    };
    let name = &tool.name;
    let description = &tool.description;

    let wants_call_id = tool.call_id.then(|| quote! { const WANTS_CALL_ID: bool = true; });
    let sequential = tool.sequential.then(|| quote! { const SEQUENTIAL: bool = true; });
    let idempotent = tool.idempotent.then(|| quote! { const IDEMPOTENT: bool = true; });
    let unit = crate::hook::expand::unit_type(&ident, &vis, &docs, false);
    quote! {
        #unit

        impl #ident {
            #(#docs)*
            #(#attrs)*
            #vis #sig #block
        }

        #args_struct

        impl #private::Tool for #ident {
            const NAME: &'static #private::str = #name;
            #wants_call_id
            #sequential
            #idempotent
            type Args = #args_type;
            type Output = #output;
            type Error = #error;

            fn description(&self) -> &#private::str {
                #description
            }

            fn call(&self, #args: #args_type, #turn_param: &#private::Turn) -> #returns {
                #bind
                #private::converted(#ident::call(#(#call_args),*), #into)
            }
        }
    }
}

/// The arguments struct: a field per parameter, its doc comment the field's description.
fn arguments_struct(
    tool: &ToolFn,
    args_ident: &Ident,
    fields: &[&Field],
    vis: &syn::Visibility,
    tool_ident: &Ident,
    private: &TokenStream,
) -> TokenStream {
    let path_of = |suffix: &str| {
        LitStr::new(&format!("{}::__private::{suffix}", quote_path(&tool.krate)), Span::call_site())
    };
    let serde_crate = path_of("serde");
    let schemars_crate = path_of("schemars");
    let doc = format!(
        "The arguments of the [`{tool_ident}`](struct@{tool_ident}) tool, as the model sends them."
    );

    let mut definitions = Vec::new();
    let mut helpers = Vec::new();
    for field in fields {
        let Field { ident, ty, docs, attrs, supplied, optional } = field;
        let span = ty.span();
        let bare = ident.unraw();
        let deserialize = format_ident!("__deserialize_{}", bare);
        let serialize = format_ident!("__serialize_{}", bare);
        let schema = format_ident!("__schema_{}", bare);
        let helper_path = |helper: &Ident| LitStr::new(&format!("{args_ident}::{helper}"), span);
        let (deserialize_with, serialize_with, schema_with) =
            (helper_path(&deserialize), helper_path(&serialize), helper_path(&schema));
        // What the user's own attributes say is theirs: serde refuses a key given twice.
        let deserialize_with = (!supplied.deserialize)
            .then(|| quote! { #[serde(deserialize_with = #deserialize_with)] });
        let serialize_with =
            (!supplied.serialize).then(|| quote! { #[serde(serialize_with = #serialize_with)] });
        let default = (*optional && !supplied.default).then(|| quote! { #[serde(default)] });
        let skip_none = (*optional && !supplied.skip_serializing_if)
            .then(|| quote! { #[serde(skip_serializing_if = "::core::option::Option::is_none")] });
        let schema_with =
            (!supplied.schema).then(|| quote! { #[schemars(schema_with = #schema_with)] });
        definitions.push(quote! {
            #(#docs)*
            #(#attrs)*
            #deserialize_with
            #serialize_with
            #default
            #skip_none
            #schema_with
            #vis #ident: #ty,
        });
        // The one bound a type that cannot be an argument fails, at the user's type.
        let deserialized = quote_spanned! {span=>
            <#ty as #private::ToolArgument>::deserialize_argument(deserializer)
        };
        if !supplied.deserialize {
            helpers.push(quote! {
                #[doc(hidden)]
                fn #deserialize<'de, D: #private::serde::Deserializer<'de>>(
                    deserializer: D,
                ) -> #private::Result<#ty, D::Error> {
                    #deserialized
                }
            });
        }
        if !supplied.serialize {
            helpers.push(quote! {
                #[doc(hidden)]
                fn #serialize<S: #private::serde::Serializer>(
                    value: &#ty,
                    serializer: S,
                ) -> #private::Result<S::Ok, S::Error> {
                    #[allow(unused_imports)]
                    use #private::{SerializeArgument as _, SerializeFallback as _};
                    (&&#private::Probe::<#ty>::new()).serialize_argument(value, serializer)
                }
            });
        }
        if !supplied.schema {
            helpers.push(quote! {
                #[doc(hidden)]
                fn #schema(
                    generator: &mut #private::schemars::SchemaGenerator,
                ) -> #private::schemars::Schema {
                    #[allow(unused_imports)]
                    use #private::{ArgumentSchema as _, ArgumentSchemaFallback as _};
                    (&&#private::Probe::<#ty>::new()).argument_schema(generator)
                }
            });
        }
    }
    quote! {
        #[doc = #doc]
        #[derive(#private::serde::Deserialize, #private::serde::Serialize, #private::schemars::JsonSchema)]
        #[serde(crate = #serde_crate, deny_unknown_fields)]
        #[schemars(crate = #schemars_crate, transform = #private::undocumented_root)]
        #vis struct #args_ident {
            #(#definitions)*
        }

        impl #args_ident {
            #(#helpers)*
        }
    }
}

/// The crate's path as text, without the spaces `ToTokens` puts between its tokens.
fn quote_path(path: &syn::Path) -> String {
    quote! { #path }.to_string().replace(' ', "")
}
