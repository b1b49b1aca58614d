//! Parsing: the attribute's words, as written. Meaning and checks come in `validate`.

use syn::ext::IdentExt;
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{Ident, LitInt, LitStr, Path, Token};

/// The attribute's arguments: `EVENT [, parallel] [, durable] [, name = "..."] [, when = path]
/// [, timeout = "2s" | timeout_ms = 2000] [, on_error = skip] [, crate = "..."]`, in any order.
pub struct Args {
    pub words: Vec<Word>,
}

/// One argument: a bare word, or `word = value`.
pub struct Word {
    pub key: Ident,
    pub value: Option<Value>,
}

/// The value after `=`.
pub enum Value {
    Str(LitStr),
    Int(LitInt),
    Path(Path),
}

impl Parse for Args {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let words = Punctuated::<Word, Token![,]>::parse_terminated(input)?;
        Ok(Args { words: words.into_iter().collect() })
    }
}

impl Parse for Word {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        // `parse_any` accepts keywords, so `crate = "..."` parses like any other word.
        let key = Ident::parse_any(input)?;
        let value = if input.peek(Token![=]) {
            input.parse::<Token![=]>()?;
            if input.peek(LitStr) {
                Some(Value::Str(input.parse()?))
            } else if input.peek(LitInt) {
                Some(Value::Int(input.parse()?))
            } else if input.peek(syn::LitBool) {
                // Read as a word (`true`, `false`), so that a flag given a value gets the flag's
                // own error, not a parser's.
                let flag: syn::LitBool = input.parse()?;
                let word = if flag.value { "true" } else { "false" };
                Some(Value::Path(Ident::new(word, flag.span).into()))
            } else {
                Some(Value::Path(input.parse()?))
            }
        } else {
            None
        };
        Ok(Word { key, value })
    }
}

impl quote::ToTokens for Value {
    fn to_tokens(&self, tokens: &mut proc_macro2::TokenStream) {
        match self {
            Value::Str(literal) => literal.to_tokens(tokens),
            Value::Int(literal) => literal.to_tokens(tokens),
            Value::Path(path) => path.to_tokens(tokens),
        }
    }
}
