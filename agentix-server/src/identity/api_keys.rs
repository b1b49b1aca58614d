//! Static API keys, kept as their SHA-256: a key file (or variable) that leaks gives nobody a
//! key. A key is long and random, so one round of SHA-256 is enough to keep it (a password
//! would need a slow hash; a key does not).

use std::collections::HashMap;
use std::fmt;
use std::path::Path;

use axum::http::request::Parts;
use sha2::{Digest, Sha256};

use super::{Authenticate, Identity, KEY_HEADER, Unauthenticated, bearer, looks_like_jwt};

/// API keys, each with the identity it proves. A request brings its key as
/// `Authorization: Bearer KEY` or `X-API-Key: KEY`.
///
/// The keys are read as lines of `sha256:HEX SUBJECT [ROLE,ROLE…]` (`#` starts a comment), from
/// a file ([`from_file`](ApiKeys::from_file)) or a variable ([`parse`](ApiKeys::parse)); only
/// the hashes are kept. `agentix-server new-key SUBJECT [ROLES]` makes a key and its line.
///
/// ```
/// use agentix_server::identity::{ApiKeys, Identity};
///
/// let line = format!("{} alice approver", ApiKeys::hash("agx_secret"));
/// let keys = ApiKeys::parse(&line)?;
/// assert_eq!(keys.len(), 1);
/// # Ok::<_, agentix_server::identity::KeyFileError>(())
/// ```
#[derive(Clone, Default)]
pub struct ApiKeys {
    by_hash: HashMap<[u8; 32], Identity>,
}

impl ApiKeys {
    /// No keys.
    pub fn new() -> ApiKeys {
        ApiKeys::default()
    }

    /// `key`'s hash, as a key file keeps it: `sha256:` and 64 hex digits.
    pub fn hash(key: &str) -> String {
        let digest = Sha256::digest(key.as_bytes());
        let mut text = String::with_capacity(7 + 64);
        text.push_str("sha256:");
        for byte in digest {
            text.push_str(&format!("{byte:02x}"));
        }
        text
    }

    /// These keys and `key`, which proves `identity` (hashed at once: the key is not kept).
    pub fn with_key(mut self, key: &str, identity: Identity) -> ApiKeys {
        self.by_hash.insert(Sha256::digest(key.as_bytes()).into(), identity);
        self
    }

    /// These keys and the key whose hash is `hash` (`sha256:HEX`), which proves `identity`.
    pub fn with_hash(mut self, hash: &str, identity: Identity) -> Result<ApiKeys, KeyFileError> {
        let digest = parse_hash(hash).ok_or(KeyFileError::Line { line: 0, why: BAD_HASH })?;
        self.by_hash.insert(digest, identity);
        Ok(self)
    }

    /// The keys of `text`: lines of `sha256:HEX SUBJECT [ROLE,ROLE…]`; blank lines and `#`
    /// comments are skipped. An error names the line, never its hash.
    pub fn parse(text: &str) -> Result<ApiKeys, KeyFileError> {
        let mut keys = ApiKeys::new();
        for (index, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or_default().trim();
            if line.is_empty() {
                continue;
            }
            let wrong = |why| KeyFileError::Line { line: index + 1, why };
            let mut fields = line.split_whitespace();
            let (Some(hash), Some(subject)) = (fields.next(), fields.next()) else {
                return Err(wrong("expected `sha256:HEX SUBJECT [ROLE,ROLE…]`"));
            };
            let digest = parse_hash(hash).ok_or_else(|| wrong(BAD_HASH))?;
            let roles = fields.next().map(|roles| roles.split(',').filter(|role| !role.is_empty()));
            if fields.next().is_some() {
                return Err(wrong("roles are one field, separated by commas"));
            }
            let identity = Identity::new(subject).with_roles(roles.into_iter().flatten());
            if keys.by_hash.insert(digest, identity).is_some() {
                return Err(wrong("the same key is listed twice"));
            }
        }
        Ok(keys)
    }

    /// The keys of the file at `path` ([`parse`](ApiKeys::parse)'s lines).
    pub fn from_file(path: impl AsRef<Path>) -> Result<ApiKeys, KeyFileError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|error| KeyFileError::Read {
            path: path.display().to_string(),
            message: error.to_string(),
        })?;
        ApiKeys::parse(&text).map_err(|error| match error {
            KeyFileError::Line { line, why } => {
                KeyFileError::InFile { path: path.display().to_string(), line, why }
            }
            other => other,
        })
    }

    /// These keys and `more`'s (a key in both proves `more`'s identity).
    pub fn merged(mut self, more: ApiKeys) -> ApiKeys {
        self.by_hash.extend(more.by_hash);
        self
    }

    /// How many keys there are.
    pub fn len(&self) -> usize {
        self.by_hash.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.by_hash.is_empty()
    }

    /// The identity `key` proves, if any.
    pub fn identity(&self, key: &str) -> Option<&Identity> {
        let digest: [u8; 32] = Sha256::digest(key.as_bytes()).into();
        self.by_hash.get(&digest)
    }
}

