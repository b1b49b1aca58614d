//! Validation of a `#[tool]` function: what the syntax shows is checked here, each violation a
//! `syn::Error` at the user's token, all reported together. That each argument deserializes, and
//! the output serializes, are trait bounds in `agentix::__private`.

use proc_macro2::Span;
use syn::ext::IdentExt;
use syn::{Attribute, Expr, FnArg, Ident, ItemFn, Lit, LitStr, Pat, Path, ReturnType, Type};

use crate::hook::parse::{Args, Value, Word};
use crate::hook::validate::{Errors, NOT_A_CRATE_PATH, crate_path};

/// A tool that passed every check the syntax allows.
pub struct ToolFn {
    pub krate: Path,
    pub name: LitStr,
    pub description: LitStr,
    /// The parameters, in the user's order.
    pub params: Vec<Param>,
    /// What the arguments are: a struct generated from the parameters, or the user's own.
    pub form: Form,
    pub returns: Returns,
    /// Where errors about the tool's future (it must be `Send`) point: the user's `async`.
    pub future_span: Span,
    /// `#[tool(call_id)]`: the tool reads its call's id from the turn.
    pub call_id: bool,
    /// `#[tool(sequential)]`: a call of the tool runs alone.
    pub sequential: bool,
    /// `#[tool(idempotent)]`: a call of the tool may be made again to the same effect.
    pub idempotent: bool,
}

pub enum Param {
    /// An argument the model sends: a field of the arguments.
    Argument(Field),
    /// The user's own arguments struct, whole (`args: MyArgs`).
    Struct(Type),
    /// The turn, `&Turn`.
    Turn,
}

/// One parameter as a field of the generated arguments struct.
pub struct Field {
    pub ident: Ident,
    pub ty: Type,
    /// Its doc comment: the field's description in the schema.
    pub docs: Vec<Attribute>,
    /// `#[serde(...)]` and `#[schemars(...)]`, moved to the field as written.
    pub attrs: Vec<Attribute>,
    /// What those attributes already say, which the generated ones then leave to them.
    pub supplied: Supplied,
    /// An `Option<...>`: the model may leave it out.
    pub optional: bool,
}

/// Field attributes the user wrote that the generated ones would repeat or contradict.
#[derive(Default)]
pub struct Supplied {
    /// `#[serde(default)]` or `default = "..."`.
    pub default: bool,
    /// `#[serde(with = ...)]` or `deserialize_with = ...`.
    pub deserialize: bool,
    /// `#[serde(with = ...)]` or `serialize_with = ...`.
    pub serialize: bool,
    /// `#[serde(skip_serializing_if = ...)]`.
    pub skip_serializing_if: bool,
    /// `#[schemars(with = ...)]` or `schema_with = ...`.
    pub schema: bool,
}

impl Supplied {
    fn read(attrs: &[Attribute]) -> Self {
        let mut supplied = Supplied::default();
        for attribute in attrs {
            let serde = attribute.path().is_ident("serde");
            for key in top_level_keys(attribute) {
                match (serde, key.as_str()) {
                    (true, "default") => supplied.default = true,
                    (true, "with") => (supplied.deserialize, supplied.serialize) = (true, true),
                    (true, "deserialize_with") => supplied.deserialize = true,
                    (true, "serialize_with") => supplied.serialize = true,
                    (true, "skip_serializing_if") => supplied.skip_serializing_if = true,
                    (false, "with" | "schema_with") => supplied.schema = true,
                    _ => {}
                }
            }
        }
        supplied
    }
}

/// The keys of an attribute's list, `#[serde(default, with = "m")]` → `default`, `with`.
fn top_level_keys(attribute: &Attribute) -> Vec<String> {
    let syn::Meta::List(list) = &attribute.meta else { return Vec::new() };
    let mut keys = Vec::new();
    let mut at_key = true;
    for token in list.tokens.clone() {
        match token {
            proc_macro2::TokenTree::Ident(ident) if at_key => {
                keys.push(ident.to_string());
                at_key = false;
            }
            proc_macro2::TokenTree::Punct(punct) if punct.as_char() == ',' => at_key = true,
            _ => at_key = false,
        }
    }
    keys
}

