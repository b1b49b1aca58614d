//! Typed `before_final` hooks: a hook of [`on::BeforeFinalOf`] joins the chain as a
//! `before_final` hook that reads the answer as the agent's output type, lends it to the hook,
//! and writes an edit back as the message's JSON. An agent takes one only if it answers with
//! that type ([`ReadFrom`](super::ReadFrom)).

use super::Hooks;
use super::answer::parse;
use super::answer::{Answering, Typed};
use super::chain::Single;
use super::grow::Push;
use super::register::Register;
use crate::event::BeforeFinal;
use crate::hook::{ModelWraps, ToolWraps, short_type_name};
use crate::message::{AssistantMessage, Part};
use crate::model::OutputSchema;
use crate::on;
use crate::turn::Turn;
use crate::verdict::{Halt, Verdict};
use std::marker::PhantomData;
use std::time::Duration;

/// A typed `before_final` hook in the chain, with the schema of its answer (to read strict
/// mode's nulls for optional fields as absent, as the agent's check does).
#[derive(Debug)]
pub struct OnAnswer<H> {
    hook: H,
    schema: serde_json::Value,
}

impl<H: on::BeforeFinalOf> OnAnswer<H> {
    fn read(&self, message: &AssistantMessage) -> Result<H::Answer, String> {
        parse::<H::Answer>(message, &self.schema)
    }
}

impl<H: on::BeforeFinalOf> on::BeforeFinal for OnAnswer<H> {
    const TIMEOUT: Option<Duration> = H::TIMEOUT;
    // An answer that does not read as the type is the hook's to skip, reported so: the
    // agent's check sends it back to the model after the chain.
    const CONDITIONAL: bool = true;
    const EDITS: bool = H::EDITS;

    fn applies(&self, message: &AssistantMessage, turn: &Turn) -> bool {
        self.read(message).is_ok_and(|answer| !H::CONDITIONAL || self.hook.applies(&answer, turn))
    }

    fn name(&self) -> &'static str {
        self.hook.name()
    }

    async fn before_final(
        &self,
        message: &mut AssistantMessage,
        turn: &mut Turn,
    ) -> Verdict<BeforeFinal> {
        let Ok(mut answer) = self.read(message) else {
            return Verdict::Continue;
        };
        // Written back only if the hook edited it: the log keeps the model's own JSON otherwise.
        let before = H::EDITS.then(|| serde_json::to_value(&answer).ok()).flatten();
        let verdict = self.hook.before_final(&mut answer, turn).await;
        if H::EDITS {
            match serde_json::to_value(&answer) {
                Ok(edited) if before.as_ref() == Some(&edited) => {}
                Ok(edited) => {
                    // An edit that no longer reads as the type (a NaN written as `null`, a
                    // field its serde skips) is the hook's mistake, not the model's.
                    if let Err(error) = serde_json::from_value::<H::Answer>(edited.clone()) {
                        return Verdict::Halt(Halt::failure(format!(
                            "its edit left an answer that does not read as `{}`: {error}",
                            short_type_name::<H::Answer>()
                        )));
                    }
                    message.content = vec![Part::Text(edited.to_string())];
                }
                Err(error) => {
                    return Verdict::Halt(Halt::failure(format!(
                        "its edited answer did not serialize: {error}"
                    )));
                }
            }
        }
        // A STOP's replacement is the hook's own answer: one that does not read as the type
        // is the hook's mistake, not the model's to answer for.
        if let Verdict::Stop(replacement) = &verdict
            && let Err(error) = self.read(replacement)
        {
            return Verdict::Halt(Halt::failure(format!(
                "its STOP carried an answer that is not a `{}`: {error}",
                short_type_name::<H::Answer>()
            )));
        }
        verdict
    }
}

/// Marks the registration of a typed `before_final` hook.
#[derive(Debug)]
pub enum ForAnswer {}

impl<H, C, M, T, F: Answering> Register<ForAnswer, Hooks<C, M, T, F>> for H
where
    H: on::BeforeFinalOf,
    C: Push<Single<OnAnswer<H>, BeforeFinal>>,
    M: ModelWraps,
    T: ToolWraps,
{
    type Output = Hooks<C::Output, M, T, F>;
    type Tool = ();
    type Reads = Typed<H::Answer>;

    fn register(self, hooks: Hooks<C, M, T, F>) -> Self::Output {
        let name = self.name();
        let schema = OutputSchema::of::<H::Answer>().schema;
        let hook = Single(OnAnswer { hook: self, schema }, PhantomData, name);
        Hooks {
            chain: hooks.chain.push(hook),
            model: hooks.model,
            tool: hooks.tool,
            answering: hooks.answering,
        }
    }
}
