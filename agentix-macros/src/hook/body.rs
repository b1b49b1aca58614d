//! What a hook's body and its attributes say, read from their tokens: whether it may await
//! (it then cannot run in place), and whether it calls `inject` (which a parallel hook cannot).

use proc_macro2::{Spacing, Span, TokenStream, TokenTree};

/// Whether an attribute only documents the function or sets a lint level.
pub fn is_doc_or_lint(attribute: &syn::Attribute) -> bool {
    ["doc", "allow", "expect", "warn", "deny", "forbid"]
        .iter()
        .any(|name| attribute.path().is_ident(name))
}

/// Macros that expand to an `.await` only when their arguments hold one: the standard library's
/// formatting, assertion and panic macros, and the `log` and `tracing` levels.
const MACROS_THAT_DO_NOT_AWAIT: &[&str] = &[
    "format",
    "format_args",
    "print",
    "println",
    "eprint",
    "eprintln",
    "write",
    "writeln",
    "vec",
    "assert",
    "assert_eq",
    "assert_ne",
    "debug_assert",
    "debug_assert_eq",
    "debug_assert_ne",
    "panic",
    "unreachable",
    "todo",
    "unimplemented",
    "matches",
    "dbg",
    "concat",
    "stringify",
    "trace",
    "debug",
    "info",
    "warn",
    "error",
];

/// Whether the tokens may await: an `await` anywhere (nested blocks and macro arguments
/// included), or a call of a macro whose expansion cannot be seen from here and is not known
/// not to await.
pub fn awaits(tokens: TokenStream) -> bool {
    let mut trees = tokens.into_iter().peekable();
    while let Some(tree) = trees.next() {
        let awaits = match &tree {
            TokenTree::Ident(ident) if ident == "await" => true,
            TokenTree::Ident(ident) => {
                let called = matches!(trees.peek(), Some(TokenTree::Punct(bang))
                    if bang.as_char() == '!' && bang.spacing() == Spacing::Alone);
                called && !MACROS_THAT_DO_NOT_AWAIT.iter().any(|name| ident == name)
            }
            TokenTree::Group(group) => awaits(group.stream()),
            TokenTree::Punct(_) | TokenTree::Literal(_) => false,
        };
        if awaits {
            return true;
        }
    }
    false
}

/// Where the tokens call a method named `inject`: `.inject(`, nested groups included.
pub fn calls_inject(tokens: TokenStream) -> Option<Span> {
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    for (index, tree) in trees.iter().enumerate() {
        match tree {
            TokenTree::Ident(ident) if ident == "inject" => {
                let after_dot = index > 0
                    && matches!(&trees[index - 1], TokenTree::Punct(dot) if dot.as_char() == '.');
                let called = matches!(trees.get(index + 1), Some(TokenTree::Group(group))
                    if group.delimiter() == proc_macro2::Delimiter::Parenthesis);
                if after_dot && called {
                    return Some(ident.span());
                }
            }
            TokenTree::Group(group) => {
                if let Some(span) = calls_inject(group.stream()) {
                    return Some(span);
                }
            }
            _ => {}
        }
    }
    None
}
