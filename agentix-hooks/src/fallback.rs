//! Model fallback: a `wrap_model` hook that asks the next model of a list when one fails.

use std::fmt;
use std::sync::Arc;

use agentix::{
    Turn,
    model::{ModelError, ModelRequest, ModelResponse, NextModel},
    on,
};

use crate::errors::falls_through;

/// When the model fails with an error that falls through (by default [`falls_through`]: a
/// transient error, an error status, a refusal), asks the next model of `models`, in order,
/// and answers with the first that answers; if all fail, with the last error.
///
/// A fallback is a request naming its model ([`ModelRequest::model`]), sent through the loop
/// (`next`): journaled, audited, streamed through the transformers and traced as a `chat` span
/// of its own with its provider — so the agent's model must serve the names, as
/// `agentix-genai`'s does (`anthropic:claude-sonnet-4-5` goes to Anthropic with its own key,
/// whatever the agent's default). A request that already names a model falls back from it.
///
/// ```
/// use agentix::model::ModelError;
/// use agentix_hooks::ModelFallback;
///
/// // Refusals stay refusals: only an outage falls through.
/// let fallback = ModelFallback::to(["anthropic:claude-sonnet-4-5", "gemini:gemini-2.5-flash"])
///     .fall_through_if(agentix_hooks::transient);
/// # drop(fallback);
/// ```
#[derive(Clone)]
pub struct ModelFallback {
    models: Vec<String>,
    falls_through: Arc<dyn Fn(&ModelError) -> bool + Send + Sync>,
}

impl ModelFallback {
    /// The hook's name, in errors and traces.
    pub const NAME: &'static str = "model_fallback";

    /// Falls back to `models`, in order.
    pub fn to<I>(models: I) -> Self
    where
        I: IntoIterator,
        I::Item: Into<String>,
    {
        let models = models.into_iter().map(Into::into).collect();
        ModelFallback { models, falls_through: Arc::new(falls_through) }
    }

    /// Falls through to the next model on the errors `falls` says, in place of the default
    /// ([`falls_through`]).
    pub fn fall_through_if(
        mut self,
        falls: impl Fn(&ModelError) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.falls_through = Arc::new(falls);
        self
    }

    /// The models fallen back to, in order.
    pub fn models(&self) -> &[String] {
        &self.models
    }
}

impl fmt::Debug for ModelFallback {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ModelFallback").field("models", &self.models).finish_non_exhaustive()
    }
}

impl on::WrapModel for ModelFallback {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    async fn wrap_model(
        &self,
        request: &ModelRequest,
        _turn: &Turn,
        next: &impl NextModel,
    ) -> Result<ModelResponse, ModelError> {
        let mut result = next.call(request).await;
        for model in &self.models {
            match &result {
                Err(error) if (self.falls_through)(error) => {}
                _ => return result,
            }
            let mut fallen = request.clone();
            fallen.model = Some(model.clone());
            result = next.call(&fallen).await;
        }
        result
    }
}
