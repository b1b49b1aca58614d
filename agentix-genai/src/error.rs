//! genai's errors as agentix's: the provider, the HTTP status, when to retry.

use std::time::Duration;

use agentix::ModelError;

/// The [`ModelError`] for a failed call to `provider`.
pub(crate) fn model_error(provider: &str, error: &genai::Error) -> ModelError {
    let provider = provider.to_owned();
    if let Some(status) = error.status() {
        let headers = error.headers();
        return ModelError::Provider {
            provider,
            status: status.as_u16(),
            message: provider_message(error),
            retry_after: headers.and_then(retry_after),
        };
    }
    match error {
        genai::Error::StreamParse { .. }
        | genai::Error::ChatResponseGeneration { .. }
        | genai::Error::InvalidJsonResponseElement { .. }
        | genai::Error::ChatResponse { .. }
        | genai::Error::SerdeJson(_)
        | genai::Error::JsonValueExt(_)
        | genai::Error::NoChatResponse { .. } => {
            ModelError::InvalidResponse { provider, message: first_line(error) }
        }
        genai::Error::WebModelCall { webc_error, .. }
        | genai::Error::WebAdapterCall { webc_error, .. } => match webc_error {
            genai::webc::Error::Reqwest(cause) => {
                ModelError::Transport(format!("{provider}: {cause}"))
            }
            other => ModelError::InvalidResponse { provider, message: first_line(other) },
        },
        genai::Error::WebStream { cause, .. } => {
            ModelError::Transport(format!("{provider}: {cause}"))
        }
        other => ModelError::Other(format!("{provider}: {}", first_line(other))),
    }
}

/// What the provider said, from its error body (`{"error": {"message": …}}` and the like), or
/// the body itself.
fn provider_message(error: &genai::Error) -> String {
    let body = match error {
        genai::Error::HttpError { body, .. } => body.clone(),
        genai::Error::WebModelCall {
            webc_error: genai::webc::Error::ResponseFailedStatus { body, .. },
            ..
        }
        | genai::Error::WebAdapterCall {
            webc_error: genai::webc::Error::ResponseFailedStatus { body, .. },
            ..
        } => body.clone(),
        other => return first_line(other),
    };
    let parsed: Option<serde_json::Value> = serde_json::from_str(&body).ok();
    let said = parsed.as_ref().and_then(|json| {
        let error = json.get("error").unwrap_or(json);
        error
            .get("message")
            .and_then(|message| message.as_str())
            .map(str::to_owned)
            .or_else(|| error.as_str().map(str::to_owned))
    });
    said.unwrap_or_else(|| body.trim().chars().take(500).collect())
}

/// A `retry-after` (seconds, or an HTTP date) or `retry-after-ms` header, as a wait.
fn retry_after(headers: &http::HeaderMap) -> Option<Duration> {
    let header =
        |name: &str| headers.get(name).and_then(|value| value.to_str().ok()).map(str::trim);
    if let Some(millis) = header("retry-after-ms").and_then(|value| value.parse::<f64>().ok()) {
        return Some(Duration::from_secs_f64(millis.max(0.0) / 1000.0));
    }
    let value = header("retry-after")?;
    if let Ok(seconds) = value.parse::<f64>() {
        return Some(Duration::from_secs_f64(seconds.max(0.0)));
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(at.duration_since(std::time::SystemTime::now()).unwrap_or_default())
}

fn first_line(error: &impl std::fmt::Display) -> String {
    error.to_string().lines().next().unwrap_or_default().to_owned()
}
