//! Tool-name patterns: `*` any run of characters, `?` one character, anything else itself.

/// Whether `name` matches `pattern`.
pub(crate) fn matches(pattern: &str, name: &str) -> bool {
    let (pattern, name): (Vec<char>, Vec<char>) =
        (pattern.chars().collect(), name.chars().collect());
    // Iterative wildcard matching: on a mismatch, retry from the last `*` one character on.
    let (mut p, mut n) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        if p < pattern.len() && (pattern[p] == '?' || pattern[p] == name[n]) {
            p += 1;
            n += 1;
        } else if p < pattern.len() && pattern[p] == '*' {
            star = Some((p, n));
            p += 1;
        } else if let Some((star_p, star_n)) = star {
            p = star_p + 1;
            n = star_n + 1;
            star = Some((star_p, star_n + 1));
        } else {
            return false;
        }
    }
    pattern[p..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn stars_and_marks_match_as_globs_do() {
        for (pattern, name) in [
            ("*", "anything"),
            ("read_*", "read_text_file"),
            ("*_file", "write_file"),
            ("*write*", "write_file"),
            ("get-?um", "get-sum"),
            ("echo", "echo"),
            ("a*b*c", "aXXbYYc"),
        ] {
            assert!(matches(pattern, name), "{pattern} ~ {name}");
        }
        for (pattern, name) in [
            ("read_*", "write_file"),
            ("echo", "echoes"),
            ("?", ""),
            ("a*b*c", "aXXbYY"),
            ("", "x"),
        ] {
            assert!(!matches(pattern, name), "{pattern} !~ {name}");
        }
    }
}
