//! JWT bearer tokens: HS256 with a shared secret, RS256 or ES256 with a public key or a JWKS
//! file. Every token must be signed by a configured key under that key's one algorithm (no
//! `none`, no HMAC with a public key), carry `sub` and `exp`, be past its `nbf`, and name the
//! configured audience and issuer.

use std::fmt;
use std::path::Path;

use axum::http::request::Parts;
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, JwkSet, KeyAlgorithm, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde::Deserialize;

use super::{Authenticate, Identity, Unauthenticated, bearer, looks_like_jwt};

/// Verifies JWT bearer tokens (`Authorization: Bearer TOKEN`): the token's `sub` is the
/// subject, and its `roles` claim (an array of strings, or a space-separated string; the claim
/// named by [`roles_claim`](Jwt::roles_claim)) the roles.
///
/// ```
/// use agentix_server::identity::Jwt;
///
/// let jwt = Jwt::hs256(b"a long random secret, from the environment")
///     .audience("agentix")
///     .issuer("https://auth.example.com");
/// ```
#[derive(Clone)]
pub struct Jwt {
    keys: Vec<Key>,
    audience: Option<String>,
    issuer: Option<String>,
    roles_claim: String,
    leeway: u64,
}

/// One key a token may be signed with.
#[derive(Clone)]
struct Key {
    id: Option<String>,
    algorithm: Algorithm,
    key: DecodingKey,
}

impl Jwt {
    fn with(keys: Vec<Key>) -> Jwt {
        Jwt { keys, audience: None, issuer: None, roles_claim: "roles".to_owned(), leeway: 30 }
    }

    /// Tokens signed with HS256 and `secret` (keep it as long as a key: 32 random bytes).
    pub fn hs256(secret: &[u8]) -> Jwt {
        let key = DecodingKey::from_secret(secret);
        Jwt::with(vec![Key { id: None, algorithm: Algorithm::HS256, key }])
    }

    /// Tokens signed with RS256 by the private half of `pem`, an RSA public key.
    pub fn rs256_pem(pem: &[u8]) -> Result<Jwt, JwtError> {
        let key =
            DecodingKey::from_rsa_pem(pem).map_err(|error| JwtError::Key(error.to_string()))?;
        Ok(Jwt::with(vec![Key { id: None, algorithm: Algorithm::RS256, key }]))
    }

    /// Tokens signed with ES256 by the private half of `pem`, a P-256 public key.
    pub fn es256_pem(pem: &[u8]) -> Result<Jwt, JwtError> {
        let key =
            DecodingKey::from_ec_pem(pem).map_err(|error| JwtError::Key(error.to_string()))?;
        Ok(Jwt::with(vec![Key { id: None, algorithm: Algorithm::ES256, key }]))
    }

    /// Tokens signed by a key of `pem` (an RSA or a P-256 public key, told apart by its
    /// header), with RS256 or ES256.
    pub fn from_pem(pem: &[u8]) -> Result<Jwt, JwtError> {
        Jwt::rs256_pem(pem)
            .or_else(|_| Jwt::es256_pem(pem))
            .map_err(|_| JwtError::Key("not an RSA or a P-256 public key in PEM".to_owned()))
    }

    /// Tokens signed by one of the keys of a JWKS document (RSA keys with RS256, P-256 keys
    /// with ES256, each as its `alg` says if it says; keys for encryption, or of other kinds,
    /// are passed over): the token's `kid` picks the key (a token without one is checked
    /// against a set of one key only).
    pub fn jwks(json: &str) -> Result<Jwt, JwtError> {
        let set: JwkSet =
            serde_json::from_str(json).map_err(|error| JwtError::Jwks(error.to_string()))?;
        let mut keys = Vec::with_capacity(set.keys.len());
        for jwk in &set.keys {
            // A set published by an issuer may hold keys for encryption, or of other kinds:
            // those sign no token this server takes.
            if jwk
                .common
                .public_key_use
                .as_ref()
                .is_some_and(|used| *used != PublicKeyUse::Signature)
            {
                continue;
            }
            let algorithm = match (&jwk.algorithm, jwk.common.key_algorithm) {
                (AlgorithmParameters::RSA(_), None | Some(KeyAlgorithm::RS256)) => Algorithm::RS256,
                (AlgorithmParameters::EllipticCurve(ec), None | Some(KeyAlgorithm::ES256))
                    if ec.curve == EllipticCurve::P256 =>
                {
                    Algorithm::ES256
                }
                _ => continue,
            };
            let id = jwk.common.key_id.clone();
            let key = DecodingKey::from_jwk(jwk).map_err(|error| {
                let id = id.as_deref().unwrap_or("without a kid");
                JwtError::Jwks(format!("key `{id}`: {error}"))
            })?;
            keys.push(Key { id, algorithm, key });
        }
        if keys.is_empty() {
            return Err(JwtError::Jwks(
                "the set has no signing key of a kind taken (RSA for RS256, P-256 for ES256)"
                    .to_owned(),
            ));
        }
        Ok(Jwt::with(keys))
    }

