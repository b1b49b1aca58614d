//! The tower layer that authenticates each request before the routes see it, and the
//! extractor the routes read the identity with.

use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::body::Body;
use axum::extract::FromRequestParts;
use axum::http::Request;
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};
use futures::future::BoxFuture;
use tower::{Layer, Service};

use super::{Authenticate, Identity, Unauthenticated};
use crate::ApiError;

/// Authenticates every request with `A` before the service it wraps sees it: the
/// [`Identity`] goes into the request's extensions, where the [`Identity`] extractor finds it;
/// a request without one is answered `401` with a `WWW-Authenticate: Bearer` challenge. The
/// subject (never the credential) is recorded on the request's `tracing` span, in its
/// `subject` field if it has one.
///
/// ```
/// use agentix_server::identity::{ApiKeys, AuthenticateLayer, Identity};
/// use axum::{Router, routing::get};
///
/// let keys = ApiKeys::new().with_key("agx_secret", Identity::new("alice"));
/// let app: Router = Router::new()
///     .route("/me", get(|identity: Identity| async move { identity.subject }))
///     .layer(AuthenticateLayer::new(keys));
/// ```
pub struct AuthenticateLayer<A> {
    authenticator: Arc<A>,
}

impl<A> AuthenticateLayer<A> {
    /// Authenticates with `authenticator`.
    pub fn new(authenticator: A) -> Self {
        AuthenticateLayer { authenticator: Arc::new(authenticator) }
    }
}

impl<A> Clone for AuthenticateLayer<A> {
    fn clone(&self) -> Self {
        AuthenticateLayer { authenticator: Arc::clone(&self.authenticator) }
    }
}

impl<A, S> Layer<S> for AuthenticateLayer<A> {
    type Service = Authenticated<A, S>;

    fn layer(&self, inner: S) -> Self::Service {
        Authenticated { authenticator: Arc::clone(&self.authenticator), inner }
    }
}

/// A service whose requests are authenticated first: see [`AuthenticateLayer`].
pub struct Authenticated<A, S> {
    authenticator: Arc<A>,
    inner: S,
}

impl<A, S: Clone> Clone for Authenticated<A, S> {
    fn clone(&self) -> Self {
        Authenticated { authenticator: Arc::clone(&self.authenticator), inner: self.inner.clone() }
    }
}

impl<A, S> Service<Request<Body>> for Authenticated<A, S>
where
    A: Authenticate,
    S: Service<Request<Body>, Response = Response, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    type Response = Response;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Response, Infallible>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<Body>) -> Self::Future {
        let authenticator = Arc::clone(&self.authenticator);
        // The clone that was made ready serves this request; a fresh one waits for the next.
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        Box::pin(async move {
            let (mut parts, body) = request.into_parts();
            match authenticator.authenticate(&parts).await {
                Ok(identity) => {
                    let subject = tracing::field::display(&identity.subject);
                    tracing::Span::current().record("subject", subject);
                    parts.extensions.insert(identity);
                    inner.call(Request::from_parts(parts, body)).await
                }
                Err(why) => {
                    tracing::Span::current().record("subject", tracing::field::display("-"));
                    Ok(ApiError::Unauthenticated(why).into_response())
                }
            }
        })
    }
}

/// The identity an authenticating layer (or the app's own middleware) put in the request's
/// extensions; a request without one is refused `401`.
impl<S: Send + Sync> FromRequestParts<S> for Identity {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        parts
            .extensions
            .get::<Identity>()
            .cloned()
            .ok_or(ApiError::Unauthenticated(Unauthenticated::Missing))
    }
}
