//! The `Host` and `Origin` checks that keep a browser from being turned against the server: a
//! page that rebinds a name of its own to 127.0.0.1 (DNS rebinding) sends its own name as
//! `Host`, and a page of another site sends its own `Origin`; both are refused `403`.

use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::body::Body;
use axum::http::uri::Authority;
use axum::http::{HeaderValue, Method, Request, header};
use axum::response::{IntoResponse, Response};
use futures::future::{Either, Ready, ready};
use tower::{Layer, Service};
use tower_http::cors::CorsLayer;

use crate::ApiError;

/// The names a request's `Host` may be. By default the loopback names — `localhost`,
/// `127.0.0.1`, `[::1]`, on any port — which is what a server on a loopback address is reached
/// by; a server reached by a public name allows that name.
///
/// ```
/// use agentix_server::Hosts;
///
/// let hosts = Hosts::loopback().allow("agent.example.com");
/// assert!(hosts.allows("agent.example.com"));
/// assert!(hosts.allows("localhost:3000"));
/// assert!(!hosts.allows("rebound.attacker.example:3000"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hosts {
    any: bool,
    /// Lowercased names, each with the one port it is taken on, or any.
    allowed: Vec<(String, Option<u16>)>,
}

impl Default for Hosts {
    fn default() -> Self {
        Hosts::loopback()
    }
}

impl Hosts {
    /// `localhost`, `127.0.0.1` and `[::1]`, on any port.
    pub fn loopback() -> Hosts {
        let names = ["localhost", "127.0.0.1", "[::1]"];
        Hosts { any: false, allowed: names.iter().map(|name| ((*name).to_owned(), None)).collect() }
    }

    /// Any `Host`: for a server behind a proxy that checks it. Browsers can then reach it by
    /// any name that resolves to it.
    pub fn any() -> Hosts {
        Hosts { any: true, allowed: Vec::new() }
    }

    /// These and `host`: a name (`agent.example.com`: any port) or a name and a port
    /// (`agent.example.com:8443`, `[2001:db8::1]:3000`). A `host` that is neither allows
    /// nothing more ([`Hosts::check`] says why).
    pub fn allow(mut self, host: &str) -> Hosts {
        if let Some(allowed) = parse(host) {
            self.allowed.push(allowed);
        }
        self
    }

    /// Whether `host` is a name, or a name and a port, as [`allow`](Hosts::allow) takes.
    pub fn check(host: &str) -> Result<(), String> {
        parse(host).map(drop).ok_or_else(|| format!("`{host}` is not a host name, or NAME:PORT"))
    }

    /// Whether a request whose `Host` is `host` is taken.
    pub fn allows(&self, host: &str) -> bool {
        if self.any {
            return true;
        }
        let Some((name, port)) = parse(host) else { return false };
        // A `Host` without a port asks for its scheme's own, which behind a proxy may be
        // either.
        let on = |only: u16| port.map_or(only == 80 || only == 443, |port| port == only);
        self.allowed.iter().any(|(allowed, only)| *allowed == name && only.is_none_or(on))
    }
}

/// A `Host`'s lowercased name (without a trailing dot) and port.
fn parse(host: &str) -> Option<(String, Option<u16>)> {
    let authority: Authority = host.trim().parse().ok()?;
    if authority.as_str().contains('@') {
        return None;
    }
    let name = authority.host().trim_end_matches('.').to_ascii_lowercase();
    (!name.is_empty()).then_some((name, authority.port_u16()))
}

/// The origins whose pages may call the server from a browser, besides its own (a page
/// served under the `Host` it asks). None by default: a cross-origin request — one whose
/// `Origin` is not the server's — is refused `403`. An origin allowed here is also allowed by
/// CORS (its preflight answered, its responses readable).
///
/// ```
/// use agentix_server::Origins;
///
/// let origins = Origins::none().allow("https://app.example.com");
/// assert!(origins.allows("https://app.example.com", "agent.example.com"));
/// assert!(origins.allows("http://localhost:3000", "localhost:3000"), "its own");
/// assert!(!origins.allows("https://evil.example", "localhost:3000"));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Origins {
    allowed: Vec<String>,
}

impl Origins {
    /// Only the server's own origin.
    pub fn none() -> Origins {
        Origins::default()
    }

    /// These and `origin` (`https://app.example.com`: a scheme, a host and a port if not the
    /// scheme's own; `null` is never the server's own).
    pub fn allow(mut self, origin: &str) -> Origins {
        self.allowed.push(origin.trim().trim_end_matches('/').to_ascii_lowercase());
        self
    }

    /// Whether `origin` is one, as browsers send them: `http://` or `https://`, a host, and a
    /// port if not the scheme's own — no path.
    pub fn check(origin: &str) -> Result<(), String> {
        let origin = origin.trim().trim_end_matches('/');
        let authority = origin.strip_prefix("https://").or_else(|| origin.strip_prefix("http://"));
        match authority {
            Some(authority) if !authority.contains('/') && parse(authority).is_some() => Ok(()),
            _ => Err(format!("`{origin}` is not an origin: http(s)://HOST[:PORT]")),
        }
    }

    /// Whether a request from a page of `origin`, asking for `host`, is taken.
    pub fn allows(&self, origin: &str, host: &str) -> bool {
        let origin = origin.trim().to_ascii_lowercase();
        let own = origin
            .strip_prefix("http://")
            .or_else(|| origin.strip_prefix("https://"))
            .is_some_and(|authority| authority.eq_ignore_ascii_case(host.trim()));
        own || self.allowed.contains(&origin)
    }

