//! Signed, expiring link tokens (docs/flows.md, "approval"; docs/signals.md, "Inbox signals"): the `{token}` in `/approvals/{token}` and
//! `/unsubscribe/{token}`. Pure: the secret and `now` are parameters.
//!
//! A token is `<payload>.<mac>`, both base64url without padding: the payload is a small JSON
//! object of [`LinkClaims`] (purpose, account, subject, run, expiry) and the MAC is
//! HMAC-SHA256 of the payload's bytes with the account's link key. Everything a page acts on
//! is inside the signed payload, so a token cannot be altered, and the purpose is signed too, so
//! an unsubscribe token can never decide an approval. Each account has its own key, derived
//! from the installation's link secret ([`account_key`]), so no account's key signs another's
//! links; rotating the secret (`nudge link-secret rotate`) invalidates every open link at once.
//!
//! A token is a bearer credential: no journey entry, log line or page may contain it.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

/// A token longer than this is refused before any decoding (the claims are well under 1 KiB;
/// ids are at most 128 characters, docs/service.md, "Errors").
pub const MAX_TOKEN_LEN: usize = 1024;

/// What a link is for. Signed into the token.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LinkPurpose {
    /// Decides a waiting `approval` step (docs/flows.md, "approval").
    Approval,
    /// One-click unsubscribe from email (RFC 8058, docs/signals.md, "Inbox signals").
    Unsubscribe,
}

/// What a token says, all of it covered by the MAC.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkClaims {
    /// What the link may do.
    #[serde(rename = "p")]
    pub purpose: LinkPurpose,
    /// The account the subject belongs to.
    #[serde(rename = "a")]
    pub account: String,
    /// What the link acts on: the enrollment id for an approval, the contact id for an
    /// unsubscribe.
    #[serde(rename = "s")]
    pub subject: String,
    /// The run of the step the link belongs to (an approval's run), so a link of a closed run
    /// is told apart from the open one of a later run.
    #[serde(rename = "r", default, skip_serializing_if = "Option::is_none")]
    pub run: Option<i64>,
    /// When the link stops working, epoch milliseconds; `None` never (an unsubscribe link in an
    /// old email must keep working).
    #[serde(rename = "x", default, skip_serializing_if = "Option::is_none")]
    pub expires_at_ms: Option<i64>,
}

/// Why a token was refused. The pages answer 404 for [`LinkError::Forged`] (nothing to say to
/// someone who made up a link) and 410 for [`LinkError::Expired`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LinkError {
    /// Not a token of ours: malformed, altered, signed with another secret (or before a
    /// rotation), or made for another purpose.
    #[error("this link is not valid: it may have been altered or copied incompletely")]
    Forged,
    /// A real link whose time is up.
    #[error("this link expired")]
    Expired {
        /// When it expired, epoch milliseconds.
        at_ms: i64,
    },
}

/// The link key of `account`: HMAC-SHA256 of its id under the installation's secret (a
/// pseudo-random function of both, so one account's key says nothing of another's).
pub fn account_key(secret: &[u8], account: &str) -> [u8; 32] {
    let mut m = mac(secret, b"nudge link key\0");
    m.update(account.as_bytes());
    m.finalize().into_bytes().into()
}

/// Signs `claims` with its account's key under `secret`: the token to put in a URL path (only
/// `[A-Za-z0-9_.-]`).
pub fn sign(secret: &[u8], claims: &LinkClaims) -> String {
    let payload = serde_json::to_vec(claims).expect("link claims serialize");
    let payload = URL_SAFE_NO_PAD.encode(payload);
    let key = account_key(secret, &claims.account);
    let mac = URL_SAFE_NO_PAD.encode(mac(&key, payload.as_bytes()).finalize().into_bytes());
    format!("{payload}.{mac}")
}

/// Checks `token` was signed with `secret` for `purpose` and has not expired at `now_ms`.
pub fn verify(
    secret: &[u8],
    token: &str,
    purpose: LinkPurpose,
    now_ms: i64,
) -> Result<LinkClaims, LinkError> {
    if token.len() > MAX_TOKEN_LEN {
        return Err(LinkError::Forged);
    }
    let (payload, tag) = token.split_once('.').ok_or(LinkError::Forged)?;
    let tag = URL_SAFE_NO_PAD.decode(tag).map_err(|_| LinkError::Forged)?;
    let bytes = URL_SAFE_NO_PAD
        .decode(payload)
        .map_err(|_| LinkError::Forged)?;
    // The account it claims chooses the key; nothing else of the payload is trusted until the
    // MAC (constant time) has matched under that key. A link signed before accounts had keys
    // of their own carries the installation secret's MAC, and still opens.
    let claims: LinkClaims = serde_json::from_slice(&bytes).map_err(|_| LinkError::Forged)?;
    let key = account_key(secret, &claims.account);
    let signed = mac(&key, payload.as_bytes()).verify_slice(&tag).is_ok()
        || mac(secret, payload.as_bytes()).verify_slice(&tag).is_ok();
    if !signed {
        return Err(LinkError::Forged);
    }
    if claims.purpose != purpose {
        return Err(LinkError::Forged);
    }
    match claims.expires_at_ms {
        Some(at_ms) if now_ms >= at_ms => Err(LinkError::Expired { at_ms }),
        _ => Ok(claims),
    }
}