impl fmt::Debug for ApiKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The subjects, not the hashes.
        let mut subjects: Vec<&str> =
            self.by_hash.values().map(|identity| identity.subject.as_str()).collect();
        subjects.sort_unstable();
        f.debug_struct("ApiKeys").field("subjects", &subjects).finish()
    }
}

impl Authenticate for ApiKeys {
    async fn authenticate(&self, request: &Parts) -> Result<Identity, Unauthenticated> {
        if let Some(key) = request.headers.get(KEY_HEADER) {
            let key = key.to_str().map_err(|_| unknown())?;
            return self.identity(key.trim()).cloned().ok_or_else(unknown);
        }
        match bearer(request) {
            Some(token) => match self.identity(token) {
                Some(identity) => Ok(identity.clone()),
                // A JWT is the token authenticator's to judge.
                None if looks_like_jwt(token) => Err(Unauthenticated::Missing),
                None => Err(unknown()),
            },
            None => Err(Unauthenticated::Missing),
        }
    }
}

fn unknown() -> Unauthenticated {
    Unauthenticated::Invalid("the API key is not one this server knows".to_owned())
}

const BAD_HASH: &str = "a key's hash is `sha256:` and 64 hex digits";

fn parse_hash(text: &str) -> Option<[u8; 32]> {
    let hex = text.strip_prefix("sha256:")?;
    if hex.len() != 64 || !hex.is_ascii() {
        return None;
    }
    let mut digest = [0; 32];
    for (byte, pair) in digest.iter_mut().zip(hex.as_bytes().chunks(2)) {
        *byte = u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok()?;
    }
    Some(digest)
}

/// Why keys could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KeyFileError {
    /// A line is not `sha256:HEX SUBJECT [ROLES]`.
    #[error("API keys, line {line}: {why}")]
    Line {
        /// The line, from 1.
        line: usize,
        /// What is wrong with it.
        why: &'static str,
    },
    /// A line of a file is not `sha256:HEX SUBJECT [ROLES]`.
    #[error("{path}, line {line}: {why}")]
    InFile {
        /// The file.
        path: String,
        /// The line, from 1.
        line: usize,
        /// What is wrong with it.
        why: &'static str,
    },
    /// The file could not be read.
    #[error("cannot read the API keys in {path}: {message}")]
    Read {
        /// The file.
        path: String,
        /// What the system said.
        message: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(header: &str, value: &str) -> Parts {
        let request = axum::http::Request::builder().header(header, value).body(()).unwrap();
        request.into_parts().0
    }

    async fn who(keys: &ApiKeys, header: &str, value: &str) -> Result<Identity, Unauthenticated> {
        keys.authenticate(&request(header, value)).await
    }

    #[tokio::test]
    async fn a_key_proves_its_identity_in_either_header_and_only_its_hash_is_kept() {
        let text = format!(
            "# the team\n{} alice approver,operator\n\n{} bob # no roles\n",
            ApiKeys::hash("agx_alice"),
            ApiKeys::hash("agx_bob")
        );
        let keys = ApiKeys::parse(&text).unwrap();
        let alice = Identity::new("alice").with_roles(["approver", "operator"]);
        assert_eq!(who(&keys, "authorization", "Bearer agx_alice").await, Ok(alice.clone()));
        assert_eq!(who(&keys, "authorization", "bearer  agx_alice ").await, Ok(alice));
        assert_eq!(who(&keys, "x-api-key", "agx_bob").await, Ok(Identity::new("bob")));
        assert!(matches!(
            who(&keys, "authorization", "Bearer agx_mallory").await,
            Err(Unauthenticated::Invalid(_))
        ));
        assert!(matches!(who(&keys, "x-api-key", "agx_").await, Err(Unauthenticated::Invalid(_))));
        // No key at all, another scheme, or a JWT: not the keys' to judge.
        assert_eq!(who(&keys, "accept", "*/*").await, Err(Unauthenticated::Missing));
        assert_eq!(who(&keys, "authorization", "Basic YTpi").await, Err(Unauthenticated::Missing));
        assert_eq!(
            who(&keys, "authorization", "Bearer eyJhbGciOiJIUzI1NiJ9.e30.c2ln").await,
            Err(Unauthenticated::Missing)
        );
        let debug = format!("{keys:?}");
        assert!(!debug.contains("sha256") && debug.contains("alice"), "{debug}");
    }

    #[test]
    fn a_bad_line_is_named_and_its_hash_is_not_repeated() {
        let bad = "sha256:abc alice";
        let error = ApiKeys::parse(&format!("# ok\n{bad}")).unwrap_err();
        assert_eq!(
            error.to_string(),
            "API keys, line 2: a key's hash is `sha256:` and 64 hex digits"
        );
        assert!(ApiKeys::parse("sha256:00 ").is_err());
        let hash = ApiKeys::hash("k");
        let error = ApiKeys::parse(&format!("{hash} a\n{hash} b")).unwrap_err();
        assert!(error.to_string().contains("line 2: the same key is listed twice"));
        assert!(!error.to_string().contains(&hash[7..]));
        let error = ApiKeys::parse(&format!("{hash} a x y")).unwrap_err();
        assert!(error.to_string().contains("roles are one field"));
        assert_eq!(
            ApiKeys::hash("abc"),
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
