//! Which model errors the hooks act on by default.

use agentix::model::ModelError;

/// Whether `error` may pass if the call is made again: the provider could not be reached or
/// its answer read, it was overloaded or limited the rate (`429`, `5xx`), or the call timed
/// out. [`Retry`](crate::Retry)'s default.
pub fn transient(error: &ModelError) -> bool {
    match error {
        ModelError::Transport(_) | ModelError::TimedOut { .. } => true,
        ModelError::InvalidResponse { .. } => true,
        ModelError::Provider { status, .. } => *status == 429 || (500..600).contains(status),
        _ => false,
    }
}

/// Whether another model may answer where this one failed: a [`transient`] error, any error
/// the provider answered with (a model it does not serve, a request it will not take), or a
/// refusal. [`ModelFallback`](crate::ModelFallback)'s default.
pub fn falls_through(error: &ModelError) -> bool {
    transient(error) || matches!(error, ModelError::Provider { .. } | ModelError::Refused { .. })
}