    /// [`jwks`](Jwt::jwks), from the file at `path`.
    pub fn jwks_file(path: impl AsRef<Path>) -> Result<Jwt, JwtError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path)
            .map_err(|error| JwtError::Jwks(format!("{}: {error}", path.display())))?;
        Jwt::jwks(&text).map_err(|error| match error {
            JwtError::Jwks(why) => JwtError::Jwks(format!("{}: {why}", path.display())),
            other => other,
        })
    }

    /// Tokens must name `audience` in `aud` (a token without `aud` is refused). Without it, a
    /// token that names any audience is refused: it was issued for another service.
    pub fn audience(mut self, audience: impl Into<String>) -> Jwt {
        self.audience = Some(audience.into());
        self
    }

    /// Tokens must name `issuer` in `iss` (a token without `iss` is refused).
    pub fn issuer(mut self, issuer: impl Into<String>) -> Jwt {
        self.issuer = Some(issuer.into());
        self
    }

    /// The claim the roles are read from (`roles` unless told).
    pub fn roles_claim(mut self, claim: impl Into<String>) -> Jwt {
        self.roles_claim = claim.into();
        self
    }

    /// How many seconds of clock skew `exp` and `nbf` forgive (30 unless told).
    pub fn leeway(mut self, seconds: u64) -> Jwt {
        self.leeway = seconds;
        self
    }

    /// The identity `token` proves, or why it proves none. The reason names what failed (the
    /// signature, the expiry, the audience), never the token.
    pub fn verify(&self, token: &str) -> Result<Identity, String> {
        let header = jsonwebtoken::decode_header(token).map_err(|error| describe(&error))?;
        // A token's `kid` picks a key of a set; a key given alone (a secret, a PEM) has no id
        // and signs whatever `kid` the issuer names; a set of one signs tokens without one.
        let named = header
            .kid
            .as_deref()
            .and_then(|kid| self.keys.iter().find(|key| key.id.as_deref() == Some(kid)));
        let key = named.or(match self.keys.as_slice() {
            [only] if only.id.is_none() || header.kid.is_none() => Some(only),
            _ => None,
        });
        let key = key.ok_or("no key of this server signs tokens of that `kid`")?;
        let mut validation = Validation::new(key.algorithm);
        validation.leeway = self.leeway;
        validation.validate_nbf = true;
        let mut required = vec!["exp", "sub"];
        // With no audience expected, jsonwebtoken refuses a token that names one: it was
        // issued for another service.
        if let Some(audience) = &self.audience {
            validation.set_audience(&[audience]);
            required.push("aud");
        }
        if let Some(issuer) = &self.issuer {
            validation.set_issuer(&[issuer]);
            required.push("iss");
        }
        validation.set_required_spec_claims(&required);
        let data = jsonwebtoken::decode::<serde_json::Map<String, serde_json::Value>>(
            token,
            &key.key,
            &validation,
        )
        .map_err(|error| describe(&error))?;
        let claims = data.claims;
        let subject = match claims.get("sub") {
            Some(serde_json::Value::String(subject)) if !subject.is_empty() => subject.clone(),
            _ => return Err("the token's `sub` is not a name".to_owned()),
        };
        let roles = match claims.get(&self.roles_claim) {
            None => Vec::new(),
            Some(roles) => Roles::deserialize(roles)
                .map_err(|_| format!("the token's `{}` is not a list of roles", self.roles_claim))?
                .into_vec(),
        };
        Ok(Identity::new(subject).with_roles(roles))
    }
}

/// A roles claim: an array of names, or names separated by spaces (OAuth's `scope`).
#[derive(Deserialize)]
#[serde(untagged)]
enum Roles {
    List(Vec<String>),
    Spaced(String),
}

impl Roles {
    fn into_vec(self) -> Vec<String> {
        match self {
            Roles::List(roles) => roles,
            Roles::Spaced(roles) => roles.split_whitespace().map(str::to_owned).collect(),
        }
    }
}

