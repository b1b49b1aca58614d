//! The stream-transformer seam: text on its way from the model, chunk by chunk.

use regex::{Regex, RegexSet};

/// Transforms the model's text as it streams: redaction, PII scrubbing, citation parsing.
///
/// Each chunk in gives a chunk out — a `String`, never "nothing" or something the stream cannot
/// carry — so a transformer cannot drop a chunk by returning the wrong thing. It may keep
/// [`State`](StreamTransformer::State) across the chunks of one message and hold text back (a
/// window, so that a secret split across two chunks is still caught); whatever it holds back it
/// must give up in [`flush`](StreamTransformer::flush), at the end of the message.
///
/// The same transformer runs on non-streamed responses (one chunk, then a flush), so what the
/// log keeps is the transformed text either way.
pub trait StreamTransformer: Send + Sync {
    /// Whether the transformer leaves all text as it is. The agent then takes a model's
    /// complete (not streamed) answer as it comes, instead of reassembling it piece by piece.
    const IDENTITY: bool = false;

    /// What the transformer remembers within one message.
    type State: Default + Send;

    /// The text to emit now for `chunk`: possibly less (held back), possibly more (released).
    fn transform(&self, state: &mut Self::State, chunk: String) -> String;

    /// The text still held back, at the end of the message.
    fn flush(&self, state: &mut Self::State) -> String;
}

/// No transformation: the default, and free.
impl StreamTransformer for () {
    const IDENTITY: bool = true;

    type State = ();

    #[inline(always)]
    fn transform(&self, (): &mut (), chunk: String) -> String {
        chunk
    }

    #[inline(always)]
    fn flush(&self, (): &mut ()) -> String {
        String::new()
    }
}

/// Two transformers in order: `A` first, then `B` on what `A` emits.
impl<A: StreamTransformer, B: StreamTransformer> StreamTransformer for (A, B) {
    const IDENTITY: bool = A::IDENTITY && B::IDENTITY;

    type State = (A::State, B::State);

    fn transform(&self, (a, b): &mut Self::State, chunk: String) -> String {
        self.1.transform(b, self.0.transform(a, chunk))
    }

    fn flush(&self, (a, b): &mut Self::State) -> String {
        let mut rest = self.1.transform(b, self.0.flush(a));
        rest.push_str(&self.1.flush(b));
        rest
    }
}

/// Redacts secrets and personal data from the model's text — API keys, e-mail addresses, and
/// any pattern added — even when one is split across chunks.
///
/// It holds back the last [`window`](Redactor::window) characters of the stream until more
/// text arrives (or the message ends). The window is the longest match any pattern can make,
/// so every pattern must be bounded (`{1,64}`, not `+`): then the redacted stream is exactly
/// the redaction of the whole text, however it was split. Cuts fall on character boundaries,
/// never inside a UTF-8 character.
///
/// A match becomes `[redacted WHAT]` (another word than `redacted`:
/// [`labelling`](Redactor::labelling)), or, [`hashing`](Redactor::hashing),
/// `[WHAT #0123456789abcdef]`: the same value the same token, so that a reader can tell two
/// apart without seeing either. A pattern may be [checked](Redactor::with_checked_pattern): a
/// match its check refuses (a card number whose Luhn digit is wrong) is left as it is.
#[derive(Clone)]
pub struct Redactor {
    patterns: Vec<Pattern>,
    /// All the patterns at once: one pass says whether a text holds a match of any, and most
    /// texts hold none.
    any: Option<RegexSet>,
    window: usize,
    replacement: Replacement,
}

/// What a match is replaced with.
#[derive(Clone)]
enum Replacement {
    /// `[WORD WHAT]`.
    Label(String),
    /// `[WHAT #hash]`, the hash keyed by the salt's key.
    Hash([u64; 2]),
}

/// One pattern: its regex, what it finds, and the check its matches must pass.
#[derive(Clone, Debug)]
struct Pattern {
    regex: Regex,
    what: String,
    check: Option<fn(&str) -> bool>,
}

/// The salt stays out of logs: only whether matches are hashed is shown.
impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let replacement = match &self.replacement {
            Replacement::Label(word) => format!("[{word} WHAT]"),
            Replacement::Hash(_) => "[WHAT #hash]".to_owned(),
        };
        f.debug_struct("Redactor")
            .field("patterns", &self.patterns)
            .field("window", &self.window)
            .field("replacement", &replacement)
            .finish()
    }
}

