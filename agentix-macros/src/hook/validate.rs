//! Validation: the attribute and the function against the rules the syntax can show. Every
//! violation becomes a `syn::Error` spanned at the user's offending token; all of them are
//! reported together. Rules that need types are trait bounds in `agentix::__private`.

use proc_macro2::Span;
use quote::ToTokens;
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{FnArg, Ident, ItemFn, LitStr, Path, ReturnType, Type};

use crate::hook::body::{awaits, calls_inject, is_doc_or_lint};
use crate::hook::events::Event;
use crate::hook::parse::{Args, Value, Word};

/// What a parameter receives, by position.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Value,
    Turn,
    Next,
    /// A session hook's last parameter: the session's state.
    Session,
}

/// A parameter's role and the type the user wrote.
pub struct Param {
    pub role: Role,
    pub ty: Type,
}

/// A hook that passed every check the syntax allows.
pub struct Hook {
    pub event: Event,
    pub parallel: bool,
    pub durable: bool,
    pub name: LitStr,
    pub when: Option<Path>,
    /// `tools = "..."`: the glob over tool names whose calls the hook runs on.
    pub tools: Option<LitStr>,
    /// The hook's timeout, in milliseconds.
    pub timeout_ms: Option<u64>,
    /// Whether the hook's failure is skipped (`on_error = skip`), not the turn's.
    pub skip_on_error: bool,
    pub krate: Path,
    /// The tool of a per-tool hook (`tool = get_weather`): it runs on that tool's calls only,
    /// and receives its typed arguments.
    pub tool: Option<Path>,
    /// The type a `before_final` hook reads a typed agent's answer as: its value's, when that
    /// is a borrow of another type than `AssistantMessage`.
    pub answer: Option<Type>,
    pub params: Vec<Param>,
    pub output: Type,
    /// Where errors about the hook's future (it must be `Send`) point: the user's `async`.
    pub future_span: Span,
    /// Whether the hook can also run in place, with no future: a sequential hook on an event
    /// that is not a wrap, whose body never awaits, and whose attributes (lint levels only)
    /// mean the same on a plain function as on an `async` one.
    pub runs_in_place: bool,
}

const WORDS: &str = "pre, before_model, tripwire, wrap_model, after_model, before_tool, wrap_tool, after_tool, \
                     tool_error, before_final, post, session_start, task_start, step_start, \
                     plan_submit, task_complete, plan_complete, all_tasks_complete, session_end, \
                     parallel, durable, name, when, tool, tools, timeout, timeout_ms, on_error, crate";

/// Names the seeds and peers use, and the agentix event they mean.
const ALIASES: [(&str, &str); 27] = [
    ("before_llm_call", "before_model"),
    ("after_llm_call", "after_model"),
    ("before_tool_execution", "before_tool"),
    ("after_tool_execution", "after_tool"),
    ("on_tool_error", "tool_error"),
    ("before_final_response", "before_final"),
    ("query_end", "post"),
    ("before_agent", "pre"),
    ("after_agent", "post"),
    ("wrap_model_call", "wrap_model"),
    ("wrap_tool_call", "wrap_tool"),
    ("on_turn_prepare", "before_model"),
    ("on_tool_call", "before_tool"),
    ("on_tool_result", "after_tool"),
    ("sequential", "pre"),
    ("on_session_start", "session_start"),
    ("on_agent_start", "session_start"),
    ("on_task_start", "task_start"),
    ("on_turn_start", "step_start"),
    ("on_plan_submit", "plan_submit"),
    ("on_task_submit", "plan_submit"),
    ("on_task_complete", "task_complete"),
    ("on_plan_complete", "plan_complete"),
    ("on_all_tasks_complete", "all_tasks_complete"),
    ("on_session_end", "session_end"),
    ("on_agent_end", "session_end"),
    ("transient", "durable` (leave it out for transient output"),
];

/// Collects errors so that every violation is reported at once.
#[derive(Default)]
pub struct Errors(pub Option<syn::Error>);

impl Errors {
    pub fn push(&mut self, span: Span, message: impl std::fmt::Display) {
        let error = syn::Error::new(span, message);
        match &mut self.0 {
            Some(errors) => errors.combine(error),
            None => self.0 = Some(error),
        }
    }

