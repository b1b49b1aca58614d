//! What only the provider knows of a call, for the loop's `chat` span: the provider as the
//! GenAI conventions name it, the server the call went to, the answer's id and model, why it
//! stopped. genai's own spans (its `otel` feature) stay off: one call, one span.

use agentix::trace::{ProviderDetails, in_model_call, record_provider_details};
use genai::Client;
use genai::adapter::AdapterKind;
use genai::chat::StopReason;

/// The provider, as the conventions name it (`gen_ai.provider.name`); genai's own name where
/// they name none.
pub(crate) fn provider_name(kind: AdapterKind) -> &'static str {
    match kind {
        AdapterKind::OpenAI | AdapterKind::OpenAIResp => "openai",
        AdapterKind::Anthropic => "anthropic",
        AdapterKind::Gemini | AdapterKind::GeminiIx => "gcp.gemini",
        AdapterKind::Vertex => "gcp.vertex_ai",
        AdapterKind::BedrockApi => "aws.bedrock",
        AdapterKind::Groq => "groq",
        AdapterKind::Cohere => "cohere",
        AdapterKind::DeepSeek => "deepseek",
        AdapterKind::Mistral => "mistral_ai",
        AdapterKind::Xai => "x_ai",
        other => other.as_lower_str(),
    }
}

/// Records where a call to `model` goes, on the loop's span, before it is made, if it is
/// traced (a server genai cannot resolve, missing a key, is left out).
pub(crate) async fn record_server(client: &Client, model: &str) {
    if !in_model_call() {
        return;
    }
    let target = client.resolve_service_target(model).await.ok();
    let Some((host, port)) = target.as_ref().and_then(|target| server(target.endpoint.base_url()))
    else {
        return;
    };
    let details = ProviderDetails {
        server_address: Some(&host),
        server_port: Some(port),
        ..ProviderDetails::default()
    };
    record_provider_details(&details);
}

/// Records what answered — the answer's id, the model, why it stopped — on the loop's span.
pub(crate) fn record_answer(id: Option<&str>, model: Option<&str>, stop: Option<&StopReason>) {
    let reasons: Vec<&str> = stop.map(StopReason::raw).into_iter().collect();
    let details = ProviderDetails {
        response_id: id,
        response_model: model,
        finish_reasons: &reasons,
        ..ProviderDetails::default()
    };
    record_provider_details(&details);
}

/// The host and port of a base URL; the port its scheme's when it names none.
fn server(url: &str) -> Option<(String, u16)> {
    let uri: http::Uri = url.parse().ok()?;
    let host = uri.host()?.trim_start_matches('[').trim_end_matches(']').to_owned();
    let port = uri.port_u16().unwrap_or(if uri.scheme_str() == Some("http") { 80 } else { 443 });
    Some((host, port))
}
