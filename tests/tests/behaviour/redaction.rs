//! The redactor on the stream-transformer seam: however a text is split into chunks, the
//! redacted stream is the redaction of the whole text, and valid UTF-8.

use agentix::transform::{Redactor, StreamTransformer};
use proptest::prelude::*;

/// Streams `text` through `transformer` in the given chunks.
fn stream<T: StreamTransformer>(transformer: &T, chunks: &[&str]) -> String {
    let mut state = T::State::default();
    let mut out: String =
        chunks.iter().map(|chunk| transformer.transform(&mut state, (*chunk).to_owned())).collect();
    out.push_str(&transformer.flush(&mut state));
    out
}

/// Splits `text` at the given character positions.
fn split_at_chars<'a>(text: &'a str, cuts: &[usize]) -> Vec<&'a str> {
    let boundaries: Vec<usize> =
        text.char_indices().map(|(at, _)| at).chain([text.len()]).collect();
    let mut points: Vec<usize> =
        cuts.iter().map(|cut| boundaries[cut % boundaries.len()]).collect();
    points.extend([0, text.len()]);
    points.sort_unstable();
    points.dedup();
    points.windows(2).map(|pair| &text[pair[0]..pair[1]]).collect()
}

#[test]
fn a_secret_split_across_chunks_is_caught_while_text_keeps_flowing() {
    let redactor = Redactor::empty().with_pattern("sk-[a-z0-9]{20,24}", "API key").unwrap();
    let chunks = [
        "Your key is sk-abc12345",
        "67890defghijklmn, and the rest of the answer ",
        "keeps streaming.",
    ];
    let mut state = String::new();
    let pieces: Vec<String> =
        chunks.iter().map(|chunk| redactor.transform(&mut state, (*chunk).to_owned())).collect();
    assert_eq!(pieces[0], "", "all 23 characters are within the 27-character window");
    assert_eq!(pieces[1], "Your key is [redacted API key], ", "released once the key is whole");
    let out = format!("{}{}", pieces.concat(), redactor.flush(&mut state));
    assert_eq!(out, "Your key is [redacted API key], and the rest of the answer keeps streaming.");
    assert_eq!(out, redactor.redact(&chunks.concat()));
}

#[test]
fn patterns_that_would_break_streaming_are_refused() {
    use agentix::transform::PatternError;
    assert_eq!(
        Redactor::empty().with_pattern("sk-[a-z]+", "key").unwrap_err(),
        PatternError::Unbounded
    );
    assert_eq!(
        Redactor::empty().with_pattern("[0-9]{0,4}", "digits").unwrap_err(),
        PatternError::MatchesEmpty
    );
    assert_eq!(
        Redactor::empty().with_pattern(r"\bkey\b", "word").unwrap_err(),
        PatternError::LooksAround
    );
    assert_eq!(
        Redactor::empty().with_pattern("^sk", "start").unwrap_err(),
        PatternError::LooksAround
    );
    assert!(matches!(Redactor::empty().with_pattern("(", "broken"), Err(PatternError::Syntax(_))));
    assert_eq!(
        Redactor::new().window(),
        345,
        "the longest e-mail address the default pattern accepts"
    );
}

#[test]
fn an_empty_redactor_holds_nothing_back() {
    let mut state = String::new();
    assert_eq!(Redactor::empty().transform(&mut state, "all of it".to_owned()), "all of it");
}

#[test]
fn text_is_held_back_only_as_long_as_a_match_could_reach() {
    let redactor = Redactor::empty().with_pattern("secret-[0-9]{4}", "code").unwrap();
    assert_eq!(redactor.window(), 11);
    let mut state = String::new();
    // The window is 11 characters: everything before the last 11 goes out at once.
    let first = redactor.transform(&mut state, "plain text, then secret-12".to_owned());
    assert_eq!(first, "plain text, the", "the possible secret waits for more text");
    let second = redactor.transform(&mut state, "34 and the rest".to_owned());
    assert_eq!(second, "n [redacted code] a");
    assert_eq!(redactor.flush(&mut state), "nd the rest");
}