    pub fn push_spanned(&mut self, tokens: impl quote::ToTokens, message: impl std::fmt::Display) {
        let error = syn::Error::new_spanned(tokens, message);
        match &mut self.0 {
            Some(errors) => errors.combine(error),
            None => self.0 = Some(error),
        }
    }
}

pub fn validate(args: Args, function: &ItemFn) -> Result<Hook, syn::Error> {
    let mut errors = Errors::default();
    let attribute = read_words(args, &mut errors);
    check_signature(function, &mut errors);

    let Some((event, _)) = attribute.event else {
        if errors.0.is_none() {
            errors.push(
                Span::call_site(),
                format!(
                    "a hook needs an event, as in `#[hook(after_model)]`; expected one of: {WORDS}"
                ),
            );
        }
        return Err(errors.0.expect("an error was pushed"));
    };
    if let Some(span) = attribute.parallel
        && event != Event::Pre
    {
        let message = if event == Event::Tripwire {
            "`parallel` is legal only on `pre`: `tripwire` hooks already run at once, beside the \
             model call and each other"
                .to_owned()
        } else {
            format!(
                "`parallel` is legal only on `pre`: `{}` hooks run one at a time, in declaration order",
                event.word()
            )
        };
        errors.push(span, message);
    }
    if let Some(span) = attribute.durable
        && !matches!(event, Event::Pre | Event::Post)
    {
        errors.push(
            span,
            format!(
                "`durable` is legal only on `pre` and `post`: `{}` hooks produce no output for the log",
                event.word()
            ),
        );
    }
    let parallel = attribute.parallel.is_some() && event == Event::Pre;
    if let Some((true, span)) = attribute.on_error
        && !parallel
        && event != Event::Tripwire
    {
        errors.push(
            span,
            format!(
                "`on_error = skip` is legal only on `pre, parallel` and `tripwire` hooks: {} is a \
                 guard, and a guard fails closed ({})",
                match event {
                    Event::Pre => "a sequential `pre` hook".to_owned(),
                    other => format!("a `{}` hook", other.word()),
                },
                if event == Event::BeforeTool {
                    "its failure refuses the call"
                } else if event.is_session() {
                    "its failure ends the session"
                } else {
                    "its failure ends the turn"
                }
            ),
        );
    }
    if let Some(tool) = &attribute.tool
        && !matches!(event, Event::BeforeTool | Event::AfterTool | Event::ToolError)
    {
        errors.push_spanned(
            tool,
            format!(
                "`tool = ...` is legal only on `before_tool`, `after_tool` and `tool_error`: \
                 a hook on `{}` is not about one tool's calls",
                event.word()
            ),
        );
    }
    if let Some(when) = &attribute.when
        && event.is_session()
    {
        errors.push_spanned(
            when,
            format!(
                "`when` is legal only on a turn's events: a `{}` hook decides in its body \
                 whether to act",
                event.word()
            ),
        );
    }
    if let Some(pattern) = &attribute.tools {
        if !matches!(
            event,
            Event::BeforeTool | Event::WrapTool | Event::AfterTool | Event::ToolError
        ) {
            errors.push(
                pattern.span(),
                format!(
                    "`tools = ...` is legal only on `before_tool`, `wrap_tool`, `after_tool` and \
                     `tool_error`: a hook on `{}` is not about tool calls",
                    event.word()
                ),
            );
        } else if attribute.tool.is_some() {
            errors.push(pattern.span(), "a hook takes `tool = ...` (one typed tool) or `tools = \"...\"` (names by a glob), not both");
        } else if let Some(problem) = tool_pattern_problem(&pattern.value()) {
            errors.push(
                pattern.span(),
                format!("`tools = {:?}` is no tool pattern: {problem}", pattern.value()),
            );
        }
    }
    let params = check_params(function, event, parallel, &mut errors);
    let takes_mut_turn = params.iter().any(|param| {
        param.role == Role::Turn
            && matches!(&param.ty, Type::Reference(reference) if reference.mutability.is_some())
    });
    if event == Event::Tripwire
        && !takes_mut_turn
        && let Some(inject) = calls_inject(function.block.to_token_stream())
    {
        errors.push(
            inject,
            "a tripwire cannot inject: it runs beside the model call, whose request is already \
             sent, and can only pass or trip (`Trip::Pass`, `Trip::trip(reason)`); a hook that \
             injects is a `pre` or `before_model` hook",
        );
    }
    if parallel
        && !takes_mut_turn
        && let Some(inject) = calls_inject(function.block.to_token_stream())
    {
        errors.push(
            inject,
            "a parallel hook cannot inject: it runs beside the group's other hooks, so it \
             returns its content (`Vec<Part>`, `Part`, `Option<Part>` or `String`), which the \
             group injects in declaration order",
        );
    }
    if event == Event::Post
        && let ReturnType::Type(_, ty) = &function.sig.output
        && last_ident(ty).is_some_and(|ident| ident == "Outcome")
    {
        errors.push_spanned(
            ty,
            "a `post` hook cannot return `Outcome`: the turn has ended, and its outcome can be \
             read, not changed; return `()`, `Verdict<Post>` or a `Result` of one of these",
        );
    }

    if let Some(errors) = errors.0 {
        return Err(errors);
    }
    let output = match &function.sig.output {
        // No return type: `()`, placed where one would be written.
        ReturnType::Default => {
            syn::parse_quote_spanned!(function.sig.paren_token.span.close()=> ())
        }
        ReturnType::Type(_, ty) => (**ty).clone(),
    };
    let ident = &function.sig.ident;
    let answer = (event == Event::BeforeFinal).then(|| typed_answer(&params)).flatten();
    Ok(Hook {
        event,
        parallel,
        durable: attribute.durable.is_some(),
        name: attribute
            .name
            .unwrap_or_else(|| LitStr::new(&ident.unraw().to_string(), ident.span())),
        when: attribute.when,
        tools: attribute.tools,
        timeout_ms: attribute.timeout.as_ref().map(|(millis, _)| *millis),
        skip_on_error: matches!(attribute.on_error, Some((true, _))),
        krate: attribute.krate.unwrap_or_else(|| syn::parse_quote!(::agentix)),
        runs_in_place: attribute.tool.is_none()
            && answer.is_none()
            && !event.is_session()
            && !parallel
            && !event.is_wrap()
            && event != Event::Tripwire
            && attribute.timeout.is_none()
            && function.attrs.iter().all(is_doc_or_lint)
            && !awaits(function.block.to_token_stream()),
        tool: attribute.tool,
        answer,
        params,
        output,
        future_span: function.sig.asyncness.map_or(ident.span(), |asyncness| asyncness.span),
    })
}

