//! The redactor on the stream-transformer seam: however a text is split into chunks, the
//! redacted stream is the redaction of the whole text, and valid UTF-8.

use agentix::{Redactor, StreamTransformer};
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
fn a_secret_split_across_chunks_is_caught() {
    let redactor = Redactor::new();
    let chunks =
        ["Your key is sk-abc12345", "67890defghijklmn, and mail ada@", "example.org for help."];
    let out = stream(&redactor, &chunks);
    assert_eq!(out, "Your key is [redacted API key], and mail [redacted e-mail] for help.");
    assert_eq!(out, redactor.redact(&chunks.concat()));
}

#[test]
fn text_is_held_back_only_as_long_as_a_match_could_reach() {
    let redactor = Redactor::empty().with_pattern("secret-[0-9]{4}", "code", 11).unwrap();
    let mut state = String::new();
    // The window is 11 characters: everything before the last 11 goes out at once.
    let first = redactor.transform(&mut state, "plain text, then secret-12".to_owned());
    assert_eq!(first, "plain text, the", "the possible secret waits for more text");
    let second = redactor.transform(&mut state, "34 and the rest".to_owned());
    assert_eq!(second, "n [redacted code] a");
    assert_eq!(redactor.flush(&mut state), "nd the rest");
}

/// Text made of the pieces secrets are made of, multi-byte characters included.
fn text() -> impl Strategy<Value = String> {
    let pieces = prop::sample::select(vec![
        "sk-",
        "AKIA",
        "ghp_",
        "@",
        ".",
        "-",
        "_",
        "com",
        "org",
        "ada",
        "é",
        "🦀",
        " ",
        "\n",
        "0123456789",
        "ABCDEFGHIJKLMNOP",
        "abcdefghijklmnopqrstuvwxyz",
        "sk-abcdefghij0123456789XYZ",
        "x@y.io",
    ]);
    prop::collection::vec(pieces, 0..60).prop_map(|pieces| pieces.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn any_split_redacts_like_the_whole_text(text in text(), cuts in prop::collection::vec(0usize..2000, 0..12)) {
        let redactor = Redactor::new();
        let chunks = split_at_chars(&text, &cuts);
        let streamed = stream(&redactor, &chunks);
        prop_assert_eq!(&streamed, &redactor.redact(&text));
        prop_assert!(std::str::from_utf8(streamed.as_bytes()).is_ok());
    }

    #[test]
    fn composed_transformers_are_split_proof_too(text in text(), cuts in prop::collection::vec(0usize..2000, 0..12)) {
        let codes = Redactor::empty().with_pattern("[0-9]{4}", "number", 4).unwrap();
        let both = (Redactor::new(), codes.clone());
        let chunks = split_at_chars(&text, &cuts);
        prop_assert_eq!(stream(&both, &chunks), codes.redact(&Redactor::new().redact(&text)));
    }
}