fn mac(secret: &[u8], payload: &[u8]) -> Hmac<Sha256> {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret).expect("HMAC takes a key of any length");
    mac.update(payload);
    mac
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &[u8] = b"0123456789abcdef0123456789abcdef";

    fn approval() -> LinkClaims {
        LinkClaims {
            purpose: LinkPurpose::Approval,
            account: "default".into(),
            subject: "enr_1".into(),
            run: Some(3),
            expires_at_ms: Some(10_000),
        }
    }

    #[test]
    fn a_signed_token_verifies_until_it_expires() {
        let token = sign(SECRET, &approval());
        assert!(token
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)));
        assert_eq!(
            verify(SECRET, &token, LinkPurpose::Approval, 9_999),
            Ok(approval())
        );
        assert_eq!(
            verify(SECRET, &token, LinkPurpose::Approval, 10_000),
            Err(LinkError::Expired { at_ms: 10_000 })
        );
    }

    #[test]
    fn a_link_without_expiry_never_expires() {
        let claims = LinkClaims {
            purpose: LinkPurpose::Unsubscribe,
            run: None,
            expires_at_ms: None,
            subject: "ct_1".into(),
            ..approval()
        };
        let token = sign(SECRET, &claims);
        assert_eq!(
            verify(SECRET, &token, LinkPurpose::Unsubscribe, i64::MAX),
            Ok(claims)
        );
    }

    #[test]
    fn refusals() {
        let token = sign(SECRET, &approval());
        let (payload, tag) = token.split_once('.').unwrap();
        // Another enrollment, re-encoded with the old MAC: altered.
        let other = LinkClaims {
            subject: "enr_2".into(),
            ..approval()
        };
        let other_payload = sign(SECRET, &other);
        let altered = format!("{}.{tag}", other_payload.split_once('.').unwrap().0);
        let mut flipped = tag.as_bytes().to_vec();
        flipped[0] = if flipped[0] == b'A' { b'B' } else { b'A' };
        let flipped = format!("{payload}.{}", String::from_utf8(flipped).unwrap());
        let cases = [
            ("empty", String::new()),
            ("no dot", payload.to_string()),
            ("altered payload", altered),
            ("altered mac", flipped),
            ("not base64", format!("{payload}.!!!")),
            ("another secret", sign(b"another secret", &approval())),
            ("too long", format!("{}.{tag}", "A".repeat(MAX_TOKEN_LEN))),
        ];
        for (what, token) in cases {
            assert_eq!(
                verify(SECRET, &token, LinkPurpose::Approval, 0),
                Err(LinkError::Forged),
                "{what}"
            );
        }
        // A real token for another purpose is not one of this purpose.
        assert_eq!(
            verify(SECRET, &token, LinkPurpose::Unsubscribe, 0),
            Err(LinkError::Forged)
        );
    }

    /// Each account signs with its own key: one account's key signs no other's link, and a
    /// link signed before keys were per account (with the installation secret) still opens.
    #[test]
    fn each_account_has_its_own_key() {
        assert_ne!(account_key(SECRET, "a"), account_key(SECRET, "b"));
        assert_ne!(
            account_key(SECRET, "a"),
            account_key(b"another secret", "a")
        );
        let for_b = LinkClaims {
            account: "b".into(),
            ..approval()
        };
        let payload = URL_SAFE_NO_PAD.encode(serde_json::to_vec(&for_b).unwrap());
        let with = |key: &[u8]| {
            let tag = URL_SAFE_NO_PAD.encode(mac(key, payload.as_bytes()).finalize().into_bytes());
            format!("{payload}.{tag}")
        };
        assert_eq!(
            verify(
                SECRET,
                &with(&account_key(SECRET, "a")),
                LinkPurpose::Approval,
                0
            ),
            Err(LinkError::Forged),
            "account a's key signs no link of b"
        );
        assert_eq!(
            verify(
                SECRET,
                &with(&account_key(SECRET, "b")),
                LinkPurpose::Approval,
                0
            ),
            Ok(for_b.clone())
        );
        assert_eq!(
            verify(SECRET, &with(SECRET), LinkPurpose::Approval, 0),
            Ok(for_b),
            "a link signed before keys were per account"
        );
        assert_eq!(sign(SECRET, &approval()), {
            let p = URL_SAFE_NO_PAD.encode(serde_json::to_vec(&approval()).unwrap());
            let k = account_key(SECRET, "default");
            format!(
                "{p}.{}",
                URL_SAFE_NO_PAD.encode(mac(&k, p.as_bytes()).finalize().into_bytes())
            )
        });
    }
}