/// What is wrong with a glob over tool names, as `agentix::tool::ToolPattern::new` says it.
fn tool_pattern_problem(pattern: &str) -> Option<String> {
    if pattern.is_empty() {
        return Some("it is empty".to_owned());
    }
    pattern
        .chars()
        .find(|&c| !(c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '*' | '?')))
        .map(|c| {
            format!("`{c}` is in no tool name (letters, digits, `_`, `-`, `.`; `*` and `?` match)")
        })
}

/// The last segment's name of a path type.
fn last_ident(ty: &Type) -> Option<&Ident> {
    match ty {
        Type::Path(path) => path.path.segments.last().map(|segment| &segment.ident),
        Type::Group(group) => last_ident(&group.elem),
        Type::Paren(paren) => last_ident(&paren.elem),
        _ => None,
    }
}

/// The attribute's words, read into their slots; each problem is one error at its word.
#[derive(Default)]
struct Attribute {
    event: Option<(Event, Ident)>,
    parallel: Option<Span>,
    durable: Option<Span>,
    name: Option<LitStr>,
    when: Option<Path>,
    /// The timeout in milliseconds, and the word that set it.
    timeout: Option<(u64, Ident)>,
    /// `on_error = skip` (true) or `fail`, and where it was written.
    on_error: Option<(bool, Span)>,
    krate: Option<Path>,
    tool: Option<Path>,
    tools: Option<LitStr>,
}

