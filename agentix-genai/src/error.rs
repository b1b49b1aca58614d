//! genai's errors as agentix's: the provider, the HTTP status, when to retry.

use std::time::Duration;

use agentix::model::ModelError;
use genai::adapter::AdapterKind;
use genai::chat::StopReason;

/// The [`ModelError`] for a failed call to `provider`.
pub(crate) fn model_error(provider: &str, error: &genai::Error) -> ModelError {
    let provider = provider.to_owned();
    if let Some(status) = error.status() {
        let body = error_body(error);
        let retry_after =
            error.headers().and_then(retry_after).or_else(|| body.as_ref().and_then(retry_delay));
        return ModelError::Provider {
            provider,
            status: status.as_u16(),
            message: provider_message(error, body.as_ref()),
            retry_after,
        };
    }
    if let genai::Error::ChatResponseGeneration { response_body, .. } = error
        && let Some(reason) = blocked(response_body)
    {
        return ModelError::Refused { provider, reason };
    }
    match error {
        genai::Error::RequiresApiKey { .. } | genai::Error::NoAuthData { .. } => {
            let variable = AdapterKind::from_lower_str(&provider)
                .and_then(|kind| kind.default_key_env_name())
                .unwrap_or("the provider's key variable");
            no_key(&provider, variable)
        }
        genai::Error::Resolver {
            resolver_error: genai::resolver::Error::ApiKeyEnvNotFound { env_name },
            ..
        } => no_key(&provider, env_name),
        genai::Error::ChatResponse { body, .. } => stream_error(provider, body),
        // Its display holds the whole request and answer: the cause is what matters.
        genai::Error::ChatResponseGeneration { cause, .. } => {
            ModelError::InvalidResponse { provider, message: first_line(cause) }
        }
        genai::Error::StreamParse { .. }
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

fn no_key(provider: &str, variable: &str) -> ModelError {
    ModelError::Other(format!(
        "{provider}: no API key: set {variable}, or give one to the builder's api_key"
    ))
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

/// The body of a failed call, as JSON, when it is JSON.
fn error_body(error: &genai::Error) -> Option<serde_json::Value> {
    serde_json::from_str(raw_body(error)?).ok()
}

fn raw_body(error: &genai::Error) -> Option<&str> {
    match error {
        genai::Error::HttpError { body, .. }
        | genai::Error::WebModelCall {
            webc_error: genai::webc::Error::ResponseFailedStatus { body, .. },
            ..
        }
        | genai::Error::WebAdapterCall {
            webc_error: genai::webc::Error::ResponseFailedStatus { body, .. },
            ..
        } => Some(body),
        _ => None,
    }
}

/// What the provider said, from its error body (`{"error": {"message": …}}` and the like), or
/// the body itself.
fn provider_message(error: &genai::Error, body: Option<&serde_json::Value>) -> String {
    let said = body.and_then(|json| {
        let error = json.get("error").unwrap_or(json);
        error
            .get("message")
            .and_then(|message| message.as_str())
            .or_else(|| error.as_str())
            .map(str::to_owned)
    });
    said.unwrap_or_else(|| match raw_body(error) {
        Some(raw) => raw.trim().chars().take(500).collect(),
        None => first_line(error),
    })
}

/// Google's way of saying when to retry: a `RetryInfo` detail in the error body, whose
/// `retryDelay` is a duration such as `"30s"` or `"1.5s"`.
fn retry_delay(body: &serde_json::Value) -> Option<Duration> {
    let details = body.get("error")?.get("details")?.as_array()?;
    let delay = details.iter().find_map(|detail| detail.get("retryDelay")?.as_str())?;
    seconds(delay.strip_suffix('s')?.parse().ok()?)
}

/// A `retry-after` (seconds, or an HTTP date) or `retry-after-ms` header, as a wait. A value no
/// wait can hold (negative, infinite, past `Duration::MAX`) is no wait at all.
fn retry_after(headers: &http::HeaderMap) -> Option<Duration> {
    let header =
        |name: &str| headers.get(name).and_then(|value| value.to_str().ok()).map(str::trim);
    if let Some(millis) = header("retry-after-ms").and_then(|value| value.parse::<f64>().ok()) {
        return seconds(millis / 1000.0);
    }
    let value = header("retry-after")?;
    if let Ok(after) = value.parse::<f64>() {
        return seconds(after);
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(at.duration_since(std::time::SystemTime::now()).unwrap_or_default())
}

fn seconds(seconds: f64) -> Option<Duration> {
    Duration::try_from_secs_f64(seconds).ok()
}

/// What an error says, on one line: genai's displays put the cause on a line of its own.
fn first_line(error: &impl std::fmt::Display) -> String {
    let said = error.to_string();
    let mut lines = said.lines().map(str::trim).filter(|line| !line.is_empty());
    let first = lines.next().unwrap_or_default().to_owned();
    if first.ends_with(':') {
        return lines.next().map_or(first.clone(), |next| format!("{first} {next}"));
    }
    match lines.find_map(|line| line.strip_prefix("Cause:")) {
        Some(cause) if !cause.trim().is_empty() => format!("{first} ({})", cause.trim()),
        _ => first,
    }
}

/// Whether a provider's refusals are only in the raw body of a whole answer: OpenAI's
/// `refusal` field and those of the APIs modelled on it, the responses API's `refusal` content,
/// Gemini's `promptFeedback`.
pub(crate) fn refusal_in_body(kind: AdapterKind) -> bool {
    matches!(
        kind,
        AdapterKind::OpenAI
            | AdapterKind::OpenAIResp
            | AdapterKind::Groq
            | AdapterKind::DeepSeek
            | AdapterKind::Xai
            | AdapterKind::Gemini
    )
}

/// The [`ModelError::Refused`] for an answer that declined: a stop reason of the content-filter
/// kind (Anthropic's `refusal`, Gemini's `SAFETY`, OpenAI's `content_filter`), or an OpenAI
/// `refusal` in the body, chat completions' or the responses API's.
pub(crate) fn refusal(
    provider: &str,
    stop: Option<&StopReason>,
    body: Option<&serde_json::Value>,
) -> Option<ModelError> {
    let said = body.and_then(|body| {
        body.pointer("/choices/0/message/refusal")
            .and_then(serde_json::Value::as_str)
            .or_else(|| responses_refusal(body))
            .map(str::to_owned)
    });
    let reason = said.or_else(|| match stop {
        Some(StopReason::ContentFilter(raw)) => Some(raw.clone()),
        _ => None,
    })?;
    Some(ModelError::Refused { provider: provider.to_owned(), reason })
}

/// The responses API's refusal: a `refusal` part of an output message, which genai does not read.
fn responses_refusal(body: &serde_json::Value) -> Option<&str> {
    let items = body.get("output")?.as_array()?;
    let parts = items.iter().filter_map(|item| item.get("content")?.as_array()).flatten();
    parts.filter(|part| part["type"] == "refusal").find_map(|part| part.get("refusal")?.as_str())
}

/// Gemini's reason for blocking a prompt, from a body with no answer in it.
fn blocked(body: &serde_json::Value) -> Option<String> {
    let reason = body.pointer("/promptFeedback/blockReason")?.as_str()?;
    Some(format!("the prompt was blocked ({reason})"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(name: &'static str, value: &str) -> http::HeaderMap {
        let mut headers = http::HeaderMap::new();
        headers.insert(name, value.parse().unwrap());
        headers
    }

    #[test]
    fn a_retry_after_no_wait_can_hold_is_none_not_a_panic() {
        assert_eq!(retry_after(&headers("retry-after", "7")), Some(Duration::from_secs(7)));
        assert_eq!(
            retry_after(&headers("retry-after-ms", "250")),
            Some(Duration::from_millis(250))
        );
        for value in ["inf", "NaN", "-3", "1e30"] {
            assert_eq!(retry_after(&headers("retry-after", value)), None, "{value}");
            assert_eq!(retry_after(&headers("retry-after-ms", value)), None, "{value}");
        }
        let body = serde_json::json!({ "error": { "details": [{ "retryDelay": "1e30s" }] } });
        assert_eq!(retry_delay(&body), None);
        let body = serde_json::json!({ "error": { "details": [{ "retryDelay": "1.5s" }] } });
        assert_eq!(retry_delay(&body), Some(Duration::from_millis(1500)));
    }

    #[test]
    fn a_retry_after_date_in_the_past_is_no_wait() {
        let past = headers("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT");
        assert_eq!(retry_after(&past), Some(Duration::ZERO));
    }
}