#[test]
fn a_checked_pattern_redacts_only_what_its_check_accepts_and_a_hash_tells_values_apart() {
    let even = Redactor::empty()
        .with_checked_pattern("[0-9]{2,4}", "even", |digits| digits.len() % 2 == 0)
        .unwrap();
    // "123" is refused, and passed over whole: its "23" is not tried.
    assert_eq!(even.redact("12 123 1234"), "[redacted even] 123 [redacted even]");
    assert_eq!(even.find("1 123 1234"), Some("even"));
    assert_eq!(even.find("1 123"), None);
    assert_eq!(even.find("1 2 3"), None);
    let hashed = even.hashing("salt");
    let out = hashed.redact("12 34 12");
    let tokens: Vec<&str> = out.split(' ').filter(|w| w.starts_with('#')).collect();
    assert_eq!(tokens.len(), 3, "{out}");
    assert_eq!(tokens[0], tokens[2]);
    assert_ne!(tokens[0], tokens[1]);
    assert_eq!(hashed.find_redacted(&out), Some("even"));
    assert_eq!(hashed.find_redacted("nothing here"), None);
}

/// Text made of the pieces the test patterns are made of, multi-byte characters included.
fn text() -> impl Strategy<Value = String> {
    let pieces = prop::sample::select(vec![
        "sk-", "ab", "abc", "1", "22", "333", "@", ".", "x", "io", "é", "🦀", " ", "\n", "key",
        "k", "-",
    ]);
    prop::collection::vec(pieces, 0..80).prop_map(|pieces| pieces.concat())
}

/// Small-window redactors whose patterns overlap and can start at the same place, so that
/// streamed text is released mid-stream and ties between patterns are exercised.
fn redactor() -> Redactor {
    Redactor::empty()
        .with_pattern("sk-[a-z0-9]{2,6}", "key")
        .and_then(|r| r.with_pattern("sk-[a-z]{1,3}", "short key"))
        .and_then(|r| r.with_pattern("[a-z0-9]{1,4}@[a-z]{1,3}\\.io", "e-mail"))
        .and_then(|r| r.with_pattern("[0-9]{2,3}", "number"))
        .and_then(|r| r.with_pattern("🦀é{1,2}", "crab"))
        .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

    #[test]
    fn any_split_redacts_like_the_whole_text(text in text(), cuts in prop::collection::vec(0usize..400, 0..16)) {
        let redactor = redactor();
        let chunks = split_at_chars(&text, &cuts);
        prop_assert_eq!(stream(&redactor, &chunks), redactor.redact(&text));
    }

    #[test]
    fn checked_and_hashed_patterns_are_split_proof_too(text in text(), cuts in prop::collection::vec(0usize..400, 0..16)) {
        // A check that refuses some matches: the refused stay as they are, whatever the split.
        let checked = Redactor::empty()
            .with_checked_pattern("[0-9]{2,4}", "even", |digits| digits.len() % 2 == 0)
            .and_then(|r| r.with_checked_pattern("sk-[a-z0-9]{2,6}", "key", |key| !key.contains('c')))
            .unwrap();
        let chunks = split_at_chars(&text, &cuts);
        prop_assert_eq!(stream(&checked, &chunks), checked.redact(&text));
        let hashed = checked.hashing("salt");
        prop_assert_eq!(stream(&hashed, &chunks), hashed.redact(&text));
    }

    #[test]
    fn composed_transformers_are_split_proof_too(text in text(), cuts in prop::collection::vec(0usize..400, 0..16)) {
        let digits = Redactor::empty().with_pattern("[0-9]{1,2}", "digits").unwrap();
        let both = (redactor(), digits.clone());
        let chunks = split_at_chars(&text, &cuts);
        prop_assert_eq!(stream(&both, &chunks), digits.redact(&redactor().redact(&text)));
    }
}

#[test]
fn the_property_tests_stream_text_before_the_end() {
    // Guards the property tests against vacuity: with these windows, text is released mid-stream.
    let redactor = redactor();
    assert!(redactor.window() < 16, "window {}", redactor.window());
    let mut state = String::new();
    let early = redactor
        .transform(&mut state, "plain words, long enough to pass the window; sk-abc".to_owned());
    assert!(early.starts_with("plain words"), "{early:?}");
}