fn read_words(args: Args, errors: &mut Errors) -> Attribute {
    let mut attribute = Attribute::default();
    let mut seen: Vec<String> = Vec::new();
    for Word { key, value } in args.words {
        let word = key.to_string();
        if seen.contains(&word) {
            errors.push(key.span(), format!("duplicate `{word}` in `#[hook(...)]`"));
            continue;
        }
        seen.push(word.clone());
        match (word.as_str(), value) {
            (_, value) if Event::from_word(&word).is_some() => {
                let event = Event::from_word(&word).expect("checked");
                if let Some(value) = value {
                    errors.push(value_span(&value), format!("`{word}` takes no value"));
                } else if let Some((first, first_key)) = &attribute.event {
                    errors.push(
                        key.span(),
                        format!(
                            "a hook attaches to one event, but this one names `{}` and `{word}`; \
                             write one hook per event (`{first_key}` stays)",
                            first.word()
                        ),
                    );
                } else {
                    attribute.event = Some((event, key));
                }
            }
            ("parallel", None) => attribute.parallel = Some(key.span()),
            ("durable", None) => attribute.durable = Some(key.span()),
            ("name", Some(Value::Str(name))) => attribute.name = Some(name),
            ("when", Some(Value::Path(path))) => attribute.when = Some(path),
            ("tool", Some(Value::Path(path))) => attribute.tool = Some(path),
            ("tools", Some(Value::Str(pattern))) => attribute.tools = Some(pattern),
            ("tools", value) => {
                let span = value.as_ref().map_or(key.span(), value_span);
                errors.push(
                    span,
                    "`tools` takes a glob over tool names, as in `tools = \"github__*\"`",
                );
            }
            ("tool", value) => {
                let span = value.as_ref().map_or(key.span(), value_span);
                errors.push(
                    span,
                    "`tool` takes the tool, as in `tool = get_weather` (a `#[tool]` function or \
                     a type implementing `agentix::Tool`)",
                );
            }
            ("timeout" | "timeout_ms", value) => {
                // Errors point at the word and its value.
                let written = match &value {
                    Some(value) => quote::quote!(#key = #value),
                    None => quote::quote!(#key),
                };
                let millis = match (word.as_str(), value) {
                    ("timeout", Some(Value::Str(text))) => parse_duration(&text.value())
                        .map_err(|why| format!("malformed `timeout`: {why}")),
                    ("timeout_ms", Some(Value::Int(number))) => {
                        match number.base10_parse::<u64>() {
                            Ok(0) => Err("a timeout must be more than zero".to_owned()),
                            Ok(millis) => Ok(millis),
                            Err(_) => {
                                Err("`timeout_ms` takes a whole number of milliseconds".to_owned())
                            }
                        }
                    }
                    ("timeout", _) => Err(
                        "`timeout` takes a duration, as in `timeout = \"2s\"` (units: ms, s, m, h)"
                            .to_owned(),
                    ),
                    _ => {
                        Err("`timeout_ms` takes milliseconds, as in `timeout_ms = 2000`".to_owned())
                    }
                };
                match (millis, &attribute.timeout) {
                    (Err(why), _) => errors.push_spanned(written, why),
                    (Ok(_), Some((_, first))) => errors.push(
                        key.span(),
                        format!("`{word}` and `{first}` both set the timeout: keep one"),
                    ),
                    (Ok(millis), None) => attribute.timeout = Some((millis, key.clone())),
                }
            }
            ("on_error", Some(Value::Path(path)))
                if path.is_ident("skip") || path.is_ident("fail") =>
            {
                attribute.on_error = Some((path.is_ident("skip"), key.span()));
            }
            ("on_error", value) => {
                let span = value.as_ref().map_or(key.span(), value_span);
                errors.push(
                    span,
                    "`on_error` takes `skip` (go on without the hook's content) or `fail` (the \
                     default: end the turn)",
                );
            }
            ("crate", Some(Value::Str(krate))) => match crate_path(&krate) {
                Some(path) => attribute.krate = Some(path),
                None => errors.push(krate.span(), NOT_A_CRATE_PATH),
            },
            ("parallel" | "durable", Some(value)) => {
                errors.push(value_span(&value), format!("`{word}` takes no value"));
            }
            ("name", value) => {
                let span = value.as_ref().map_or(key.span(), value_span);
                errors.push(span, "`name` takes a string, as in `name = \"require_plan\"`");
            }
            ("when", value) => {
                let span = value.as_ref().map_or(key.span(), value_span);
                errors.push(
                    span,
                    "`when` takes the path of a condition function, as in `when = has_plan`",
                );
            }
            ("crate", value) => {
                let span = value.as_ref().map_or(key.span(), value_span);
                errors.push(span, "`crate` takes a string, as in `crate = \"agentix\"`");
            }
            (other, _) => {
                let alias = ALIASES.iter().find(|(alias, _)| *alias == other);
                let message = match (alias, suggestion(other, WORDS.split(", "))) {
                    (Some((_, ours)), _) => format!(
                        "unknown hook attribute `{other}` (agentix calls it `{ours}`); expected \
                         one of: {WORDS}"
                    ),
                    (None, Some(close)) => {
                        format!("unknown hook attribute `{other}`: did you mean `{close}`?")
                    }
                    (None, None) => {
                        format!("unknown hook attribute `{other}`; expected one of: {WORDS}")
                    }
                };
                errors.push(key.span(), message);
            }
        }
    }
    attribute
}

fn value_span(value: &Value) -> Span {
    match value {
        Value::Str(literal) => literal.span(),
        Value::Int(literal) => literal.span(),
        Value::Path(path) => path.span(),
    }
}

/// Milliseconds of a duration written as numbers with units, as in `"2s"`, `"1.5s"`, `"250ms"`
/// or `"1m30s"`; why it is not one otherwise.
fn parse_duration(text: &str) -> Result<u64, String> {
    let text = text.trim();
    if text.is_empty() {
        return Err("it is empty; write a number and a unit, as in \"2s\"".to_owned());
    }
    let mut millis = 0f64;
    let mut rest = text;
    while !rest.is_empty() {
        let number_end =
            rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rest.len());
        let (number, after) = rest.split_at(number_end);
        let after = after.trim_start();
        let unit_end = after.find(|c: char| !c.is_ascii_alphabetic()).unwrap_or(after.len());
        let (unit, after) = after.split_at(unit_end);
        let value: f64 = number
            .parse()
            .map_err(|_| format!("`{rest}` does not start with a number; write it as in \"2s\""))?;
        let scale = match unit {
            "ms" => 1.0,
            "s" => 1_000.0,
            "m" => 60_000.0,
            "h" => 3_600_000.0,
            "" => return Err(format!("`{number}` has no unit; write `{number}s` or `{number}ms`")),
            other => return Err(format!("unknown unit `{other}`; expected ms, s, m or h")),
        };
        millis += value * scale;
        rest = after.trim_start();
    }
    if millis < 1.0 {
        return Err("a timeout must be at least 1ms".to_owned());
    }
    Ok(millis.round() as u64)
}

fn check_signature(function: &ItemFn, errors: &mut Errors) {
    check_fn(function, "hook", "each hook is one concrete type in the agent's pipeline", errors);
    if let Some(FnArg::Receiver(receiver)) = function.sig.inputs.first() {
        errors.push_spanned(
            receiver,
            "a hook is a free function and cannot take `self`; to hook events from a type, implement `agentix::Hook` for it",
        );
    }
}

/// What a `#[hook]` or `#[tool]` function (`item`) must be: a plain `async fn`, not generic
/// (`why_concrete` says why).
pub fn check_fn(function: &ItemFn, item: &str, why_concrete: &str, errors: &mut Errors) {
    let sig = &function.sig;
    if sig.asyncness.is_none() {
        errors.push(sig.fn_token.span, format!("a {item} must be an `async fn`: write `async fn`"));
    }
    if let Some(constness) = &sig.constness {
        errors.push(constness.span, format!("a {item} cannot be a `const fn`"));
    }
    if let Some(unsafety) = &sig.unsafety {
        errors.push(unsafety.span, format!("a {item} cannot be `unsafe`"));
    }
    if let Some(abi) = &sig.abi {
        errors.push_spanned(abi, format!("a {item} cannot have an `extern` ABI"));
    }
    if !sig.generics.params.is_empty() {
        errors.push_spanned(&sig.generics, format!("a {item} cannot be generic: {why_concrete}"));
    } else if let Some(where_clause) = &sig.generics.where_clause {
        errors.push_spanned(
            where_clause,
            format!("a {item} cannot have a `where` clause: it cannot be generic"),
        );
    }
    if let Some(variadic) = &sig.variadic {
        errors.push_spanned(variadic, format!("a {item} cannot be variadic"));
    }
}

/// The answer type of a `before_final` hook that takes `&T` or `&mut T` for a `T` that is not
/// `AssistantMessage` (by its last segment: the syntax is all there is to read, so an alias of
/// it reads as a type of answer). Another event's value in its place (`&ToolCall`, `&Turn`…)
/// is a mistake the value's own check names, not an answer type.
fn typed_answer(params: &[Param]) -> Option<Type> {
    const NOT_ANSWERS: [&str; 7] = [
        "AssistantMessage",
        "Turn",
        "ToolCall",
        "ToolResult",
        "ModelRequest",
        "Message",
        "Outcome",
    ];
    let value = params.iter().find(|param| param.role == Role::Value)?;
    let Type::Reference(reference) = &value.ty else { return None };
    let untyped = last_ident(&reference.elem)
        .is_some_and(|ident| NOT_ANSWERS.iter().any(|name| ident == name));
    (!untyped).then(|| (*reference.elem).clone())
}

/// Assigns each parameter its role by position, and rejects what no event provides.
fn check_params(
    function: &ItemFn,
    event: Event,
    parallel: bool,
    errors: &mut Errors,
) -> Vec<Param> {
    let inputs: Vec<&syn::PatType> = function
        .sig
        .inputs
        .iter()
        .filter_map(|input| match input {
            FnArg::Typed(typed) => Some(typed),
            FnArg::Receiver(_) => None,
        })
        .collect();
    let roles: &[Role] = match (event, inputs.len()) {
        (Event::SessionStart | Event::AllTasksComplete | Event::SessionEnd, _) => &[Role::Session],
        (event, _) if event.is_session() => &[Role::Value, Role::Session],
        (Event::Pre, _) => &[Role::Turn],
        (Event::WrapModel | Event::WrapTool, 0 | 1) => &[Role::Value],
        (Event::WrapModel | Event::WrapTool, 2) => &[Role::Value, Role::Next],
        (Event::WrapModel | Event::WrapTool, _) => &[Role::Value, Role::Turn, Role::Next],
        _ => &[Role::Value, Role::Turn],
    };
    if inputs.len() > roles.len() {
        let expected = match event {
            Event::Pre if parallel => {
                "a parallel hook on `pre` takes at most 1 parameter: the turn (`&Turn`)".to_owned()
            }
            Event::Pre => {
                "a hook on `pre` takes at most 1 parameter: the turn (`&mut Turn` or `&Turn`)"
                    .to_owned()
            }
            Event::WrapModel | Event::WrapTool => format!(
                "a hook on `{}` takes at most 3 parameters: {}, the turn (`&Turn`), then `next`",
                event.word(),
                event.value()
            ),
            Event::Tripwire => "a hook on `tripwire` takes at most 2 parameters: the request \
                                (`&ModelRequest`), then the turn (`&Turn`)"
                .to_owned(),
            Event::SessionStart | Event::AllTasksComplete | Event::SessionEnd => format!(
                "a hook on `{}` takes at most 1 parameter: the session (`&SessionState`)",
                event.word()
            ),
            _ if event.is_session() => format!(
                "a hook on `{}` takes at most 2 parameters: {}, then the session (`&SessionState`)",
                event.word(),
                event.value()
            ),
            _ => format!(
                "a hook on `{}` takes at most 2 parameters: {}, then the turn (`&mut Turn` or `&Turn`)",
                event.word(),
                event.value()
            ),
        };
        errors.push_spanned(inputs[roles.len()], expected);
    }
    // The turn first and the value after it: one error saying so, rather than one at each.
    if roles.starts_with(&[Role::Value, Role::Turn])
        && inputs.len() >= 2
        && is_turn(&inputs[0].ty)
        && !is_turn(&inputs[1].ty)
    {
        errors.push_spanned(
            &function.sig.inputs,
            format!(
                "a hook on `{}` takes its value first, then the turn: {}, then `&mut Turn` or `&Turn`; swap the two",
                event.word(),
                event.value()
            ),
        );
        return Vec::new();
    }
    let mut params = Vec::new();
    for (input, role) in inputs.iter().zip(roles) {
        let ty = (*input.ty).clone();
        if *role != Role::Next
            && let Type::ImplTrait(_) = ty
        {
            errors.push_spanned(
                &ty,
                "a hook cannot be generic: only a wrap hook's `next` may be `impl Trait`",
            );
        }
        if *role != Role::Next && !matches!(ty, Type::Reference(_) | Type::ImplTrait(_)) {
            let expected = match role {
                Role::Turn if parallel || event.is_wrap() || event == Event::Tripwire => {
                    "the turn by reference: `&Turn`".to_owned()
                }
                Role::Turn => "the turn by reference: `&mut Turn` or `&Turn`".to_owned(),
                Role::Session => "the session by reference: `&SessionState`".to_owned(),
                _ => format!(
                    "{} by reference: the turn keeps it, the hook borrows it",
                    event.value()
                ),
            };
            errors.push_spanned(&ty, format!("a hook on `{}` takes {expected}", event.word()));
        }
        if parallel
            && *role == Role::Turn
            && let Type::Reference(reference) = &ty
            && let Some(mutability) = &reference.mutability
        {
            errors.push(
                mutability.span,
                "a parallel hook reads the turn through a shared borrow: take `&Turn`, not `&mut Turn`; \
                 a hook that changes the turn is a sequential `pre` hook (drop `parallel`)",
            );
        }
        if event == Event::Tripwire
            && *role == Role::Turn
            && let Type::Reference(reference) = &ty
            && let Some(mutability) = &reference.mutability
        {
            errors.push(
                mutability.span,
                "a tripwire reads the turn through a shared borrow: take `&Turn`, not `&mut Turn`; \
                 it runs beside the model call and can only pass or trip, so it cannot inject \
                 (a hook that injects is a `pre` or `before_model` hook)",
            );
        }
        params.push(Param { role: *role, ty });
    }
    params
}

/// Whether `ty` is a borrow of the turn: `&Turn`, `&mut Turn`, `&agentix::Turn`.
fn is_turn(ty: &Type) -> bool {
    let Type::Reference(reference) = ty else { return false };
    let Type::Path(path) = &*reference.elem else { return false };
    path.path.segments.last().is_some_and(|segment| segment.ident == "Turn")
}

/// The known word `word` is most likely a misspelling of: within an edit or two (a third of the
/// known word's length, at least one), the closest first.
pub fn suggestion<'a>(word: &str, known: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    known
        .into_iter()
        .map(|candidate| (edit_distance(word, candidate), candidate))
        .filter(|(distance, candidate)| *distance <= (candidate.len() / 3).clamp(1, 2))
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate)
}

