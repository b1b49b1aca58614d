//! The redactor over an arbitrary text cut into arbitrary chunks: streamed, it gives exactly the
//! redaction of the whole text, and no secret it knows survives.

#![no_main]

use std::sync::OnceLock;

use agentix::transform::{Redactor, StreamTransformer};
use libfuzzer_sys::fuzz_target;

/// Built once: compiling its patterns is the slow part, not what is under test.
static REDACTOR: OnceLock<Redactor> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    // The first bytes are chunk lengths (0 ends them), the rest the text.
    let cut = data.iter().position(|byte| *byte == 0).unwrap_or(data.len().min(8));
    let (lengths, text) = data.split_at(cut);
    let text = String::from_utf8_lossy(text.get(1..).unwrap_or_default()).into_owned();

    let redactor = REDACTOR.get_or_init(Redactor::new);
    let whole = redactor.redact(&text);

    let mut state = Default::default();
    let mut streamed = String::new();
    let mut rest = text.as_str();
    for length in lengths.iter().cycle().take(text.len() + 1) {
        if rest.is_empty() {
            break;
        }
        let mut at = usize::from(*length).clamp(1, rest.len());
        while !rest.is_char_boundary(at) {
            at += 1;
        }
        let (chunk, after) = rest.split_at(at);
        streamed.push_str(&redactor.transform(&mut state, chunk.to_owned()));
        rest = after;
    }
    if !rest.is_empty() {
        streamed.push_str(&redactor.transform(&mut state, rest.to_owned()));
    }
    streamed.push_str(&redactor.flush(&mut state));
    assert_eq!(streamed, whole, "streamed in chunks of {lengths:?}");
    assert_eq!(redactor.redact(&whole), whole, "a redacted text has nothing left to redact");
});