/// What failed, in words a client may read: never the token, nor the key.
fn describe(error: &jsonwebtoken::errors::Error) -> String {
    match error.kind() {
        ErrorKind::ExpiredSignature => "the token has expired",
        ErrorKind::ImmatureSignature => "the token is not valid yet (`nbf`)",
        ErrorKind::InvalidSignature => "the token's signature does not verify",
        ErrorKind::InvalidAudience => "the token is for another audience",
        ErrorKind::InvalidIssuer => "the token is from another issuer",
        ErrorKind::MissingRequiredClaim(claim) => {
            return format!("the token has no `{claim}` claim");
        }
        ErrorKind::InvalidAlgorithm | ErrorKind::InvalidAlgorithmName => {
            "the token's algorithm is not the one its key signs with"
        }
        _ => "the token is not a well-formed JWT",
    }
    .to_owned()
}

impl fmt::Debug for Jwt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let keys: Vec<(Option<&str>, Algorithm)> =
            self.keys.iter().map(|key| (key.id.as_deref(), key.algorithm)).collect();
        f.debug_struct("Jwt")
            .field("keys", &keys)
            .field("audience", &self.audience)
            .field("issuer", &self.issuer)
            .field("roles_claim", &self.roles_claim)
            .finish_non_exhaustive()
    }
}

impl Authenticate for Jwt {
    async fn authenticate(&self, request: &Parts) -> Result<Identity, Unauthenticated> {
        match bearer(request) {
            Some(token) if looks_like_jwt(token) => {
                self.verify(token).map_err(Unauthenticated::Invalid)
            }
            // Another kind of bearer token (an API key) or none: not a JWT's to judge.
            _ => Err(Unauthenticated::Missing),
        }
    }
}

/// Why a JWT authenticator could not be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum JwtError {
    /// The key is not a public key of the kind named.
    #[error("the JWT key: {0}")]
    Key(String),
    /// The JWKS document is not one, or holds a key of no kind taken.
    #[error("the JWKS: {0}")]
    Jwks(String),
}

#[cfg(test)]
mod tests {
    use super::*;
    use jsonwebtoken::{EncodingKey, Header};
    use serde_json::json;

    fn signed(claims: serde_json::Value) -> String {
        let key = EncodingKey::from_secret(b"secret");
        jsonwebtoken::encode(&Header::default(), &claims, &key).unwrap()
    }

    fn later() -> u64 {
        jsonwebtoken::get_current_timestamp() + 600
    }

    #[test]
    fn without_an_audience_expected_a_token_for_one_is_refused_and_roles_read_either_way() {
        let jwt = Jwt::hs256(b"secret");
        let plain = signed(json!({ "sub": "alice", "exp": later(), "roles": ["approver"] }));
        assert_eq!(jwt.verify(&plain), Ok(Identity::new("alice").with_role("approver")));
        let elsewhere = signed(json!({ "sub": "alice", "exp": later(), "aud": "billing" }));
        assert_eq!(jwt.verify(&elsewhere), Err("the token is for another audience".to_owned()));
        let scoped = signed(json!({ "sub": "bob", "exp": later(), "scope": "read approver" }));
        let by_scope = Jwt::hs256(b"secret").roles_claim("scope").verify(&scoped).unwrap();
        assert_eq!(by_scope, Identity::new("bob").with_roles(["read", "approver"]));
        let bad_roles = signed(json!({ "sub": "bob", "exp": later(), "roles": 7 }));
        assert!(jwt.verify(&bad_roles).unwrap_err().contains("not a list of roles"));
        let empty = signed(json!({ "sub": "", "exp": later() }));
        assert!(jwt.verify(&empty).is_err());
    }

    #[test]
    fn a_jwks_passes_over_keys_it_cannot_use_and_refuses_a_set_with_none() {
        let set = json!({ "keys": [
            { "kty": "oct", "kid": "h", "k": "c2VjcmV0" },
            { "kty": "RSA", "kid": "enc", "use": "enc", "n": "AQAB", "e": "AQAB" },
        ] });
        let error = Jwt::jwks(&set.to_string()).unwrap_err().to_string();
        assert!(error.contains("no signing key"), "{error}");
        let keys = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/keys/jwks.json");
        let mut mixed: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(keys).unwrap()).unwrap();
        mixed["keys"].as_array_mut().unwrap().extend(set["keys"].as_array().unwrap().clone());
        let jwt = Jwt::jwks(&mixed.to_string()).unwrap();
        assert_eq!(format!("{jwt:?}").matches("Some(").count(), 2, "{jwt:?}");
    }
}
