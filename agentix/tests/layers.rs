//! The core's layers run one way: support → data → contracts → pipeline → context → the turn
//! loop → sessions (the crate's root documentation, "The layers"). This reads every module of
//! `agentix/src`, finds each path it names in the crate (`crate::…`, `super::…`, a re-export
//! of the crate root), and fails on a module that names one of a higher layer, naming both.
//!
//! Upward names the layering has not removed yet are listed in `KNOWN`, each with the modules
//! it joins: the list may only shrink — a pair it lists that no longer occurs fails too, so
//! that the list is kept exact.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The layers, lowest first, and the modules of each (a module's submodules are in its layer
/// unless listed themselves).
const LAYERS: &[(&str, &[&str])] = &[
    ("support", &["support"]),
    (
        "data",
        &[
            "message",
            "scope",
            "conversation",
            "error",
            "task",
            "verdict::payload",
            "model::request",
            "tool::spec",
            "tool::pattern",
            "approval::record",
            "event::kind",
        ],
    ),
    (
        "contracts",
        &[
            "event",
            "verdict",
            "hook",
            "on",
            "__private",
            "turn",
            "model",
            "tool",
            "approval",
            "durable",
            "observe",
            "trace",
            "transform",
            "session::hooks",
        ],
    ),
    ("pipeline", &["pipeline", "session::chain"]),
    ("context", &["context"]),
    ("turn loop", &["agent", "stream"]),
    ("sessions", &["session"]),
];

/// Upward names not yet removed: (the module that names, the module it names).
const KNOWN: &[(&str, &str)] = &[];

const SRC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src");

/// A module's path (`session::task`) from its file's path under `src/`.
fn module_of(file: &Path) -> String {
    let relative = file.strip_prefix(SRC).unwrap().with_extension("");
    let mut parts: Vec<String> =
        relative.iter().map(|part| part.to_string_lossy().into_owned()).collect();
    if parts.last().is_some_and(|last| last == "mod") {
        parts.pop();
    }
    if parts == ["lib"] {
        return String::new();
    }
    if parts.first().is_some_and(|first| first == "private") {
        parts[0] = "__private".to_owned();
    }
    parts.join("::")
}

