//! What a turn's final answer is made into: the model's message as it is (`Text`), or a value
//! of the agent's output type (`Typed`), parsed from the message's JSON and checked by the
//! agent's validators — an answer that does not parse or pass is sent back to the model.

use std::marker::PhantomData;
use std::sync::Arc;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::error::Error;
use crate::message::AssistantMessage;
use crate::model::OutputSchema;

/// What an agent makes of its turns' final answers. [`Text`] unless the builder was told an
/// output type ([`AgentBuilder::output`](crate::AgentBuilder::output)).
pub trait Answering: Send + Sync + 'static {
    /// What a turn of the agent answers with.
    type Answer: Send + 'static;

    /// Whether the final message is checked (a typed answer): the loop skips
    /// [`check`](Answering::check) at compile time otherwise.
    const CHECKS: bool;

    /// The answer's schema, which requests carry (`ModelParams::output`).
    fn output(&self) -> Option<Arc<OutputSchema>>;

    /// Checks a final message: `Err(why)` sends it back to the model with `why`.
    fn check(&self, message: &AssistantMessage) -> Result<(), String>;

    /// The caller's answer of a final message that passed [`check`](Answering::check).
    fn answer(&self, message: AssistantMessage) -> Result<Self::Answer, Error>;
}

/// The model's final message, as it is.
#[derive(Clone, Copy, Debug, Default)]
pub struct Text;

impl Answering for Text {
    type Answer = AssistantMessage;
    const CHECKS: bool = false;

    fn output(&self) -> Option<Arc<OutputSchema>> {
        None
    }

    #[inline(always)]
    fn check(&self, _: &AssistantMessage) -> Result<(), String> {
        Ok(())
    }

    #[inline(always)]
    fn answer(&self, message: AssistantMessage) -> Result<AssistantMessage, Error> {
        Ok(message)
    }
}

/// A check of a typed answer beyond its type: `Err` says what is wrong, for the model.
pub type Validator<O> = fn(&O) -> Result<(), String>;

/// A value of `O`, read from the final message's JSON and checked by the validators.
pub struct Typed<O> {
    schema: Arc<OutputSchema>,
    validators: Vec<Validator<O>>,
    _answer: PhantomData<fn() -> O>,
}

impl<O> std::fmt::Debug for Typed<O> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Typed")
            .field("schema", &self.schema.name)
            .field("validators", &self.validators.len())
            .finish()
    }
}

impl<O: schemars::JsonSchema> Typed<O> {
    pub(crate) fn new() -> Self {
        Typed {
            schema: Arc::new(OutputSchema::of::<O>()),
            validators: Vec::new(),
            _answer: PhantomData,
        }
    }
}

impl<O> Typed<O> {
    pub(crate) fn validate(mut self, validator: Validator<O>) -> Self {
        self.validators.push(validator);
        self
    }
}

impl<O> Answering for Typed<O>
where
    O: Serialize + DeserializeOwned + Send + Sync + 'static,
{
    type Answer = O;
    const CHECKS: bool = true;

    fn output(&self) -> Option<Arc<OutputSchema>> {
        Some(Arc::clone(&self.schema))
    }

    fn check(&self, message: &AssistantMessage) -> Result<(), String> {
        let value = parse::<O>(message, &self.schema.schema)?;
        self.validators.iter().try_for_each(|validator| validator(&value))
    }

    fn answer(&self, message: AssistantMessage) -> Result<O, Error> {
        // Checked already, as the turn ended: it reads the same now.
        parse::<O>(&message, &self.schema.schema).map_err(|error| Error::InvalidAnswer {
            raw: message.joined_text().into_owned(),
            error,
        })
    }
}

/// What a hook reads of the answer, read from an agent that answers as `F`: [`AnyAnswer`], what
/// every hook but a typed `before_final` hook reads, from any agent; [`Typed<O>`], what a
/// typed `before_final` hook reads, only from an agent that answers with `O`.
#[diagnostic::on_unimplemented(
    message = "the agent answers with `{F}`, and this `before_final` hook reads `{Self}`",
    label = "this hook reads the answer as another type than the agent's",
    note = "a `before_final` hook that takes `&T` or `&mut T` reads the agent's typed answer: declare `T` with `.output::<T>()` before adding the hook, or take `&mut AssistantMessage` to read the message's text"
)]
pub trait ReadFrom<F> {}

/// What a hook that does not read the typed answer reads: any agent has it.
#[derive(Debug)]
pub enum AnyAnswer {}

impl<F: Answering> ReadFrom<F> for AnyAnswer {}

impl<O> ReadFrom<Typed<O>> for Typed<O> {}

/// The final message's JSON as an `O`: its text, a fenced code block's if the model wrapped
/// it in one; a `null` the schema does not allow (strict mode makes a model send one for each
/// optional field) read as absent.
pub(super) fn parse<O: DeserializeOwned>(
    message: &AssistantMessage,
    schema: &serde_json::Value,
) -> Result<O, String> {
    let text = message.joined_text();
    let json = unfenced(&text);
    let mut value: serde_json::Value =
        serde_json::from_str(json).map_err(|error| format!("the answer is not JSON: {error}"))?;
    crate::model::strict::unstrict(&mut value, schema);
    serde_json::from_value(value)
        .map_err(|error| format!("the answer does not match its schema: {error}"))
}

/// The text inside a Markdown code fence, if the whole text is one; else the text.
fn unfenced(text: &str) -> &str {
    let trimmed = text.trim();
    let Some(inner) = trimmed.strip_prefix("```").and_then(|rest| rest.strip_suffix("```")) else {
        return trimmed;
    };
    // The fence's info string (`json`) ends its first line.
    inner.split_once('\n').map_or(inner, |(_, body)| body).trim()
}
