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
        genai::Error::ChatResponse { body, .. } => stream_error(provider, body),
        genai::Error::StreamParse { .. }
        | genai::Error::ChatResponseGeneration { .. }
        | genai::Error::InvalidJsonResponseElement { .. }
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
        // A stream whose request failed carries the HTTP error inside.
        genai::Error::WebStream { error: inner, cause, .. } => {
            match inner.downcast_ref::<genai::Error>() {
                Some(inner) => model_error(&provider, inner),
                None => ModelError::Transport(format!("{provider}: {}", first_line(cause))),
            }
        }
        other => ModelError::Other(format!("{provider}: {}", first_line(other))),
    }
}

/// An error the provider sent inside a stream that had begun with 200: typed as the HTTP status
/// its kind stands for (Anthropic's `overloaded_error` is 529), so a retry policy reads it as it
/// would have read the status.
fn stream_error(provider: String, body: &serde_json::Value) -> ModelError {
    let error = body.get("error").filter(|error| error.is_object()).unwrap_or(body);
    let text = |key: &str| error.get(key).and_then(serde_json::Value::as_str);
    let message = text("message").map_or_else(|| body.to_string(), str::to_owned);
    let status = match text("type").or_else(|| text("code")) {
        Some("invalid_request_error") => 400,
        Some("authentication_error") => 401,
        Some("permission_error") => 403,
        Some("not_found_error") => 404,
        Some("request_too_large") => 413,
        Some("rate_limit_error" | "rate_limit_exceeded") => 429,
        Some("api_error" | "server_error") => 500,
        Some("overloaded_error") => 529,
        _ => {
            let message = format!("the stream reported an error: {message}");
            return ModelError::InvalidResponse { provider, message };
        }
    };
    ModelError::Provider { provider, status, message, retry_after: None }
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