    /// The CORS layer for the origins allowed, if any are.
    pub(crate) fn cors(&self) -> Option<CorsLayer> {
        if self.allowed.is_empty() {
            return None;
        }
        let origins: Vec<HeaderValue> =
            self.allowed.iter().filter_map(|origin| origin.parse().ok()).collect();
        Some(
            CorsLayer::new()
                .allow_origin(origins)
                // DELETE and the session's headers: MCP's, served beside.
                .allow_methods([Method::GET, Method::POST, Method::DELETE])
                .allow_headers([
                    header::AUTHORIZATION,
                    header::CONTENT_TYPE,
                    header::ACCEPT,
                    header::HeaderName::from_static("x-api-key"),
                    header::HeaderName::from_static("last-event-id"),
                    header::HeaderName::from_static("mcp-session-id"),
                    header::HeaderName::from_static("mcp-protocol-version"),
                ])
                .expose_headers([
                    header::RETRY_AFTER,
                    header::WWW_AUTHENTICATE,
                    header::HeaderName::from_static("mcp-session-id"),
                ])
                .max_age(std::time::Duration::from_secs(600)),
        )
    }
}

/// Refuses `403` a request whose `Host` is not allowed (`host_not_allowed`) or whose `Origin`
/// is another site's (`origin_not_allowed`), before anything else reads it.
#[derive(Clone, Debug)]
pub struct CheckHosts {
    rules: Arc<(Hosts, Origins)>,
}

impl CheckHosts {
    /// Requests for `hosts`, from pages of the server's own origin or of `origins`.
    pub fn new(hosts: Hosts, origins: Origins) -> CheckHosts {
        CheckHosts { rules: Arc::new((hosts, origins)) }
    }
}

impl<S> Layer<S> for CheckHosts {
    type Service = HostsChecked<S>;

    fn layer(&self, inner: S) -> HostsChecked<S> {
        HostsChecked { rules: Arc::clone(&self.rules), inner }
    }
}

/// A service whose requests' `Host` and `Origin` are checked first: see [`CheckHosts`].
#[derive(Clone, Debug)]
pub struct HostsChecked<S> {
    rules: Arc<(Hosts, Origins)>,
    inner: S,
}

impl<S> Service<Request<Body>> for HostsChecked<S>
where
    S: Service<Request<Body>, Response = Response, Error = Infallible>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Either<Ready<Result<Response, Infallible>>, S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<Body>) -> Self::Future {
        let (hosts, origins) = &*self.rules;
        // HTTP/1.1 names the host in `Host`; a request in absolute form, in its URI.
        let host = request
            .uri()
            .authority()
            .map(Authority::as_str)
            .or_else(|| request.headers().get(header::HOST)?.to_str().ok());
        let refused = match host {
            Some(host) if hosts.allows(host) => {
                match request.headers().get(header::ORIGIN).map(HeaderValue::to_str) {
                    None => None,
                    Some(Ok(origin)) if origins.allows(origin, host) => None,
                    Some(_) => Some(ApiError::OriginNotAllowed),
                }
            }
            _ => Some(ApiError::HostNotAllowed),
        };
        match refused {
            Some(error) => Either::Left(ready(Ok(error.into_response()))),
            None => Either::Right(self.inner.call(request)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_match_by_name_and_port_whatever_the_case() {
        let hosts = Hosts::loopback().allow("Agent.Example.com").allow("10.0.0.5:8443");
        for taken in ["localhost", "LOCALHOST:3000", "127.0.0.1:1", "[::1]:3000", "localhost."] {
            assert!(hosts.allows(taken), "{taken}");
        }
        assert!(hosts.allows("agent.example.com:443") && hosts.allows("10.0.0.5:8443"));
        let public = Hosts::loopback().allow("agent.example.com:443");
        assert!(public.allows("agent.example.com"), "a Host without a port: its scheme's own");
        assert!(!public.allows("agent.example.com:8443"));
        assert!(Hosts::check("agent.example.com:8443").is_ok() && Hosts::check("a b").is_err());
        assert!(Origins::check("https://app.example.com:8443").is_ok());
        for bad in ["app.example.com", "https://app.example.com/path", "ftp://x", "https://"] {
            assert!(Origins::check(bad).is_err(), "{bad}");
        }
        for refused in [
            "",
            "evil.example",
            "localhost.evil.example",
            "127.0.0.2",
            "10.0.0.5:8444",
            "10.0.0.5",
            "user@localhost",
            "[::2]:3000",
        ] {
            assert!(!hosts.allows(refused), "{refused}");
        }
        assert!(Hosts::any().allows("anything:1"));
    }

    #[test]
    fn an_origin_is_the_servers_own_or_one_allowed() {
        let origins = Origins::none().allow("https://App.example.com/");
        assert!(origins.allows("http://localhost:3000", "localhost:3000"));
        assert!(origins.allows("https://agent.example.com", "agent.example.com"));
        assert!(origins.allows("https://app.example.com", "localhost:3000"));
        assert!(!origins.allows("http://localhost:3001", "localhost:3000"));
        assert!(!origins.allows("null", "localhost:3000"));
        assert!(!origins.allows("https://evil.example", "localhost:3000"));
        assert!(Origins::none().cors().is_none() && origins.cors().is_some());
    }
}