/// The layer of a module: its own, or its nearest ancestor's.
fn layer_of(module: &str) -> Option<(usize, &'static str)> {
    let mut best: Option<(usize, usize, &'static str)> = None;
    for (index, (name, modules)) in LAYERS.iter().enumerate() {
        for prefix in *modules {
            let covers = module == *prefix || module.starts_with(&format!("{prefix}::"));
            if covers && best.is_none_or(|(length, ..)| prefix.len() > length) {
                best = Some((prefix.len(), index, name));
            }
        }
    }
    best.map(|(_, index, name)| (index, name))
}

/// The source with comments, strings and character literals blanked out.
fn code_of(source: &str) -> String {
    let bytes = source.as_bytes();
    let mut out = String::with_capacity(source.len());
    let mut i = 0;
    while i < bytes.len() {
        let rest = &source[i..];
        if rest.starts_with("//") {
            let end = rest.find('\n').unwrap_or(rest.len());
            i += end;
        } else if rest.starts_with("/*") {
            let end = rest.find("*/").map_or(rest.len(), |end| end + 2);
            i += end;
        } else if let Some(raw) = raw_string_len(rest) {
            out.push_str("\"\"");
            i += raw;
        } else if bytes[i] == b'"' {
            let mut j = i + 1;
            while j < bytes.len() && bytes[j] != b'"' {
                j += if bytes[j] == b'\\' { 2 } else { 1 };
            }
            out.push_str("\"\"");
            i = j + 1;
        } else if let Some(length) = char_literal_len(rest) {
            out.push_str("' '");
            i += length;
        } else {
            let c = rest.chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// The length of a raw string literal at the start of `text`, if one starts there.
fn raw_string_len(text: &str) -> Option<usize> {
    let after_r = text.strip_prefix('r')?;
    let hashes = after_r.len() - after_r.trim_start_matches('#').len();
    let body = after_r[hashes..].strip_prefix('"')?;
    let closing = format!("\"{}", "#".repeat(hashes));
    Some(1 + hashes + 1 + body.find(&closing)? + closing.len())
}

/// The length of a character literal at the start of `text` (not a lifetime), if one.
fn char_literal_len(text: &str) -> Option<usize> {
    let mut chars = text.char_indices();
    if chars.next()?.1 != '\'' {
        return None;
    }
    let (_, first) = chars.next()?;
    if first == '\\' {
        let close = text[2..].find('\'')?;
        return Some(2 + close + 1);
    }
    let (at, second) = chars.next()?;
    (second == '\'').then_some(at + 1)
}

/// The paths a module's code names: `crate::a::b…`, `super::…` and `child::…` (a submodule of
/// `module`), resolved against `module`, each as its module-ish segments; `use crate::{a,
/// b::c}` groups expanded.
fn named_paths(code: &str, module: &str, modules: &BTreeSet<String>) -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    let own: Vec<String> =
        module.split("::").filter(|part| !part.is_empty()).map(str::to_owned).collect();
    for child in modules {
        let Some(name) = child.strip_prefix(&format!("{module}::")) else { continue };
        if name.contains("::") {
            continue;
        }
        let needle = format!("{name}::");
        let mut from = 0;
        while let Some(found) = code[from..].find(&needle) {
            let start = from + found;
            from = start + needle.len();
            let before = code[..start].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let mut base = own.clone();
            base.push(name.to_owned());
            expand(&code[from..], &mut base, &mut paths);
        }
    }
    for root in ["crate::", "$crate::", "super::"] {
        let mut from = 0;
        while let Some(found) = code[from..].find(root) {
            let start = from + found;
            from = start + root.len();
            let before = code[..start].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':' || c == '$')
                && !(root == "crate::" && before == Some('$'))
            {
                continue;
            }
            if root == "crate::" && code[..start].ends_with('$') {
                continue;
            }
            let mut base: Vec<String> = if root == "super::" {
                let mut parent: Vec<String> =
                    module.split("::").filter(|part| !part.is_empty()).map(str::to_owned).collect();
                let mut rest = &code[from..];
                parent.pop();
                while let Some(more) = rest.strip_prefix("super::") {
                    parent.pop();
                    rest = more;
                    from += "super::".len();
                }
                parent
            } else {
                Vec::new()
            };
            expand(&code[from..], &mut base, &mut paths);
        }
    }
    paths
}

/// Reads a path (or a `{…}` group of them) at the start of `text`, after `prefix`.
fn expand(text: &str, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    let text = text.trim_start();
    if let Some(group) = text.strip_prefix('{') {
        let mut depth = 0;
        let mut item_start = 0;
        for (i, c) in group.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => {
                    expand(&group[item_start..i], &mut prefix.clone(), out);
                    return;
                }
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    expand(&group[item_start..i], &mut prefix.clone(), out);
                    item_start = i + 1;
                }
                _ => {}
            }
        }
        return;
    }
    let ident: String = text.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
    if ident.is_empty() || ident == "self" {
        out.push(prefix.clone());
        return;
    }
    prefix.push(ident.clone());
    let rest = &text[ident.len()..];
    if let Some(more) = rest.strip_prefix("::") {
        expand(more, prefix, out);
    } else {
        out.push(prefix.clone());
    }
}

/// The module a path names: its longest prefix that is a module of the crate; a name at the
/// crate root is followed to where the root's `use` takes it from.
fn target_of(
    path: &[String],
    modules: &BTreeSet<String>,
    root_names: &BTreeMap<String, String>,
) -> Option<String> {
    for length in (1..=path.len()).rev() {
        let candidate = path[..length].join("::");
        if modules.contains(&candidate) {
            return Some(candidate);
        }
    }
    root_names.get(path.first()?).cloned()
}