pub enum Form {
    /// The arguments struct is generated, named this, from the `Argument` parameters.
    Generated(Ident),
    /// The user's struct, the one `Struct` parameter's type.
    Struct(Type),
}

pub enum Returns {
    /// `Result<T, E>` (or an alias ending in `Result`): the tool can fail.
    Result(Type),
    /// Any other type (`()` when none is written): the tool cannot fail.
    Plain(Type),
}

const WORDS: &str = "name, description, crate, call_id, sequential, idempotent";

pub fn validate(args: Args, function: &ItemFn) -> Result<ToolFn, syn::Error> {
    let mut errors = Errors::default();
    let mut name = None;
    let mut description = None;
    let mut krate = None;
    let mut call_id = false;
    let mut sequential = false;
    let mut idempotent = false;
    for Word { key, value } in args.words {
        match (key.to_string().as_str(), value) {
            ("idempotent", None) if !idempotent => idempotent = true,
            ("idempotent", None) => {
                errors.push(key.span(), "duplicate `idempotent` in `#[tool(...)]`")
            }
            ("idempotent", Some(_)) => errors.push(
                key.span(),
                "`idempotent` is a word, not a setting: `#[tool(idempotent)]` says a call of the \
                 tool may be made again to the same effect",
            ),
            ("sequential", None) if !sequential => sequential = true,
            ("sequential", None) => {
                errors.push(key.span(), "duplicate `sequential` in `#[tool(...)]`")
            }
            ("sequential", Some(_)) => errors.push(
                key.span(),
                "`sequential` is a word, not a setting: `#[tool(sequential)]` runs each call of \
                 the tool alone, never beside the step's other calls",
            ),
            ("call_id", None) if !call_id => call_id = true,
            ("call_id", None) => errors.push(key.span(), "duplicate `call_id` in `#[tool(...)]`"),
            ("call_id", Some(_)) => errors.push(
                key.span(),
                "`call_id` is a word, not a setting: `#[tool(call_id)]` hands the tool its call's \
                 id (`turn.tool_call_id()`)",
            ),
            ("name", Some(Value::Str(text))) if name.is_none() => name = Some(text),
            ("description", Some(Value::Str(text))) if description.is_none() => {
                description = Some(text)
            }
            ("crate", Some(Value::Str(text))) if krate.is_none() => match crate_path(&text) {
                Some(path) => krate = Some(path),
                None => errors.push(text.span(), NOT_A_CRATE_PATH),
            },
            (word @ ("name" | "description" | "crate"), Some(Value::Str(_))) => {
                errors.push(key.span(), format!("duplicate `{word}` in `#[tool(...)]`"))
            }
            (word @ ("name" | "description" | "crate"), _) => errors
                .push(key.span(), format!("`{word}` takes a string, as in `{word} = \"...\"`")),
            (other, _) => errors.push(
                key.span(),
                match crate::hook::validate::suggestion(other, WORDS.split(", ")) {
                    Some(close) => {
                        format!("unknown tool attribute `{other}`: did you mean `{close}`?")
                    }
                    None => format!("unknown tool attribute `{other}`; expected one of: {WORDS}"),
                },
            ),
        }
    }
    crate::hook::validate::check_fn(
        function,
        "tool",
        "the model is shown one schema, of one concrete type",
        &mut errors,
    );

    let ident = &function.sig.ident;
    let name = name.unwrap_or_else(|| LitStr::new(&ident.unraw().to_string(), ident.span()));
    if !name.value().chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        || name.value().is_empty()
        || name.value().len() > 64
    {
        errors.push(
            name.span(),
            "a tool's name is 1 to 64 letters, digits, `_` or `-`: what every provider accepts",
        );
    }
    let description = match description {
        Some(description) => Some(description),
        None => doc_text(&function.attrs, &mut errors)
            .map(|text| LitStr::new(&text, function.sig.ident.span())),
    };
    let description = description.unwrap_or_else(|| {
        errors.push(
            function.sig.ident.span(),
            "a tool needs a description, for the model: write a doc comment (`/// ...`) above \
             the fn, or `#[tool(description = \"...\")]`",
        );
        LitStr::new("", Span::call_site())
    });

    let params = read_params(function, &mut errors);
    let structs = params.iter().filter(|param| matches!(param, Param::Struct(_))).count();
    let arguments = params.iter().filter(|param| matches!(param, Param::Argument(_))).count();
    let form = match params.iter().find_map(|param| match param {
        Param::Struct(ty) => Some(ty.clone()),
        _ => None,
    }) {
        Some(ty) if structs == 1 && arguments == 0 => Form::Struct(ty),
        Some(ty) => {
            errors.push_spanned(
                &ty,
                "`args` takes the tool's whole arguments struct, so it is the one argument: \
                 give the others a name other than `args`, or put them in the struct",
            );
            Form::Struct(ty)
        }
        None => {
            let pascal = pascal_case(&ident.unraw().to_string());
            Form::Generated(Ident::new(&format!("{pascal}Args"), ident.span()))
        }
    };

    let returns = match &function.sig.output {
        ReturnType::Default => {
            Returns::Plain(syn::parse_quote_spanned!(function.sig.paren_token.span.close()=> ()))
        }
        ReturnType::Type(_, ty) if names_result(ty) => Returns::Result((**ty).clone()),
        ReturnType::Type(_, ty) => Returns::Plain((**ty).clone()),
    };

    if let Some(errors) = errors.0 {
        return Err(errors);
    }
    Ok(ToolFn {
        krate: krate.unwrap_or_else(|| syn::parse_quote!(::agentix)),
        name,
        description,
        params,
        form,
        returns,
        future_span: function.sig.asyncness.map_or(ident.span(), |asyncness| asyncness.span),
        call_id,
        sequential,
        idempotent,
    })
}