/// Default patterns: (regex, what it is).
const DEFAULT_PATTERNS: [(&str, &str); 4] = [
    (r"sk-[A-Za-z0-9_-]{20,64}", "API key"),
    (r"AKIA[0-9A-Z]{16}", "AWS key"),
    (r"gh[pousr]_[A-Za-z0-9]{36,76}", "GitHub token"),
    (
        r"[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){0,3}\.[A-Za-z]{2,24}",
        "e-mail",
    ),
];

/// Why a pattern cannot be added to a [`Redactor`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PatternError {
    /// The pattern does not parse.
    #[error("the pattern does not parse: {0}")]
    Syntax(String),
    /// The pattern's matches have no longest length, so no window can hold one back.
    #[error("the pattern can match text of any length; bound its repetitions, as in {{1,64}}")]
    Unbounded,
    /// The pattern matches empty text.
    #[error("the pattern matches empty text")]
    MatchesEmpty,
    /// The pattern looks at what surrounds a match (`^`, `$`, `\b`…), which differs at a
    /// chunk boundary.
    #[error("the pattern uses an anchor or a word boundary, which a chunk boundary would fool")]
    LooksAround,
}

impl Default for Redactor {
    fn default() -> Self {
        DEFAULT_PATTERNS
            .iter()
            .try_fold(Redactor::empty(), |redactor, (pattern, what)| {
                redactor.with_pattern(pattern, what)
            })
            .expect("the default patterns are valid")
    }
}

impl Redactor {
    /// A redactor for API keys, AWS and GitHub tokens, and e-mail addresses (window: 345
    /// characters, the longest address its pattern accepts).
    pub fn new() -> Self {
        Redactor::default()
    }

    /// A redactor with no patterns; add them with [`with_pattern`](Redactor::with_pattern).
    pub fn empty() -> Self {
        Redactor {
            patterns: Vec::new(),
            any: None,
            window: 0,
            replacement: Replacement::Label("redacted".into()),
        }
    }

    /// Adds a pattern: matches become `[redacted WHAT]`. The window grows to the pattern's
    /// longest match, which must exist; a pattern that matches empty text or looks around its
    /// match is refused.
    pub fn with_pattern(self, pattern: &str, what: &str) -> Result<Self, PatternError> {
        self.add(pattern, what, None)
    }

    /// Adds a pattern whose matches are redacted only when `check` accepts them: a card
    /// number's Luhn digit, an IBAN's checksum. A match the check refuses is left as it is,
    /// and the search goes on after it (not inside it: a refused run of digits does not have
    /// its tail tried).
    pub fn with_checked_pattern(
        self,
        pattern: &str,
        what: &str,
        check: fn(&str) -> bool,
    ) -> Result<Self, PatternError> {
        self.add(pattern, what, Some(check))
    }

    /// Replaces each match with a token made of what it is and a keyed hash of the value
    /// (`[e-mail #0123456789abcdef]`) instead of a label: the same value always gives the same
    /// token, here and after a restart, so a reader can still tell values apart and follow one
    /// through a conversation. The hash is SipHash-2-4 (64 bits) keyed by `salt`: without the
    /// salt, a token cannot be computed from a guess — keep it secret.
    pub fn hashing(mut self, salt: impl AsRef<[u8]>) -> Self {
        self.replacement = Replacement::Hash(key_of(salt.as_ref()));
        self
    }

    /// Replaces each match with `[WORD WHAT]` (`[withheld e-mail]`): the label's word, in place
    /// of `redacted`.
    pub fn labelling(mut self, word: &str) -> Self {
        self.replacement = Replacement::Label(word.to_owned());
        self
    }

    /// What the first match in `text` is (the `what` of its pattern), if there is one: for a
    /// caller that refuses text rather than redacting it.
    pub fn find(&self, text: &str) -> Option<&str> {
        if !self.may_match(text) {
            return None;
        }
        self.first_match(text, 0).map(|(_, _, pattern)| pattern.what.as_str())
    }

    /// Whether some pattern matches somewhere in `text` (checks aside): when none does, there
    /// is nothing to look for match by match.
    fn may_match(&self, text: &str) -> bool {
        self.any.as_ref().is_some_and(|any| any.is_match(text))
    }

    /// What the first label or token this redactor writes in `text` stands for, if `text`
    /// holds one: for a caller that refuses text a stream already redacted.
    pub fn find_redacted(&self, text: &str) -> Option<&str> {
        self.patterns.iter().find_map(|pattern| {
            let written = match &self.replacement {
                Replacement::Label(word) => format!("[{word} {}]", pattern.what),
                Replacement::Hash(_) => format!("[{} #", pattern.what),
            };
            text.contains(&written).then_some(pattern.what.as_str())
        })
    }

