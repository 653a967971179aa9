//! API tokens and what they allow.
//!
//! A token is `nudge_` followed by 32 random bytes in hex. Only its SHA-256 is stored, so a
//! leaked database does not leak usable tokens. A token is scoped to the whole account
//! (`full`) or to one enrollment (`enrollment:<id>`, e.g. for a page that shows one journey).

use crate::store::{self, tokens::ApiToken, Db, StoreError};
use sha2::{Digest, Sha256};
use std::fmt;
use std::time::{Duration, Instant};

/// What every token starts with, so a leaked one is easy to recognise (and to scan for).
pub const TOKEN_PREFIX: &str = "nudge_";

/// What a token may do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// Everything in the account.
    Full,
    /// Only calls about this one enrollment.
    Enrollment(String),
    /// The installation's accounts (create and list them) and nothing in any account: a CRM's
    /// provisioning side holds it, not the code that runs sequences.
    Admin,
}

impl Scope {
    /// Parses `full`, `enrollment:<id>` or `admin`.
    pub fn parse(text: &str) -> Result<Scope, String> {
        if text == "full" {
            return Ok(Scope::Full);
        }
        if text == "admin" {
            return Ok(Scope::Admin);
        }
        match text.strip_prefix("enrollment:") {
            Some(id) if !id.is_empty() && !id.chars().any(char::is_whitespace) => {
                Ok(Scope::Enrollment(id.to_string()))
            }
            _ => Err(format!(
                "`{text}` is not a token scope: use `full`, `enrollment:<enrollment id>` or `admin`"
            )),
        }
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scope::Full => f.write_str("full"),
            Scope::Enrollment(id) => write!(f, "enrollment:{id}"),
            Scope::Admin => f.write_str("admin"),
        }
    }
}

/// Who is calling: the account the token belongs to and what it may do. Put in the request's
/// extensions by the auth layer; handlers read it from there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    pub account_id: String,
    pub token_id: String,
    pub scope: Scope,
}

/// Why a request was not let in.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    #[error("missing credentials: send the metadata `authorization: Bearer <token>` (create a token with `nudge token create`)")]
    Missing,
    #[error("malformed credentials: the `authorization` metadata must be `Bearer <token>`")]
    Malformed,
    #[error("unknown or revoked token")]
    Unknown,
    #[error("this token is scoped to `{scope}`; this call needs a full account token")]
    Forbidden { scope: Scope },
    #[error("creating and listing accounts needs an installation admin token (`nudge token create --admin`); this token belongs to one account")]
    NeedsAdmin,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Hex SHA-256 of a token, the form it is stored and looked up in.