/// Where each name `lib.rs` brings to the crate root comes from: `use a::{B, c}` → a.
fn root_names(lib: &str) -> BTreeMap<String, String> {
    let code = code_of(lib);
    let mut names = BTreeMap::new();
    for statement in code.split(';') {
        let statement = statement.trim();
        let Some(path) = statement
            .strip_prefix("pub use ")
            .or_else(|| statement.strip_prefix("use "))
            .or_else(|| statement.rsplit_once("\npub use ").map(|(_, path)| path))
            .or_else(|| statement.rsplit_once("\nuse ").map(|(_, path)| path))
        else {
            continue;
        };
        let mut expanded = Vec::new();
        expand(path, &mut Vec::new(), &mut expanded);
        for path in expanded {
            if let (Some(module), Some(name)) = (path.first(), path.last())
                && path.len() > 1
            {
                names.insert(name.clone(), module.clone());
            }
        }
    }
    names
}

fn files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files(&path, out);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            out.push(path);
        }
    }
}

/// Every upward name in the crate: (module, module it names, line of the first).
fn upward_names() -> BTreeMap<(String, String), (String, usize)> {
    let mut all = Vec::new();
    files(Path::new(SRC), &mut all);
    let modules: BTreeSet<String> =
        all.iter().map(|file| module_of(file)).filter(|m| !m.is_empty()).collect();
    let lib = std::fs::read_to_string(format!("{SRC}/lib.rs")).unwrap();
    let root = root_names(&lib);
    let mut upward = BTreeMap::new();
    for file in &all {
        let module = module_of(file);
        let Some((layer, _)) = layer_of(&module) else {
            // The crate root: the facade that re-exports every layer.
            assert!(module.is_empty(), "{module} is in no layer: add it to LAYERS");
            continue;
        };
        let source = std::fs::read_to_string(file).unwrap();
        let code = code_of(&source);
        for path in named_paths(&code, &module, &modules) {
            let Some(target) = target_of(&path, &modules, &root) else { continue };
            let Some((target_layer, _)) = layer_of(&target) else { continue };
            if target_layer > layer {
                let line = path.join("::");
                let at = source.find(path.last().unwrap().as_str()).unwrap_or(0);
                let line_number = source[..at].lines().count();
                upward.entry((module.clone(), target)).or_insert((line, line_number));
            }
        }
    }
    upward
}

#[test]
fn no_module_names_one_of_a_higher_layer() {
    let upward = upward_names();
    let known: BTreeSet<(String, String)> =
        KNOWN.iter().map(|(a, b)| ((*a).to_owned(), (*b).to_owned())).collect();
    let mut problems = Vec::new();
    for ((module, target), (path, line)) in &upward {
        if !known.contains(&(module.clone(), target.clone())) {
            let (_, from) = layer_of(module).unwrap();
            let (_, to) = layer_of(target).unwrap();
            problems.push(format!(
                "{module} ({from}) names {target} ({to}): `{path}`, near line {line}"
            ));
        }
    }
    for (module, target) in &known {
        if !upward.contains_key(&(module.clone(), target.clone())) {
            problems.push(format!("KNOWN lists {module} → {target}, which no longer occurs"));
        }
    }
    assert!(problems.is_empty(), "{} upward names:\n{}", problems.len(), problems.join("\n"));
}

#[test]
fn the_check_sees_an_upward_name() {
    let modules: BTreeSet<String> = ["message", "agent", "agent::drive"].map(String::from).into();
    let code = code_of("use crate::agent::{Agent, drive::Resume};\n// crate::session\n");
    let targets: Vec<Option<String>> = named_paths(&code, "message", &modules)
        .iter()
        .map(|path| target_of(path, &modules, &BTreeMap::new()))
        .collect();
    assert_eq!(targets, [Some("agent".to_owned()), Some("agent::drive".to_owned())]);
    let code = code_of("use super::Session; let s = \"crate::agent\";");
    let paths = named_paths(&code, "session::task", &modules);
    assert_eq!(paths, [vec!["session".to_owned(), "Session".to_owned()]]);
    let code = code_of("use drive::Resume;");
    let paths = named_paths(&code, "agent", &modules);
    assert_eq!(paths, [vec!["agent".to_owned(), "drive".to_owned(), "Resume".to_owned()]]);
}