    fn add(
        mut self,
        pattern: &str,
        what: &str,
        check: Option<fn(&str) -> bool>,
    ) -> Result<Self, PatternError> {
        let hir = regex_syntax::parse(pattern)
            .map_err(|error| PatternError::Syntax(error.to_string()))?;
        let properties = hir.properties();
        if !properties.look_set().is_empty() {
            return Err(PatternError::LooksAround);
        }
        if properties.minimum_len() == Some(0) {
            return Err(PatternError::MatchesEmpty);
        }
        // In bytes, which is at least as many as characters: a safe window.
        let longest = properties.maximum_len().ok_or(PatternError::Unbounded)?;
        let regex = Regex::new(pattern).map_err(|error| PatternError::Syntax(error.to_string()))?;
        self.patterns.push(Pattern { regex, what: what.to_owned(), check });
        let all = self.patterns.iter().map(|pattern| pattern.regex.as_str());
        let any = RegexSet::new(all).map_err(|error| PatternError::Syntax(error.to_string()))?;
        self.any = Some(any);
        self.window = self.window.max(longest);
        Ok(self)
    }

    /// The characters held back while streaming.
    pub fn window(&self) -> usize {
        self.window
    }

    /// Redacts a whole text.
    pub fn redact(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let rest = self.redact_before(text, text.len(), &mut out);
        out.push_str(&text[rest..]);
        out
    }

    /// Redacts `text` up to byte `cut`, appending to `out`, and returns where it stopped: `cut`,
    /// or earlier when a match crosses `cut` (that text waits for the rest of the match).
    fn redact_before(&self, text: &str, cut: usize, out: &mut String) -> usize {
        if !self.may_match(text) {
            out.push_str(&text[..cut]);
            return cut;
        }
        // Each pattern's next accepted match, searched for again only when the search from
        // where the redaction stands could find another: a text with many matches (or many a
        // check refuses) is searched about once per pattern, not once per match.
        let mut next: Vec<Search> =
            self.patterns.iter().map(|pattern| pattern.accepted(text, 0, cut)).collect();
        let mut at = 0;
        loop {
            for (pattern, search) in self.patterns.iter().zip(&mut next) {
                if !search.holds_from(at) {
                    *search = pattern.accepted(text, at, cut);
                }
            }
            let first = next
                .iter()
                .enumerate()
                .filter_map(|(index, search)| search.found.map(|(start, end)| (start, end, index)))
                .min_by_key(|&(start, end, _)| (start, std::cmp::Reverse(end)));
            let Some((start, end, index)) = first else { break };
            if end > cut {
                out.push_str(&text[at..start.min(cut).max(at)]);
                return start.min(cut).max(at);
            }
            out.push_str(&text[at..start]);
            self.replace(&text[start..end], &self.patterns[index], out);
            at = end;
        }
        out.push_str(&text[at..cut.max(at)]);
        cut.max(at)
    }

    /// Writes what replaces `value`, a match of `pattern`.
    fn replace(&self, value: &str, pattern: &Pattern, out: &mut String) {
        use std::fmt::Write;
        let _ = match &self.replacement {
            Replacement::Label(word) => write!(out, "[{word} {}]", pattern.what),
            Replacement::Hash(key) => {
                write!(out, "[{} #{:016x}]", pattern.what, siphash24(*key, value.as_bytes()))
            }
        };
    }

    /// The leftmost match of any pattern at or after byte `from` that its check accepts (the
    /// longest, on a tie).
    fn first_match(&self, text: &str, from: usize) -> Option<(usize, usize, &Pattern)> {
        self.patterns
            .iter()
            .filter_map(|pattern| {
                pattern.accepted(text, from, text.len()).found.map(|(s, e)| (s, e, pattern))
            })
            .min_by_key(|&(start, end, _)| (start, std::cmp::Reverse(end)))
    }
}

impl Pattern {
    /// The first match at or after byte `from` that the check accepts: a refused match is
    /// passed over whole. A refused match that ends past `cut` (text still streaming) may not
    /// be passed over yet — more text may make it another match, and where the search goes on
    /// depends on it — so it is returned as a match that ends past `cut`, to wait at.
    fn accepted(&self, text: &str, from: usize, cut: usize) -> Search {
        let mut search = Search { found: None, passed_over: None };
        let mut at = from;
        while let Some(found) = self.regex.find_at(text, at) {
            match self.check {
                Some(check) if !check(found.as_str()) => {
                    if found.end() > cut {
                        search.found = Some((found.start(), usize::MAX));
                        return search;
                    }
                    let first = search.passed_over.map_or(found.start(), |(first, _)| first);
                    search.passed_over = Some((first, found.end()));
                    at = found.end();
                }
                _ => {
                    search.found = Some((found.start(), found.end()));
                    return search;
                }
            }
        }
        search
    }
}

