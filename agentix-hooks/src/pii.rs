//! PII redaction: e-mail addresses, phone numbers, card numbers, IBANs and patterns of your
//! own — masked, hashed or refused in the requests sent, the model's streamed answer, and tool
//! results.

use agentix::event::{AfterModel, AfterTool, BeforeModel, ToolError};
use agentix::{
    AssistantMessage, Part, ToolResult, Turn, Verdict, hook,
    message::ToolFailure,
    model::ModelRequest,
    transform::{PatternError, Redactor},
};

/// What becomes of personal data found.
#[derive(Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum PiiAction {
    /// Replaced by a label: `[redacted e-mail]`.
    #[default]
    Mask,
    /// Replaced by a token that hashes the value, keyed by a salt: `[e-mail #0123456789abcdef]`
    /// — the same value, the same token, so the model can still tell two apart.
    Hash {
        /// The hash's key: keep it secret, so a short value cannot be guessed back.
        salt: String,
    },
    /// Not let through: a request that holds some is not sent (the turn halts), a tool result
    /// that holds some reaches the model as a failure, an answer that holds some ends the turn.
    Refuse,
}

/// The salt stays out of logs.
impl std::fmt::Debug for PiiAction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PiiAction::Mask => f.write_str("Mask"),
            PiiAction::Hash { .. } => f.write_str("Hash { salt: <hidden> }"),
            PiiAction::Refuse => f.write_str("Refuse"),
        }
    }
}

/// E-mail addresses (bounded, as the core `Redactor`'s).
const EMAIL: &str =
    r"[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){0,3}\.[A-Za-z]{2,24}";
/// Phone numbers: international, written whole (`+4722334455`, 10 to 15 digits) or in groups of
/// two to four digits (`+47 22 33 44 55`, `+1-555-123-4567`), and North American
/// (`(555) 123-4567`, `555-123-4567`, `555.123.4567`). A bare run of digits is not one: too many
/// ids, dates and amounts are.
const PHONE: &str = r"\+[1-9][0-9]{9,14}|\+[1-9][0-9]{0,3}(?:[ -][0-9]{2,4}){2,5}|\([0-9]{3}\) ?[0-9]{3}[ .-][0-9]{4}|[0-9]{3}[ .-][0-9]{3}[ .-][0-9]{4}";
/// Card numbers: 13 to 19 digits in a run, or grouped 4-4-4-4 or 4-6-5 by spaces or dashes.
const CARD: &str = r"[0-9]{4}(?:[ -][0-9]{4}){3}|[0-9]{4}[ -][0-9]{6}[ -][0-9]{5}|[0-9]{13,19}";
/// IBANs written in a run: a country, two check digits, 11 to 30 letters and digits.
const IBAN: &str = r"[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}";
/// IBANs written in fours, by how many groups follow the country's — a pattern each, so that
/// the checksum picks the one that ends where the IBAN does, whatever word follows it.
const IBAN_GROUPED: [&str; 6] = [
    r"[A-Z]{2}[0-9]{2}(?: [A-Z0-9]{4}){2} [A-Z0-9]{1,4}",
    r"[A-Z]{2}[0-9]{2}(?: [A-Z0-9]{4}){3} [A-Z0-9]{1,4}",
    r"[A-Z]{2}[0-9]{2}(?: [A-Z0-9]{4}){4} [A-Z0-9]{1,4}",
    r"[A-Z]{2}[0-9]{2}(?: [A-Z0-9]{4}){5} [A-Z0-9]{1,4}",
    r"[A-Z]{2}[0-9]{2}(?: [A-Z0-9]{4}){6} [A-Z0-9]{1,4}",
    r"[A-Z]{2}[0-9]{2}(?: [A-Z0-9]{4}){7} [A-Z0-9]{1,2}",
];

fn digits(text: &str) -> impl Iterator<Item = u32> + '_ {
    text.chars().filter_map(|c| c.to_digit(10))
}

/// Whether a phone number has as many digits as one can (7 to 15, E.164's most).
pub(crate) fn phone_digits(text: &str) -> bool {
    (7..=15).contains(&digits(text).count())
}

/// Whether a card number's digits pass the Luhn check.
pub(crate) fn luhn(text: &str) -> bool {
    let digits: Vec<u32> = digits(text).collect();
    if !(13..=19).contains(&digits.len()) {
        return false;
    }
    let sum: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(at, &digit)| match at % 2 {
            0 => digit,
            _ if digit * 2 > 9 => digit * 2 - 9,
            _ => digit * 2,
        })
        .sum();
    sum.is_multiple_of(10)
}

/// Whether an IBAN's check digits are right (ISO 13616: mod 97 of the rearranged number is 1).
pub(crate) fn iban_checks(text: &str) -> bool {
    let compact: Vec<char> = text.chars().filter(|c| !c.is_whitespace()).collect();
    if !(15..=34).contains(&compact.len()) {
        return false;
    }
    let rearranged = compact[4..].iter().chain(&compact[..4]);
    let mut rest: u32 = 0;
    for c in rearranged {
        let value = match c.to_digit(36) {
            Some(value) => value,
            None => return false,
        };
        // Letters count as two digits (A = 10 … Z = 35).
        rest = if value > 9 { (rest * 100 + value) % 97 } else { (rest * 10 + value) % 97 };
    }
    rest == 1
}