/// Each parameter's role: the turn, the whole arguments struct (named `args`), or an argument.
fn read_params(function: &ItemFn, errors: &mut Errors) -> Vec<Param> {
    let mut params = Vec::new();
    let mut turn_seen = false;
    for input in &function.sig.inputs {
        let typed = match input {
            FnArg::Receiver(receiver) => {
                errors.push_spanned(
                    receiver,
                    "a tool is a free function and cannot take `self`; to give a tool state, \
                     implement `agentix::Tool` for your type",
                );
                continue;
            }
            FnArg::Typed(typed) => typed,
        };
        let ty = (*typed.ty).clone();
        if let Some(mutable) = turn_reference(&ty) {
            if let Some(mutability) = mutable {
                errors.push(
                    mutability.span,
                    "a tool reads the turn through `&Turn`, not `&mut Turn`: it runs inside the \
                     `wrap_tool` hooks, which hold the turn; a hook that changes the turn is an \
                     `after_tool` hook",
                );
            } else if turn_seen {
                errors.push_spanned(&ty, "a tool takes the turn once");
            }
            turn_seen = true;
            params.push(Param::Turn);
            continue;
        }
        if is_turn(&ty) {
            errors.push_spanned(&ty, "a tool takes the turn by reference: `&Turn`");
            continue;
        }
        let ident = match &*typed.pat {
            Pat::Ident(pat) if pat.by_ref.is_none() && pat.subpat.is_none() => pat.ident.clone(),
            other => {
                errors.push_spanned(
                    other,
                    "a tool's parameter is a name, as in `city: String`: the name is the \
                     argument's name in the schema the model sees",
                );
                continue;
            }
        };
        if let Type::Reference(reference) = &ty {
            errors.push_spanned(
                reference,
                "a tool's argument is owned: it is deserialized from the model's JSON (take \
                 `String`, not `&str`; `Vec<T>`, not `&[T]`)",
            );
            continue;
        }
        if let Type::ImplTrait(_) = &ty {
            errors
                .push_spanned(&ty, "a tool cannot be generic: an argument cannot be `impl Trait`");
            continue;
        }
        let (docs, attrs) = field_attrs(&typed.attrs, errors);
        if ident == "args" {
            if let Some(attribute) = docs.iter().chain(&attrs).next() {
                errors.push_spanned(
                    attribute,
                    "`args` is the tool's whole arguments struct: its doc comments and \
                     attributes go on the struct's fields",
                );
            }
            params.push(Param::Struct(ty));
            continue;
        }
        let optional = is_option(&ty);
        let supplied = Supplied::read(&attrs);
        params.push(Param::Argument(Field { ident, ty, docs, attrs, supplied, optional }));
    }
    params
}