pub fn hash_token(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// A fresh random token.
pub fn generate_token() -> String {
    use rand::RngCore;
    let mut bytes = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    format!("{TOKEN_PREFIX}{}", hex::encode(bytes))
}

/// Creates and stores a token for the account; returns the token itself (shown once).
pub async fn create_token(
    db: &Db,
    account_id: &str,
    scope: &Scope,
    now_ms: i64,
) -> Result<String, StoreError> {
    let token = generate_token();
    store::tokens::insert(
        db,
        &ApiToken {
            id: store::new_id("tok"),
            account_id: account_id.to_string(),
            hash: hash_token(&token),
            scope: scope.to_string(),
            created_at: now_ms,
        },
    )
    .await?;
    Ok(token)
}

/// The token of an `authorization` value `Bearer <token>`, the scheme in any case (RFC 9110
/// §11.1: auth schemes are case-insensitive).
fn bearer_token(header: &str) -> Option<&str> {
    let (scheme, token) = header.trim().split_once([' ', '\t'])?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// How long a token that was found is trusted without reading it again: one read a second
/// per token instead of one per call (a database round trip and a pooled connection each), and
/// a token deleted from the database stops working within a second, as the webhook keys do.
pub const TOKEN_TTL: Duration = Duration::from_secs(1);
/// The most tokens remembered; past it the cache starts over.
const MAX_CACHED_TOKENS: usize = 10_000;

/// Tokens found recently, by their SHA-256. Only found tokens are kept: an unknown one is read
/// again each time, so a token created a moment ago works at once.
pub type TokenCache = crate::cache::TtlCache<Principal>;

/// An empty [`TokenCache`]: entries trusted for [`TOKEN_TTL`], at most [`MAX_CACHED_TOKENS`].
pub fn token_cache() -> TokenCache {
    TokenCache::new(TOKEN_TTL, MAX_CACHED_TOKENS)
}

/// Checks an `authorization` header value (`Bearer <token>`) and returns the caller: from
/// `cache` when the token was found less than [`TOKEN_TTL`] ago, else from the database.
pub async fn authenticate(
    db: &Db,
    cache: &TokenCache,
    header: Option<&str>,
) -> Result<Principal, AuthError> {
    let header = header.ok_or(AuthError::Missing)?;
    let token = bearer_token(header).ok_or(AuthError::Malformed)?;
    if !token.starts_with(TOKEN_PREFIX) {
        return Err(AuthError::Unknown);
    }
    let hash = hash_token(token);
    if let Some(who) = cache.get(&hash, Instant::now()) {
        return Ok(who);
    }
    let stored = store::tokens::find_by_hash(db, &hash)
        .await?
        .ok_or(AuthError::Unknown)?;
    let scope = Scope::parse(&stored.scope)
        .map_err(|e| StoreError::Corrupt(format!("token {}: {e}", stored.id)))?;
    let who = Principal {
        account_id: stored.account_id,
        token_id: stored.id,
        scope,
    };
    cache.put(&hash, &who, Instant::now());
    Ok(who)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_round_trip_and_refuse_nonsense() {
        assert_eq!(Scope::parse("full").unwrap(), Scope::Full);
        let s = Scope::parse("enrollment:en_1").unwrap();
        assert_eq!(s, Scope::Enrollment("en_1".into()));
        assert_eq!(s.to_string(), "enrollment:en_1");
        assert!(Scope::parse("enrollment:").is_err());
        assert_eq!(Scope::parse("admin").unwrap(), Scope::Admin);
        assert_eq!(Scope::Admin.to_string(), "admin");
        assert!(Scope::parse("root").is_err());
    }

    #[test]
    fn a_found_token_is_trusted_for_the_ttl_only() {
        let cache = token_cache();
        let who = Principal {
            account_id: "acc".into(),
            token_id: "tk_1".into(),
            scope: Scope::Full,
        };
        let t0 = Instant::now();
        assert_eq!(cache.get("h1", t0), None, "nothing before it was found");
        cache.put("h1", &who, t0);
        assert_eq!(cache.get("h1", t0 + TOKEN_TTL / 2), Some(who.clone()));
        assert_eq!(
            cache.get("h1", t0 + TOKEN_TTL),
            None,
            "read again after the TTL"
        );
        assert_eq!(cache.get("h2", t0), None, "another token is not this one");
        // Full of live entries, it starts over rather than grow.
        for i in 0..MAX_CACHED_TOKENS {
            cache.put(&format!("k{i}"), &who, t0);
        }
        cache.put("last", &who, t0);
        assert!(cache.len() <= MAX_CACHED_TOKENS);
        assert_eq!(cache.get("last", t0), Some(who));
    }

    #[test]
    fn the_bearer_scheme_is_case_insensitive() {
        for header in [
            "Bearer t",
            "bearer t",
            "BEARER t",
            "bEaReR  t ",
            "Bearer\tt",
        ] {
            assert_eq!(bearer_token(header), Some("t"), "{header:?}");
        }
        for header in ["Basic t", "Bearer", "Bearer ", "Bearert", "t"] {
            assert_eq!(bearer_token(header), None, "{header:?}");
        }
    }

    #[test]
    fn tokens_are_prefixed_random_and_hashed() {
        let a = generate_token();
        let b = generate_token();
        assert!(a.starts_with(TOKEN_PREFIX));
        assert_eq!(a.len(), TOKEN_PREFIX.len() + 64);
        assert_ne!(a, b);
        assert_eq!(hash_token(&a).len(), 64);
        assert_ne!(hash_token(&a), hash_token(&b));
        // The known SHA-256 of "abc".
        assert_eq!(
            hash_token("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