/// Finds personal data and masks, hashes or refuses it ([`PiiAction`]) where it would leave the
/// agent or reach the model: in each request sent (`before_model`: text, tool calls' string
/// arguments, tool results), in each tool result (`after_tool`, before the model or the log sees
/// it), and in the model's answer's text (`after_model`; its tool calls' arguments go to the
/// agent's own tools as the model wrote them) — which, streamed, is redacted as it streams by
/// [`transformer`](Pii::transformer), the core's hold-back [`Redactor`], so no piece of a match
/// reaches an observer. Found by default: e-mail addresses, phone numbers (7 to 15 digits),
/// card numbers (Luhn-checked) and IBANs (checksum-checked); [`empty`](Pii::empty) and the
/// kinds' methods choose, [`pattern`](Pii::pattern) adds your own.
///
/// The log keeps the user's own messages as they were sent (the requests hide what they hold);
/// tool results and answers are kept as redacted. With [`PiiAction::Refuse`], a request that
/// holds personal data in the turn's own content is not sent — the turn halts, its reason naming
/// the kind, never the value — while earlier turns' content is masked.
///
/// ```
/// use agentix::{Agent, ScriptedModel};
/// use agentix_hooks::{Pii, PiiAction};
///
/// let pii = Pii::new().pattern("EMP-[0-9]{6}", "employee id")?.action(PiiAction::Hash {
///     salt: "from-the-environment".into(),
/// });
/// let agent = Agent::builder(ScriptedModel::new().text("Hello."))
///     .transformer(pii.transformer())
///     .hook(pii)
///     .build();
/// # drop(agent);
/// # Ok::<_, agentix::transform::PatternError>(())
/// ```
#[derive(Clone, Debug)]
pub struct Pii {
    redactor: Redactor,
    action: PiiAction,
}

impl Pii {
    /// The hook's name, in errors and traces.
    pub const NAME: &'static str = "pii";

    /// E-mail addresses, phone numbers, card numbers and IBANs, masked.
    pub fn new() -> Self {
        Pii::empty().emails().phone_numbers().card_numbers().ibans()
    }

    /// Nothing found yet: add the kinds to find.
    pub fn empty() -> Self {
        Pii { redactor: Redactor::empty(), action: PiiAction::Mask }
    }

    /// Finds e-mail addresses.
    pub fn emails(self) -> Self {
        self.checked(EMAIL, "e-mail", None)
    }

    /// Finds phone numbers: international (`+47 22 33 44 55`) and North American
    /// (`(555) 123-4567`), of 7 to 15 digits.
    pub fn phone_numbers(self) -> Self {
        self.checked(PHONE, "phone number", Some(phone_digits))
    }

    /// Finds card numbers whose Luhn check digit is right.
    pub fn card_numbers(self) -> Self {
        self.checked(CARD, "card number", Some(luhn))
    }

    /// Finds IBANs whose check digits are right.
    pub fn ibans(self) -> Self {
        let run = self.checked(IBAN, "IBAN", Some(iban_checks));
        IBAN_GROUPED
            .iter()
            .fold(run, |pii, grouped| pii.checked(grouped, "IBAN", Some(iban_checks)))
    }

    /// Finds `pattern` too, called `what` in labels and reasons (the order of
    /// [`Redactor::with_pattern`]). Bounded, as the [`Redactor`]'s patterns are (`{1,64}`, not
    /// `+`), so the stream can hold a match back.
    pub fn pattern(mut self, pattern: &str, what: &str) -> Result<Self, PatternError> {
        self.redactor = self.redactor.with_pattern(pattern, what)?;
        Ok(self)
    }

    /// What becomes of what is found: masked by default.
    pub fn action(mut self, action: PiiAction) -> Self {
        self.redactor = match &action {
            PiiAction::Hash { salt } => self.redactor.hashing(salt),
            PiiAction::Mask | PiiAction::Refuse => self.redactor.labelling("redacted"),
        };
        self.action = action;
        self
    }

    /// The stream transformer that redacts the model's answer as it streams
    /// ([`AgentBuilder::transformer`](agentix::AgentBuilder::transformer)). It masks (or
    /// hashes); with [`PiiAction::Refuse`] it writes `[withheld WHAT]`, and the hook then ends
    /// the turn (a label the model never reads, so an answer that repeats a masked label of
    /// the history is not taken for one that held personal data).
    pub fn transformer(&self) -> Redactor {
        match self.action {
            PiiAction::Refuse => self.redactor.clone().labelling("withheld"),
            _ => self.redactor.clone(),
        }
    }