/// A parameter's doc comment, and its `serde`/`schemars` attributes; anything else is an error.
fn field_attrs(attrs: &[Attribute], errors: &mut Errors) -> (Vec<Attribute>, Vec<Attribute>) {
    let mut docs = Vec::new();
    let mut kept = Vec::new();
    for attribute in attrs {
        if attribute.path().is_ident("doc") {
            docs.push(attribute.clone());
        } else if attribute.path().is_ident("serde") || attribute.path().is_ident("schemars") {
            kept.push(attribute.clone());
        } else {
            errors.push_spanned(
                attribute,
                "a tool's parameter takes a doc comment (its description for the model) and \
                 `#[serde(...)]` or `#[schemars(...)]` attributes, nothing else",
            );
        }
    }
    (docs, kept)
}

/// The doc comment's text, as rustdoc reads it: one leading space off each line, trimmed.
fn doc_text(attrs: &[Attribute], errors: &mut Errors) -> Option<String> {
    let mut lines = Vec::new();
    for attribute in attrs.iter().filter(|attribute| attribute.path().is_ident("doc")) {
        match &attribute.meta {
            // `#[doc(hidden)]`, `#[doc(alias = "...")]`: about the function, not its text.
            syn::Meta::List(_) => {}
            syn::Meta::NameValue(pair) => match &pair.value {
                Expr::Lit(syn::ExprLit { lit: Lit::Str(text), .. }) => {
                    let text = text.value();
                    for line in text.split('\n') {
                        lines.push(line.strip_prefix(' ').unwrap_or(line).trim_end().to_owned());
                    }
                }
                other => errors.push_spanned(
                    other,
                    "a tool's description is its doc comment as written: use \
                     `#[tool(description = \"...\")]` for one made otherwise",
                ),
            },
            other => errors.push_spanned(other, "a doc attribute is `#[doc = \"...\"]`"),
        }
    }
    let text = lines.join("\n").trim().to_owned();
    (!text.is_empty()).then_some(text)
}

/// `Some(mutability)` if `ty` is a reference to `Turn` (by its last path segment).
fn turn_reference(ty: &Type) -> Option<Option<syn::token::Mut>> {
    match ty {
        Type::Reference(reference) if is_turn(&reference.elem) => Some(reference.mutability),
        Type::Paren(inner) => turn_reference(&inner.elem),
        _ => None,
    }
}

fn is_turn(ty: &Type) -> bool {
    last_segment(ty).is_some_and(|segment| segment.ident == "Turn" && segment.arguments.is_none())
}

fn is_option(ty: &Type) -> bool {
    last_segment(ty).is_some_and(|segment| {
        segment.ident == "Option"
            && matches!(segment.arguments, syn::PathArguments::AngleBracketed(_))
    })
}

fn names_result(ty: &Type) -> bool {
    last_segment(ty).is_some_and(|segment| segment.ident == "Result")
}

fn last_segment(ty: &Type) -> Option<&syn::PathSegment> {
    match ty {
        Type::Path(path) if path.qself.is_none() => path.path.segments.last(),
        Type::Group(group) => last_segment(&group.elem),
        Type::Paren(paren) => last_segment(&paren.elem),
        _ => None,
    }
}

/// `get_weather` → `GetWeather`.
fn pascal_case(name: &str) -> String {
    name.split(['_', '-'])
        .filter(|word| !word.is_empty())
        .map(|word| {
            let mut chars = word.chars();
            let first = chars.next().map(|c| c.to_ascii_uppercase());
            first.into_iter().chain(chars).collect::<String>()
        })
        .collect()
}