/// What a pattern's search found: its next accepted match (`None`: none), and the span of the
/// refused matches it passed over on the way.
struct Search {
    found: Option<(usize, usize)>,
    passed_over: Option<(usize, usize)>,
}

impl Search {
    /// Whether searching again from `at` would find the same: the match is still ahead, and
    /// `at` is not inside what the search passed over (from there, a shorter match the check
    /// accepts might start).
    fn holds_from(&self, at: usize) -> bool {
        let ahead = self.found.is_none_or(|(start, _)| start >= at);
        let outside = self.passed_over.is_none_or(|(first, last)| at <= first || at >= last);
        ahead && outside
    }
}

/// A SipHash key from a salt: two FNV-1a hashes of it, each from its own offset.
fn key_of(salt: &[u8]) -> [u64; 2] {
    let fnv = |offset: u64| {
        salt.iter()
            .fold(offset, |hash, byte| (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3))
    };
    [fnv(0xcbf2_9ce4_8422_2325), fnv(0x6c62_272e_07bb_0142)]
}

/// SipHash-2-4 of `data` under `key`: written out, so that a token is the same in every build
/// (the standard library's hasher promises no such thing).
fn siphash24([k0, k1]: [u64; 2], data: &[u8]) -> u64 {
    let mut v = [
        k0 ^ 0x736f_6d65_7073_6575,
        k1 ^ 0x646f_7261_6e64_6f6d,
        k0 ^ 0x6c79_6765_6e65_7261,
        k1 ^ 0x7465_6462_7974_6573,
    ];
    let round = |v: &mut [u64; 4]| {
        v[0] = v[0].wrapping_add(v[1]);
        v[1] = v[1].rotate_left(13) ^ v[0];
        v[0] = v[0].rotate_left(32);
        v[2] = v[2].wrapping_add(v[3]);
        v[3] = v[3].rotate_left(16) ^ v[2];
        v[0] = v[0].wrapping_add(v[3]);
        v[3] = v[3].rotate_left(21) ^ v[0];
        v[2] = v[2].wrapping_add(v[1]);
        v[1] = v[1].rotate_left(17) ^ v[2];
        v[2] = v[2].rotate_left(32);
    };
    let compress = |m: u64, v: &mut [u64; 4]| {
        v[3] ^= m;
        round(v);
        round(v);
        v[0] ^= m;
    };
    let mut chunks = data.chunks_exact(8);
    for chunk in &mut chunks {
        let m = u64::from_le_bytes(chunk.try_into().expect("chunks of eight"));
        compress(m, &mut v);
    }
    let mut last = [0u8; 8];
    last[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
    let m = u64::from_le_bytes(last) | ((data.len() as u64 & 0xff) << 56);
    compress(m, &mut v);
    v[2] ^= 0xff;
    for _ in 0..4 {
        round(&mut v);
    }
    v[0] ^ v[1] ^ v[2] ^ v[3]
}

impl StreamTransformer for Redactor {
    /// Text received but not yet emitted.
    type State = String;

    fn transform(&self, pending: &mut String, chunk: String) -> String {
        pending.push_str(&chunk);
        // Emit what no match can still reach: all but the last `window` characters.
        let keep = match self.window {
            0 => pending.len(),
            window => pending.char_indices().rev().nth(window - 1).map_or(0, |(at, _)| at),
        };
        if keep == 0 {
            return String::new();
        }
        let mut out = String::with_capacity(keep);
        let emitted = self.redact_before(pending, keep, &mut out);
        pending.drain(..emitted);
        out
    }

    fn flush(&self, pending: &mut String) -> String {
        let out = self.redact(pending);
        pending.clear();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::siphash24;

    #[test]
    fn siphash_matches_the_reference_vectors() {
        // The reference implementation's vectors: key 00..0f, messages 00, 00 01, … .
        let key = [0x0706_0504_0302_0100, 0x0f0e_0d0c_0b0a_0908];
        let message: Vec<u8> = (0..64).collect();
        assert_eq!(siphash24(key, &message[..0]), 0x726f_db47_dd0e_0e31);
        assert_eq!(siphash24(key, &message[..1]), 0x74f8_39c5_93dc_67fd);
        assert_eq!(siphash24(key, &message[..8]), 0x93f5_f579_9a93_2462);
        assert_eq!(siphash24(key, &message[..15]), 0xa129_ca61_49be_45e5);
    }
}