/// Levenshtein distance, a transposition of neighbours counting as one edit.
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut rows = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in rows.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in rows[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let substitution = usize::from(a[i - 1] != b[j - 1]);
            let mut best =
                (rows[i - 1][j] + 1).min(rows[i][j - 1] + 1).min(rows[i - 1][j - 1] + substitution);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(rows[i - 2][j - 2] + 1);
            }
            rows[i][j] = best;
        }
    }
    rows[a.len()][b.len()]
}

/// What `crate = "..."` says when its text is no path.
pub const NOT_A_CRATE_PATH: &str =
    "`crate` takes the name the agentix crate goes by, as in `crate = \"agentix\"`";

/// The path `crate = "..."` names agentix by: a crate's name is rooted (`::agentix`, never a
/// module of that name in scope); a path from `crate`, `self` or `super` is one of the user's
/// own modules, re-exporting agentix. `None` if the text is no path.
pub fn crate_path(text: &syn::LitStr) -> Option<Path> {
    let path = text.parse::<Path>().ok()?;
    let relative = path.segments.first().is_some_and(|first| {
        first.ident == "crate" || first.ident == "self" || first.ident == "super"
    });
    Some(if path.leading_colon.is_some() || relative {
        path
    } else {
        syn::parse_quote_spanned!(text.span()=> ::#path)
    })
}
