//! Who is asking: an [`Identity`] (a subject and its roles), produced from a request's
//! credentials by an [`Authenticate`] — one of the built-in ones ([`ApiKeys`], [`Jwt`],
//! [`Anonymous`]) or a team's own — and handed to every route by [`AuthenticateLayer`].
//!
//! A route reads it as an extractor (`identity: Identity`). Code that authenticates some other
//! way (its own middleware, a session cookie, a gateway's header) inserts an `Identity` into the
//! request's extensions before the routes run: they take it from there, and answer `401` to a
//! request that has none.

use std::collections::BTreeSet;
use std::fmt;
use std::future::Future;

use axum::http::request::Parts;

mod api_keys;
mod jwt;
mod layer;

pub use api_keys::{ApiKeys, KeyFileError};
pub use jwt::{Jwt, JwtError};
pub use layer::{AuthenticateLayer, Authenticated};

/// Who sent a request: the subject the served agent scopes conversations by, and the roles
/// that grant more (reading every conversation, answering approvals).
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Identity {
    /// The caller's stable id: a user's, a service's. Conversations belong to it.
    pub subject: String,
    /// What else the caller may do, by name (`approver`, `operator`, …; what each grants is
    /// the server's [`Access`](crate::Access)).
    pub roles: BTreeSet<String>,
}

impl Identity {
    /// `subject`, with no roles.
    pub fn new(subject: impl Into<String>) -> Identity {
        Identity { subject: subject.into(), roles: BTreeSet::new() }
    }

    /// The same identity, with `role` too.
    pub fn with_role(mut self, role: impl Into<String>) -> Identity {
        self.roles.insert(role.into());
        self
    }

    /// The same identity, with each of `roles` too.
    pub fn with_roles(mut self, roles: impl IntoIterator<Item = impl Into<String>>) -> Identity {
        self.roles.extend(roles.into_iter().map(Into::into));
        self
    }

    /// Whether the caller has `role`.
    pub fn has_role(&self, role: &str) -> bool {
        self.roles.contains(role)
    }
}

impl fmt::Debug for Identity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Identity")
            .field("subject", &self.subject)
            .field("roles", &self.roles)
            .finish()
    }
}

/// Why a request has no identity. The message is for the client and the log: it never
/// repeats the credential.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unauthenticated {
    /// The request carries no credentials this authenticator reads: the next one in an
    /// [`or`](Authenticate::or) chain may.
    Missing,
    /// It carries credentials this authenticator reads, and they do not hold: a key nobody
    /// has, a token expired, wrongly signed, for another audience. The request is refused,
    /// whatever authenticators follow.
    Invalid(String),
}

impl fmt::Display for Unauthenticated {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unauthenticated::Missing => f.write_str("the request carries no credentials"),
            Unauthenticated::Invalid(why) => write!(f, "the credentials do not hold: {why}"),
        }
    }
}

/// Tells who sent a request, from its credentials. Implement it to plug a team's own auth
/// (an introspection endpoint, mTLS headers set by a proxy) into the served routes; chain
/// several with [`or`](Authenticate::or).
///
/// ```
/// use agentix_server::identity::{Authenticate, Identity, Unauthenticated};
/// use axum::http::request::Parts;
///
/// /// Trusts the gateway in front, which verified the caller and names them.
/// struct FromGateway;
///
/// impl Authenticate for FromGateway {
///     async fn authenticate(&self, request: &Parts) -> Result<Identity, Unauthenticated> {
///         match request.headers.get("x-verified-user").and_then(|user| user.to_str().ok()) {
///             Some(user) => Ok(Identity::new(user)),
///             None => Err(Unauthenticated::Missing),
///         }
///     }
/// }
/// ```
pub trait Authenticate: Send + Sync + 'static {
    /// The identity `request`'s credentials prove, or why there is none.
    fn authenticate(
        &self,
        request: &Parts,
    ) -> impl Future<Output = Result<Identity, Unauthenticated>> + Send;

    /// This authenticator, then `next` for a request that carries none of this one's
    /// credentials ([`Unauthenticated::Missing`]). Credentials this one refuses are refused.
    fn or<B: Authenticate>(self, next: B) -> Or<Self, B>
    where
        Self: Sized,
    {
        Or(self, next)
    }
}

/// Two authenticators, the first asked first: see [`Authenticate::or`].
#[derive(Clone, Debug)]
pub struct Or<A, B>(A, B);

impl<A: Authenticate, B: Authenticate> Authenticate for Or<A, B> {
    async fn authenticate(&self, request: &Parts) -> Result<Identity, Unauthenticated> {
        match self.0.authenticate(request).await {
            Err(Unauthenticated::Missing) => self.1.authenticate(request).await,
            decided => decided,
        }
    }
}

/// An authenticator that may not be configured: `None` reads no credentials (the next in a
/// chain is asked).
impl<A: Authenticate> Authenticate for Option<A> {
    async fn authenticate(&self, request: &Parts) -> Result<Identity, Unauthenticated> {
        match self {
            Some(authenticator) => authenticator.authenticate(request).await,
            None => Err(Unauthenticated::Missing),
        }
    }
}

/// Everyone who brings no credentials is this identity: for a server the operator opened on
/// purpose (`agentix-server --anonymous`). Put it last in a chain: credentials that are brought
/// are still checked by the authenticators before it, and a request that brings credentials
/// none of them reads (a JWT with no JWT authenticator, `Basic`, a key with no keys) is refused,
/// not taken for anonymous.
#[derive(Clone, Debug)]
pub struct Anonymous(Identity);

impl Anonymous {
    /// Every caller without credentials is `identity`.
    pub fn as_identity(identity: Identity) -> Anonymous {
        Anonymous(identity)
    }
}

impl Authenticate for Anonymous {
    async fn authenticate(&self, request: &Parts) -> Result<Identity, Unauthenticated> {
        let headers = &request.headers;
        if headers.contains_key(axum::http::header::AUTHORIZATION)
            || headers.contains_key(KEY_HEADER)
        {
            return Err(Unauthenticated::Invalid(
                "the credentials are of a kind this server does not take".to_owned(),
            ));
        }
        Ok(self.0.clone())
    }
}

/// The header an API key may come in besides `Authorization: Bearer`.
pub(crate) const KEY_HEADER: &str = "x-api-key";

/// The token of an `Authorization: Bearer …` header, if the request has one.
pub(crate) fn bearer(request: &Parts) -> Option<&str> {
    let value = request.headers.get(axum::http::header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim()).filter(|token| !token.is_empty())
}

/// Whether `token` has a JWT's shape: three base64url parts, the first a JSON header.
pub(crate) fn looks_like_jwt(token: &str) -> bool {
    let mut parts = token.split('.');
    let shaped = (parts.next(), parts.next(), parts.next(), parts.next());
    let (Some(header), Some(_), Some(_), None) = shaped else { return false };
    header.starts_with("eyJ")
}