    fn checked(mut self, pattern: &str, what: &str, check: Option<fn(&str) -> bool>) -> Self {
        let redactor = self.redactor;
        self.redactor = match check {
            Some(check) => redactor.with_checked_pattern(pattern, what, check),
            None => redactor.with_pattern(pattern, what),
        }
        .expect("the built-in patterns are bounded and valid");
        self
    }

    /// Masks (or hashes) `text` in place; whether it held anything.
    fn redact(&self, text: &mut String) -> bool {
        if self.redactor.find(text).is_none() {
            return false;
        }
        *text = self.redactor.redact(text);
        true
    }

    /// Masks the string values of a tool call's arguments, and the numbers that read as what
    /// is found (a card number sent as a number).
    fn redact_json(&self, value: &mut serde_json::Value) {
        match value {
            serde_json::Value::String(text) => {
                self.redact(text);
            }
            serde_json::Value::Number(number) => {
                let mut text = number.to_string();
                if self.redact(&mut text) {
                    *value = serde_json::Value::String(text);
                }
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(|v| self.redact_json(v)),
            serde_json::Value::Object(fields) => {
                fields.values_mut().for_each(|v| self.redact_json(v))
            }
            _ => {}
        }
    }

    /// What a part holds, if anything: for refusing.
    fn found_in(&self, part: &Part) -> Option<String> {
        match part {
            Part::Text(text) => self.redactor.find(text).map(str::to_owned),
            Part::ToolResult(result) => self.redactor.find(&result.output).map(str::to_owned),
            Part::ToolCall(call) => {
                self.redactor.find(&call.arguments.to_string()).map(str::to_owned)
            }
        }
    }

    /// A tool's result as the model may read it: redacted, or withheld — its output and its
    /// failure's message, which may quote what the tool read.
    fn settle(&self, result: &mut ToolResult) {
        let message = match &mut result.error {
            Some(
                ToolFailure::Failed { message }
                | ToolFailure::Panicked { message }
                | ToolFailure::InvalidArguments { message },
            ) => Some(message),
            _ => None,
        };
        if self.action != PiiAction::Refuse {
            self.redact(&mut result.output);
            if let Some(message) = message {
                self.redact(message);
            }
            return;
        }
        let found = self.redactor.find(&result.output);
        let found = found.or_else(|| message.and_then(|message| self.redactor.find(message)));
        if let Some(what) = found {
            let message = format!("the result held {} {what}: it was withheld", a(what));
            result.output = message.clone();
            result.error = Some(ToolFailure::Failed { message });
        }
    }

    fn redact_part(&self, part: &mut Part) {
        match part {
            Part::Text(text) => {
                self.redact(text);
            }
            Part::ToolResult(result) => {
                self.redact(&mut result.output);
            }
            Part::ToolCall(call) => self.redact_json(&mut call.arguments),
        }
    }
}

impl Default for Pii {
    fn default() -> Self {
        Pii::new()
    }
}

/// An article for `what`: "an e-mail", "a card number".
fn a(what: &str) -> &'static str {
    match what.chars().next() {
        Some('a' | 'e' | 'i' | 'o' | 'u' | 'A' | 'E' | 'I' | 'O' | 'U') => "an",
        _ => "a",
    }
}

#[hook]
impl agentix::Hook for Pii {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    async fn before_model(
        &self,
        request: &mut ModelRequest,
        _turn: &mut Turn,
    ) -> Verdict<BeforeModel> {
        let earlier = request.history.min(request.messages.len());
        if self.action == PiiAction::Refuse {
            let this_turn = request.messages[earlier..].iter().flat_map(|m| &m.content);
            if let Some(what) = this_turn.filter_map(|part| self.found_in(part)).next() {
                return Verdict::halt(format!(
                    "the request holds {} {what}: it was not sent",
                    a(&what)
                ));
            }
        }
        for message in &mut request.messages {
            message.content.iter_mut().for_each(|part| self.redact_part(part));
        }
        Verdict::Continue
    }

    async fn after_model(
        &self,
        message: &mut AssistantMessage,
        _turn: &mut Turn,
    ) -> Verdict<AfterModel> {
        if self.action == PiiAction::Refuse {
            // Found as it is, or as the transformer left it.
            let text = message.joined_text();
            let streamed = self.transformer();
            let found = self.redactor.find(&text).or_else(|| streamed.find_redacted(&text));
            if let Some(what) = found {
                return Verdict::halt(format!("the answer held {} {what}", a(what)));
            }
        }
        // The text, which reaches the user; the calls' arguments go to the agent's own tools
        // (the requests that repeat them hide what they hold).
        for part in &mut message.content {
            if let Part::Text(text) = part {
                self.redact(text);
            }
        }
        Verdict::Continue
    }

    async fn after_tool(&self, result: &mut ToolResult, _turn: &mut Turn) -> Verdict<AfterTool> {
        self.settle(result);
        Verdict::Continue
    }

    /// A failure's message may quote what the tool read.
    async fn tool_error(&self, result: &mut ToolResult, _turn: &mut Turn) -> Verdict<ToolError> {
        self.settle(result);
        Verdict::Continue
    }
}
