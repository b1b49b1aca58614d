//! What only the provider knows of a model call, added to the loop's `chat` span by the
//! [`Model`](crate::Model) while it answers: one call, one span.

use tracing::Span;

use super::TARGET;

/// What only the provider knows of a model call — where it went, the answer's id and model,
/// why it stopped — for the loop's `chat` span. A [`Model`](crate::Model) records it with
/// [`record_provider_details`] while it answers.
#[derive(Clone, Copy, Debug, Default)]
pub struct ProviderDetails<'a> {
    /// The server's host (`server.address`).
    pub server_address: Option<&'a str>,
    /// The server's port (`server.port`).
    pub server_port: Option<u16>,
    /// The answer's id (`gen_ai.response.id`).
    pub response_id: Option<&'a str>,
    /// The model that answered, as the provider names it (`gen_ai.response.model`).
    pub response_model: Option<&'a str>,
    /// Why the model stopped, in the provider's words (`gen_ai.response.finish_reasons`,
    /// recorded as a JSON array: `tracing` fields hold no lists).
    pub finish_reasons: &'a [&'a str],
}

/// Records `details` on the model call in progress: the loop's `chat` span, current while a
/// [`Model`](crate::Model) answers. Outside one — a model called by hand, or by a hook — it
/// does nothing, so a provider never opens a second span for the same call.
pub fn record_provider_details(details: &ProviderDetails<'_>) {
    let span = Span::current();
    if !is_model_call(&span) {
        return;
    }
    let ProviderDetails { server_address, server_port, response_id, response_model, .. } = *details;
    if let Some(address) = server_address {
        span.record("server.address", address);
    }
    if let Some(port) = server_port {
        span.record("server.port", i64::from(port));
    }
    if let Some(id) = response_id {
        span.record("gen_ai.response.id", id);
    }
    if let Some(model) = response_model {
        span.record("gen_ai.response.model", model);
    }
    if !details.finish_reasons.is_empty() {
        let reasons = serde_json::to_string(details.finish_reasons).unwrap_or_default();
        span.record("gen_ai.response.finish_reasons", reasons);
    }
}

/// Whether the span current here is the loop's span of a model call, traced: a
/// [`Model`](crate::Model) asks before it works out details to
/// [record](record_provider_details).
pub fn in_model_call() -> bool {
    is_model_call(&Span::current())
}

fn is_model_call(span: &Span) -> bool {
    !span.is_disabled()
        && span.metadata().is_some_and(|meta| meta.target() == TARGET && meta.name() == "chat")
}
