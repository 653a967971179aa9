//! HTTP Basic credentials (RFC 7617), which SendGrid's Inbound Parse and Postmark send from the
//! `https://user:password@host/…` URL the account configured there: neither signs its requests.

use super::{forged, Refusal};
use base64::Engine;

/// A `user:password` pair as an account sets it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Credentials<'a> {
    /// The user name (no `:`).
    pub user: &'a str,
    /// The password (may hold `:`).
    pub password: &'a str,
}

impl<'a> Credentials<'a> {
    /// `user:password`, both non-empty; the user is what comes before the first `:`.
    pub fn parse(text: &'a str) -> Result<Credentials<'a>, String> {
        let fix = "write it as `user:password`, the credentials you put in the provider's \
                   webhook URL (`https://user:password@…`)";
        let (user, password) = text
            .split_once(':')
            .ok_or_else(|| format!("the secret has no `:`: {fix}"))?;
        if user.is_empty() || password.is_empty() {
            return Err(format!("the user or the password is empty: {fix}"));
        }
        if text.chars().any(char::is_control) {
            return Err(format!("the secret holds a control character: {fix}"));
        }
        Ok(Credentials { user, password })
    }
}

/// Checks an `Authorization: Basic …` header against the account's `user:password`, comparing
/// the whole pair in constant time. `provider` names who should have sent it.
pub fn check(expected: &str, header: Option<&str>, provider: &str) -> Result<(), Refusal> {
    let header = header.ok_or_else(|| {
        forged(format!(
            "no `Authorization` header: put the credentials set for the account with \
             `nudge provider-secret set {provider}` into the webhook URL at {provider} \
             (`https://user:password@…`)"
        ))
    })?;
    let given = header
        .trim()
        .strip_prefix("Basic ")
        .or_else(|| header.trim().strip_prefix("basic "))
        .and_then(|b64| {
            base64::engine::general_purpose::STANDARD
                .decode(b64.trim())
                .ok()
        })
        .ok_or_else(|| {
            forged("the `Authorization` header is not `Basic <base64 user:password>`")
        })?;
    // Digests of equal length, compared whole: the time does not tell how much matched.
    use sha2::Digest;
    let (a, b) = (
        sha2::Sha256::digest(&given),
        sha2::Sha256::digest(expected.as_bytes()),
    );
    if !super::same_bytes(&a, &b) {
        return Err(forged(format!(
            "wrong credentials: the user and password in the webhook URL are not the ones set \
             with `nudge provider-secret set {provider}`"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn basic(pair: &str) -> String {
        format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(pair)
        )
    }

    #[test]
    fn credentials_match_whole() {
        assert!(check("u:p:w", Some(&basic("u:p:w")), "postmark").is_ok());
        for bad in [
            basic("u:p"),
            basic("u:p:w "),
            basic("U:p:w"),
            "Bearer x".into(),
            "Basic %%".into(),
        ] {
            assert!(check("u:p:w", Some(&bad), "postmark").is_err(), "{bad}");
        }
        let e = check("u:p", None, "sendgrid").unwrap_err().to_string();
        assert!(e.contains("nudge provider-secret set sendgrid"), "{e}");
    }
}
