//! Why a request failed: a status and a stable code a client can act on — a 4xx for what the
//! client can change, a 5xx for the server's or the model's failures.

use std::time::Duration;

use agentix::Error;
use agentix_store::StoreError;
use axum::Json;
use axum::extract::rejection::JsonRejection;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::Waiting;
use crate::identity::Unauthenticated;

/// Why a request failed, as the client reads it.
#[derive(Debug)]
#[non_exhaustive]
pub enum ApiError {
    /// The request proves no identity: no credentials, or credentials that do not hold.
    Unauthenticated(Unauthenticated),
    /// The caller may see the conversation but not do this to it (an approval without the
    /// approver role, a message from a reader).
    Forbidden(String),
    /// The request's `Host` is not a name the server answers to.
    HostNotAllowed,
    /// The request comes from a page of an origin the server does not allow.
    OriginNotAllowed,
    /// The caller sent more requests than its limit: it may send again after `wait`.
    RateLimited {
        /// How long until it may.
        wait: Duration,
    },
    /// The caller has as many turns running as its limit.
    TooManyTurns {
        /// The limit.
        limit: usize,
    },
    /// No conversation has that id.
    UnknownConversation(String),
    /// The message is empty, or only whitespace.
    EmptyMessage,
    /// The body is not the JSON the route takes, or is past the body limit.
    BadRequest(JsonRejection),
    /// A turn is running on the conversation.
    TurnRunning(String),
    /// The message alone is more than the context can hold: no turn opened.
    MessageTooLarge {
        /// The message's tokens, estimated.
        tokens: usize,
        /// The tokens the context budget leaves a request.
        budget: usize,
    },
    /// The turn waits for a person's answer to a tool call.
    AwaitingApproval {
        /// The conversation.
        conversation: String,
        /// The turn's number.
        turn: u64,
        /// The calls it waits on.
        waiting: Waiting,
    },
    /// An approval answered no call the conversation waits on.
    NothingWaiting(String),
    /// An approval named a call the conversation's turn does not wait on.
    UnknownCall(String),
    /// An edit's arguments are not a JSON object.
    EditNotAnObject,
    /// The server is shutting down: it starts no more turns.
    ShuttingDown,
    /// An approval named a call that waits behind another.
    NotNext {
        /// The call named.
        call: String,
        /// The call to answer first.
        first: String,
    },
    /// The turn ended with an error; the log records it.
    Turn {
        /// The turn's number.
        turn: u64,
        /// What ended it.
        error: Error,
    },
    /// The task running the turn ended without an outcome.
    Crashed(String),
    /// The store failed, or has no conversation of that id.
    Store(StoreError),
    /// The store does not answer: the server is not ready.
    Unready(StoreError),
}

