//! The stream-transformer seam: text on its way from the model, chunk by chunk.

use regex::Regex;

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
/// A match becomes `[redacted WHAT]`, or, [`hashing`](Redactor::hashing), `[WHAT #1a2b3c4d]`:
/// the same value the same token, so that a reader can tell two apart without seeing either.
/// A pattern may be [checked](Redactor::with_checked_pattern): a match its check refuses (a
/// card number whose Luhn digit is wrong) is left as it is.
#[derive(Clone, Debug)]
pub struct Redactor {
    patterns: Vec<Pattern>,
    window: usize,
    /// The salt of the hashed tokens, when matches are hashed rather than labelled.
    hashing: Option<String>,
}

/// One pattern: its regex, what it finds, its label, and the check its matches must pass.
#[derive(Clone, Debug)]
struct Pattern {
    regex: Regex,
    what: String,
    label: String,
    check: Option<fn(&str) -> bool>,
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
        Redactor { patterns: Vec::new(), window: 0, hashing: None }
    }

    /// Adds a pattern: matches become `[redacted WHAT]`. The window grows to the pattern's
    /// longest match, which must exist; a pattern that matches empty text or looks around its
    /// match is refused.
    pub fn with_pattern(self, pattern: &str, what: &str) -> Result<Self, PatternError> {
        self.add(pattern, what, None)
    }

    /// Adds a pattern whose matches are redacted only when `check` accepts them: a card
    /// number's Luhn digit, an IBAN's checksum. A match the check refuses is left as it is
    /// (and no shorter match at its start is tried).
    pub fn with_checked_pattern(
        self,
        pattern: &str,
        what: &str,
        check: fn(&str) -> bool,
    ) -> Result<Self, PatternError> {
        self.add(pattern, what, Some(check))
    }

    /// Replaces each match with a token made of what it is and a hash of the value and
    /// `salt` (`[e-mail #1a2b3c4d]`) instead of a label: the same value always gives the same
    /// token, so a reader can still tell values apart and follow one through a conversation.
    /// The hash is a pseudonym (64-bit SipHash, stable for a build of the program), not a
    /// cryptographic digest: a secret salt keeps a short value from being guessed back.
    pub fn hashing(mut self, salt: impl Into<String>) -> Self {
        self.hashing = Some(salt.into());
        self
    }

    /// What the first match in `text` is (the `what` of its pattern), if there is one: for a
    /// caller that refuses text rather than redacting it.
    pub fn find(&self, text: &str) -> Option<&str> {
        self.first_match(text, 0).map(|(_, _, pattern)| pattern.what.as_str())
    }

    /// What the first label or token this redactor writes in `text` stands for, if `text`
    /// holds one: for a caller that refuses text a stream already redacted.
    pub fn find_redacted(&self, text: &str) -> Option<&str> {
        self.patterns.iter().find_map(|pattern| {
            let written = match &self.hashing {
                None => text.contains(&pattern.label),
                Some(_) => text.contains(&format!("[{} #", pattern.what)),
            };
            written.then_some(pattern.what.as_str())
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
        let label = format!("[redacted {what}]");
        self.patterns.push(Pattern { regex, what: what.to_owned(), label, check });
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
        let mut at = 0;
        while let Some((start, end, pattern)) = self.first_match(text, at) {
            if end > cut {
                out.push_str(&text[at..start.min(cut).max(at)]);
                return start.min(cut).max(at);
            }
            out.push_str(&text[at..start]);
            self.replace(&text[start..end], pattern, out);
            at = end;
        }
        out.push_str(&text[at..cut.max(at)]);
        cut.max(at)
    }

    /// Writes what replaces `value`, a match of `pattern`.
    fn replace(&self, value: &str, pattern: &Pattern, out: &mut String) {
        match &self.hashing {
            None => out.push_str(&pattern.label),
            Some(salt) => {
                use std::hash::{Hash, Hasher};
                let mut hasher = std::hash::DefaultHasher::new();
                (salt.as_str(), value).hash(&mut hasher);
                let hash = hasher.finish() >> 32;
                out.push_str(&format!("[{} #{hash:08x}]", pattern.what));
            }
        }
    }

    /// The leftmost match of any pattern at or after byte `from` that its check accepts (the
    /// longest, on a tie).
    fn first_match(&self, text: &str, from: usize) -> Option<(usize, usize, &Pattern)> {
        self.patterns
            .iter()
            .filter_map(|pattern| {
                let mut at = from;
                loop {
                    let found = pattern.regex.find_at(text, at)?;
                    match pattern.check {
                        Some(check) if !check(found.as_str()) => {
                            // Past the refused match's first character.
                            at = found.start()
                                + text[found.start()..].chars().next().map_or(1, char::len_utf8);
                        }
                        _ => return Some((found.start(), found.end(), pattern)),
                    }
                }
            })
            .min_by_key(|&(start, end, _)| (start, std::cmp::Reverse(end)))
    }
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
