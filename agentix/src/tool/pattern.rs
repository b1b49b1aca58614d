//! Tool-name patterns: which tools a hook or a tool set's filter is about, by name.

use std::fmt;

/// A glob over tool names — `*` any run of characters, `?` one, anything else itself — as in
/// `github__*` for every tool of the MCP server named `github`. `#[hook(before_tool, tools =
/// "github__*")]` checks its pattern when it compiles; one made at run time is checked here.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ToolPattern(String);

/// A tool pattern that is empty, or holds a character no tool name has.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("`{pattern}` is no tool pattern: {problem}")]
pub struct ToolPatternError {
    /// The pattern.
    pub pattern: String,
    /// What is wrong with it.
    pub problem: String,
}

impl ToolPattern {
    /// The pattern, checked: not empty, and only the characters of tool names (letters, digits,
    /// `_`, `-`, `.`) besides `*` and `?`.
    pub fn new(pattern: impl Into<String>) -> Result<Self, ToolPatternError> {
        let pattern = pattern.into();
        match problem(&pattern) {
            None => Ok(ToolPattern(pattern)),
            Some(problem) => Err(ToolPatternError { pattern, problem }),
        }
    }

    /// Whether the tool called `name` is one the pattern names.
    pub fn matches(&self, name: &str) -> bool {
        matches(&self.0, name)
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ToolPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// What is wrong with `pattern`, if anything (the `#[hook]` attribute says the same).
fn problem(pattern: &str) -> Option<String> {
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

/// Whether `name` matches `pattern`: iterative wildcard matching, backtracking to the last
/// `*` on a mismatch — over the two strings as they are (a hook checks a pattern at every call:
/// it allocates nothing).
#[doc(hidden)]
pub fn matches(pattern: &str, name: &str) -> bool {
    let (mut p, mut n) = (pattern.chars(), name.chars());
    // The pattern after the last `*` seen, and the name where that `*` stopped matching.
    let mut star: Option<(std::str::Chars<'_>, std::str::Chars<'_>)> = None;
    while let Some(c) = n.clone().next() {
        let mut after = p.clone();
        match after.next() {
            Some('*') => {
                star = Some((after.clone(), n.clone()));
                p = after;
                continue;
            }
            Some(wanted) if wanted == '?' || wanted == c => {
                p = after;
                n.next();
                continue;
            }
            _ => {}
        }
        // A mismatch: the last `*` takes one more character, if there was one.
        let Some((star_p, star_n)) = &mut star else { return false };
        star_n.next();
        p = star_p.clone();
        n = star_n.clone();
    }
    p.all(|c| c == '*')
}

#[cfg(test)]
mod tests {
    use crate::tool::pattern::{ToolPattern, matches};

    #[test]
    fn stars_and_marks_match_as_globs_do() {
        for (pattern, name) in [
            ("*", "anything"),
            ("read_*", "read_text_file"),
            ("*_file", "write_file"),
            ("*write*", "write_file"),
            ("get-?um", "get-sum"),
            ("github__*", "github__create_issue"),
            ("a*b*c", "aXXbYYc"),
            ("h?llo", "hällo"),
            ("*ä*", "bär"),
            ("**", ""),
        ] {
            assert!(matches(pattern, name), "{pattern} ~ {name}");
        }
        for (pattern, name) in
            [("read_*", "write_file"), ("echo", "echoes"), ("?", ""), ("a*b*c", "aXXbYY")]
        {
            assert!(!matches(pattern, name), "{pattern} !~ {name}");
        }
    }

    #[test]
    fn a_pattern_is_checked_when_made() {
        assert!(ToolPattern::new("github__*").is_ok());
        let empty = ToolPattern::new("").unwrap_err();
        assert_eq!(empty.to_string(), "`` is no tool pattern: it is empty");
        let spaced = ToolPattern::new("git hub").unwrap_err();
        assert!(spaced.problem.contains("` ` is in no tool name"), "{spaced}");
    }
}