impl ApiError {
    fn status(&self) -> StatusCode {
        match self {
            ApiError::Unauthenticated(_) => StatusCode::UNAUTHORIZED,
            ApiError::Forbidden(_) | ApiError::HostNotAllowed | ApiError::OriginNotAllowed => {
                StatusCode::FORBIDDEN
            }
            ApiError::RateLimited { .. } | ApiError::TooManyTurns { .. } => {
                StatusCode::TOO_MANY_REQUESTS
            }
            ApiError::UnknownConversation(_) | ApiError::UnknownCall(_) => StatusCode::NOT_FOUND,
            ApiError::EmptyMessage => StatusCode::BAD_REQUEST,
            ApiError::EditNotAnObject => StatusCode::UNPROCESSABLE_ENTITY,
            ApiError::ShuttingDown => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::BadRequest(rejection) => rejection.status(),
            ApiError::MessageTooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::TurnRunning(_)
            | ApiError::AwaitingApproval { .. }
            | ApiError::NothingWaiting(_)
            | ApiError::NotNext { .. } => StatusCode::CONFLICT,
            ApiError::Store(StoreError::NotFound { .. }) => StatusCode::NOT_FOUND,
            ApiError::Store(_) => StatusCode::INTERNAL_SERVER_ERROR,
            ApiError::Unready(_) => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Turn { error: Error::Commit(error), .. } if error.conflict => {
                StatusCode::CONFLICT
            }
            ApiError::Turn { error: Error::AwaitingApproval { .. }, .. } => StatusCode::CONFLICT,
            ApiError::Turn { error: Error::Halted { .. }, .. } => StatusCode::UNPROCESSABLE_ENTITY,
            ApiError::Turn { error: Error::Model(_), .. } => StatusCode::BAD_GATEWAY,
            ApiError::Turn { error: Error::TurnTimedOut { .. }, .. } => StatusCode::GATEWAY_TIMEOUT,
            ApiError::Turn { .. } | ApiError::Crashed(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// How long until trying again may succeed, for errors that pass: a turn that runs now,
    /// another server's that committed first, a limit reached.
    fn retry_after(&self) -> Option<u64> {
        match self {
            ApiError::TurnRunning(_) | ApiError::ShuttingDown | ApiError::TooManyTurns { .. } => {
                Some(1)
            }
            ApiError::RateLimited { wait } => {
                Some(wait.as_secs_f64().ceil().clamp(1.0, 86_400.0) as u64)
            }
            ApiError::Turn { error: Error::Commit(error), .. } if error.conflict => Some(1),
            _ => None,
        }
    }

    /// The error's JSON: `{"error": {"code", "message", …}}`.
    pub fn body(&self) -> serde_json::Value {
        let (code, message) = match self {
            ApiError::Unauthenticated(why) => ("unauthenticated", why.to_string()),
            ApiError::Forbidden(why) => ("forbidden", why.clone()),
            ApiError::HostNotAllowed => (
                "host_not_allowed",
                "the request's Host is not a name this server answers to".to_owned(),
            ),
            ApiError::OriginNotAllowed => (
                "origin_not_allowed",
                "requests from pages of that origin are not allowed".to_owned(),
            ),
            ApiError::RateLimited { wait } => (
                "rate_limited",
                format!("too many requests: send again in {} ms", wait.as_millis().max(1)),
            ),
            ApiError::TooManyTurns { limit } => {
                ("too_many_turns", format!("{limit} of your turns are running: send when one ends"))
            }
            ApiError::UnknownConversation(id) => {
                ("unknown_conversation", format!("no conversation has the id `{id}`"))
            }
            ApiError::EmptyMessage => ("empty_message", "the message is empty".to_owned()),
            ApiError::BadRequest(rejection)
                if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE =>
            {
                ("body_too_large", rejection.body_text())
            }
            ApiError::BadRequest(rejection) => ("bad_request", rejection.body_text()),
            ApiError::TurnRunning(id) => (
                "turn_running",
                format!("a turn is already running on conversation `{id}`; send after it ends"),
            ),
            ApiError::MessageTooLarge { tokens, budget } => {
                let message = format!(
                    "the message is some {tokens} tokens; the context budget leaves a request \
                     {budget}: send a shorter one"
                );
                return json!({ "error": {
                    "code": "message_too_large", "message": message,
                    "tokens": tokens, "budget": budget,
                } });
            }
            ApiError::AwaitingApproval { conversation, turn, waiting } => {
                let first = waiting.waiting.first().map_or("", |call| call.call_id.as_str());
                let message = format!(
                    "turn {turn} waits for a person's answer to call `{first}`: answer it at \
                     /conversations/{conversation}/approvals/{first}"
                );
                return json!({ "error": {
                    "code": "awaiting_approval", "message": message,
                    "turn": turn, "waiting": waiting.waiting,
                } });
            }
            ApiError::EditNotAnObject => {
                ("bad_request", "an edit's arguments are a JSON object".to_owned())
            }
            ApiError::ShuttingDown => {
                ("shutting_down", "the server is shutting down; send to another".to_owned())
            }
            ApiError::NothingWaiting(id) => {
                ("nothing_waiting", format!("no call of conversation `{id}` waits for an answer"))
            }
            ApiError::UnknownCall(call) => {
                ("unknown_call", format!("the turn does not wait on a call `{call}`"))
            }
            ApiError::NotNext { call, first } => (
                "not_next",
                format!("call `{call}` waits behind `{first}`: answer `{first}` first"),
            ),
            ApiError::Turn { turn, error } => {
                let code = match error {
                    Error::Commit(error) if error.conflict => "conflict",
                    Error::Commit(_) => "store_failed",
                    Error::AwaitingApproval { .. } => "awaiting_approval",
                    Error::Halted { .. } => "halted",
                    Error::Model(_) => "model_failed",
                    Error::TurnTimedOut { .. } => "turn_timed_out",
                    // The turn's own content outgrew the context: the server's configuration.
                    Error::ContextOverflow { .. } => "context_overflow",
                    _ => "turn_failed",
                };
                // What failed inside (a provider's answer, a database's, a tool's) may name
                // what the client must not see: the server's log has it, the client the code.
                let message = match code {
                    "model_failed" | "store_failed" | "turn_failed" => hidden(code, error),
                    _ => error.to_string(),
                };
                return json!({ "error": { "code": code, "message": message, "turn": turn } });
            }
            ApiError::Crashed(why) => ("turn_crashed", hidden("turn_crashed", why)),
            ApiError::Store(StoreError::NotFound { conversation }) => {
                ("unknown_conversation", format!("no conversation has the id `{conversation}`"))
            }
            ApiError::Store(error) => ("store_failed", hidden("store_failed", error)),
            ApiError::Unready(error) => ("store_unreachable", hidden("store_unreachable", error)),
        };
        json!({ "error": { "code": code, "message": message } })
    }
}

/// Logs what failed inside the server, for its operator; the client's message says only that
/// something did.
fn hidden(code: &str, detail: &dyn std::fmt::Display) -> String {
    tracing::error!(code, "{detail}");
    let what = match code {
        "model_failed" => "the model failed",
        "store_failed" | "store_unreachable" => "the store failed",
        _ => "the turn failed",
    };
    format!("{what}; the server's log says why")
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (self.status(), Json(self.body())).into_response();
        if let Some(seconds) = self.retry_after() {
            response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        if let ApiError::Unauthenticated(why) = &self {
            // RFC 6750: a bearer challenge, with `invalid_token` for credentials refused.
            let challenge = match why {
                Unauthenticated::Missing => HeaderValue::from_static("Bearer realm=\"agentix\""),
                Unauthenticated::Invalid(_) => {
                    HeaderValue::from_static("Bearer realm=\"agentix\", error=\"invalid_token\"")
                }
            };
            response.headers_mut().insert(header::WWW_AUTHENTICATE, challenge);
        }
        response
    }
}
