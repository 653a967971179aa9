//! Webhook signatures (docs/service.md). Pure: `now` is a parameter. The webhooks pass the system
//! clock's now, even on a server with a manual clock: a signature's timestamp is the sender's
//! real time, which virtual time says nothing about.
//!
//! - nudge's own scheme, for `/webhooks/email` and `/webhooks/calendar`:
//!   `X-Nudge-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "t.body">` with the account's
//!   webhook secret. The timestamp is inside the signed text, so it cannot be moved; a
//!   signature outside [`TOLERANCE_SECS`] is refused, and the storage layer refuses a signature
//!   it has seen before (replay). Several `v1=` entries may be sent (secret rotation); one match
//!   is enough.
//! - Twilio's, for `/webhooks/sms/twilio`: `X-Twilio-Signature` = base64(HMAC-SHA1(auth token,
//!   the full URL Twilio called + every POST parameter, sorted by name, as name then value)).
//!
//! Comparisons go through `hmac`'s `verify_slice`, which compares in constant time.

use base64::Engine;
use chrono::{DateTime, Utc};
use hmac::{Hmac, Mac};
use sha1::Sha1;
use sha2::Sha256;

/// How far a signature's timestamp may be from the system clock, either way (5 minutes).
pub const TOLERANCE_SECS: i64 = 300;
/// The header of nudge's scheme.
pub const NUDGE_HEADER: &str = "x-nudge-signature";
/// Twilio's header.
pub const TWILIO_HEADER: &str = "x-twilio-signature";

/// Why a signature was refused. Every variant answers 401; the text says what to fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SignatureError {
    /// No signature header: the header's name, so the sender knows which one.
    #[error("missing signature: send the header `{0}`")]
    Missing(&'static str),
    #[error("malformed `X-Nudge-Signature` {0:?}: expected `t=<unix seconds>,v1=<hex HMAC-SHA256 of \"t.body\">`")]
    /// The header is not `t=…,v1=…`; the header as received.
    Malformed(String),
    #[error("the signature does not match the body: sign `<t>.<raw body>` with the account's webhook secret (see `nudge webhook-secret show`)")]
    /// Well formed, but signed with another secret or over another body.
    Mismatch,
    #[error("`X-Twilio-Signature` does not match: Twilio signs the URL it called and the form's fields with the account's Twilio auth token, so that token must be the one set with `nudge provider-secret set twilio`")]
    /// Twilio's signature, made with another auth token or over another URL or form.
    TwilioMismatch,
    #[error("the signature's timestamp {t} is {age}s away from the system clock; at most {TOLERANCE_SECS}s is accepted (sign each request when it is sent)")]
    /// Signed too long ago (or in the future): a captured request cannot be sent again later.
    Stale {
        /// The signature's timestamp, unix seconds.
        t: i64,
        /// Seconds between it and the system clock (negative: in the future).
        age: i64,
    },
    #[error("this signature was already used: each request must be signed anew")]
    /// The same signature was seen before within the window.
    Replayed,
}

/// A verified `X-Nudge-Signature`: its timestamp and the `v1` that matched (the replay key).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verified {
    /// The signature's timestamp, unix seconds.
    pub t: i64,
    /// The hex HMAC that matched: remembered for the window so a replay is refused.
    pub v1: String,
}

/// The `X-Nudge-Signature` value for `body` signed at unix second `t`.
pub fn sign(secret: &str, t: i64, body: &[u8]) -> String {
    let v1 = hex::encode(nudge_mac(secret, t, body).finalize().into_bytes());
    format!("t={t},v1={v1}")
}

fn nudge_mac(secret: &str, t: i64, body: &[u8]) -> Hmac<Sha256> {
    let mut mac =
        Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("HMAC takes any key length");
    mac.update(t.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    mac
}

/// Checks an `X-Nudge-Signature` header value against `body` at `now`.
pub fn verify(
    secret: &str,
    header: Option<&str>,
    body: &[u8],
    now: DateTime<Utc>,
) -> Result<Verified, SignatureError> {
    let header = header.ok_or(SignatureError::Missing("X-Nudge-Signature"))?;
    let malformed = || SignatureError::Malformed(header.chars().take(200).collect());
    let mut t = None;
    let mut v1s = Vec::new();
    for part in header.split(',') {
        let (key, value) = part.trim().split_once('=').ok_or_else(malformed)?;
        match key {
            "t" => t = Some(value.parse::<i64>().map_err(|_| malformed())?),
            "v1" => v1s.push(value.to_string()),
            // Other schemes (`v0=`, future versions) are ignored, as Stripe does.
            _ => {}
        }
    }
    let t = t.ok_or_else(malformed)?;
    if v1s.is_empty() {
        return Err(malformed());
    }
    let mac = nudge_mac(secret, t, body);
    let matched = v1s
        .into_iter()
        .find(|v1| hex::decode(v1).is_ok_and(|bytes| mac.clone().verify_slice(&bytes).is_ok()));
    let v1 = matched.ok_or(SignatureError::Mismatch)?;
    // Checked after the MAC, so an unsigned timestamp never earns a "stale" answer.
    let age = now.timestamp() - t;
    if age.abs() > TOLERANCE_SECS {
        return Err(SignatureError::Stale { t, age });
    }
    Ok(Verified {
        t,
        v1: v1.to_ascii_lowercase(),
    })
}

/// Twilio's signature of a form POST to `url` with `params` (any order; sorted here).
pub fn twilio_sign(auth_token: &str, url: &str, params: &[(String, String)]) -> String {
    base64::engine::general_purpose::STANDARD
        .encode(twilio_mac(auth_token, url, params).finalize().into_bytes())
}

fn twilio_mac(auth_token: &str, url: &str, params: &[(String, String)]) -> Hmac<Sha1> {
    let mut sorted: Vec<&(String, String)> = params.iter().collect();
    // By name, then value for repeated names (as Twilio's own libraries do).
    sorted.sort();
    let mut mac =
        Hmac::<Sha1>::new_from_slice(auth_token.as_bytes()).expect("HMAC takes any key length");
    mac.update(url.as_bytes());
    for (name, value) in sorted {
        mac.update(name.as_bytes());
        mac.update(value.as_bytes());
    }
    mac
}

/// Checks an `X-Twilio-Signature` header value.
pub fn twilio_verify(
    auth_token: &str,
    url: &str,
    params: &[(String, String)],
    header: Option<&str>,
) -> Result<(), SignatureError> {
    let header = header.ok_or(SignatureError::Missing("X-Twilio-Signature"))?;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(header.trim())
        .map_err(|_| SignatureError::TwilioMismatch)?;
    twilio_mac(auth_token, url, params)
        .verify_slice(&bytes)
        .map_err(|_| SignatureError::TwilioMismatch)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(secs, 0).unwrap()
    }

    // Computed independently with Python's standard library:
    // hmac.new(b'whsec_test', b'1700000000.{"a":1}', hashlib.sha256).hexdigest()
    const ORACLE_V1: &str = "38877139021993b830af32feea6e18a8da83eb2f6e49ee50bd9e4cf4ca4d3789";

    #[test]
    fn nudge_signature_matches_an_independent_hmac() {
        let header = sign("whsec_test", 1_700_000_000, br#"{"a":1}"#);
        assert_eq!(header, format!("t=1700000000,v1={ORACLE_V1}"));
        let v = verify(
            "whsec_test",
            Some(&header),
            br#"{"a":1}"#,
            at(1_700_000_000),
        )
        .unwrap();
        assert_eq!(v.t, 1_700_000_000);
        assert_eq!(v.v1, ORACLE_V1);
    }

    /// (name, header, body, now in unix seconds, what the refusal must be)
    type RefusalCase<'a> = (
        &'a str,
        Option<String>,
        &'a [u8],
        i64,
        fn(&SignatureError) -> bool,
    );

    #[test]
    fn refusals() {
        let body = br#"{"a":1}"#;
        let t = 1_700_000_000;
        let good = sign("whsec_test", t, body);
        let cases: Vec<RefusalCase> = vec![
            ("no header", None, body, t, |e| {
                matches!(e, SignatureError::Missing(_))
            }),
            ("garbage", Some("hello".into()), body, t, |e| {
                matches!(e, SignatureError::Malformed(_))
            }),
            ("no v1", Some(format!("t={t}")), body, t, |e| {
                matches!(e, SignatureError::Malformed(_))
            }),
            ("no t", Some(format!("v1={ORACLE_V1}")), body, t, |e| {
                matches!(e, SignatureError::Malformed(_))
            }),
            (
                "bad t",
                Some(format!("t=soon,v1={ORACLE_V1}")),
                body,
                t,
                |e| matches!(e, SignatureError::Malformed(_)),
            ),
            ("altered body", Some(good.clone()), br#"{"a":2}"#, t, |e| {
                *e == SignatureError::Mismatch
            }),
            (
                "moved timestamp",
                Some(format!("t={},v1={ORACLE_V1}", t + 1)),
                body,
                t,
                |e| *e == SignatureError::Mismatch,
            ),
            ("wrong secret", Some(sign("other", t, body)), body, t, |e| {
                *e == SignatureError::Mismatch
            }),
            ("not hex", Some(format!("t={t},v1=zz")), body, t, |e| {
                *e == SignatureError::Mismatch
            }),
            (
                "5 min and 1 s old",
                Some(good.clone()),
                body,
                t + 301,
                |e| matches!(e, SignatureError::Stale { age: 301, .. }),
            ),
            (
                "5 min and 1 s ahead",
                Some(good.clone()),
                body,
                t - 301,
                |e| matches!(e, SignatureError::Stale { age: -301, .. }),
            ),
        ];
        for (name, header, body, now, check) in cases {
            let e = verify("whsec_test", header.as_deref(), body, at(now)).unwrap_err();
            assert!(check(&e), "{name}: {e:?}");
        }
    }

    #[test]
    fn accepted_at_the_edges_and_with_rotated_secrets() {
        let body = b"x";
        let t = 1_700_000_000;
        let good = sign("s", t, body);
        assert!(verify("s", Some(&good), body, at(t + 300)).is_ok());
        assert!(verify("s", Some(&good), body, at(t - 300)).is_ok());
        let old = sign("old", t, body);
        let old_v1 = old.split("v1=").nth(1).unwrap();
        let new_v1 = good.split("v1=").nth(1).unwrap();
        let both = format!("t={t}, v1={old_v1}, v1={new_v1}, v0=ignored");
        assert_eq!(verify("s", Some(&both), body, at(t)).unwrap().v1, new_v1);
    }

    fn params(caller: &str) -> Vec<(String, String)> {
        [
            ("To", "+18005551212"),
            ("From", caller),
            ("Digits", "1234"),
            ("Caller", caller),
            ("CallSid", "CA1234567890ABCDE"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
    }

    /// The examples of Twilio's own documentation (twilio-samples/api-snippets,
    /// security/signature_validation), also checked with Python's hmac.
    #[test]
    fn twilio_documentation_examples() {
        let url = "https://mycompany.com/myapp.php?foo=1&bar=2";
        for (caller, want) in [
            ("+14158675309", "RSOYDt4T1cUTdK1PDd93/VVr8B8="),
            ("+14158675310", "GvWf1cFY/Q7PnoempGyD5oXAezc="),
        ] {
            assert_eq!(twilio_sign("12345", url, &params(caller)), want);
            assert!(twilio_verify("12345", url, &params(caller), Some(want)).is_ok());
        }
        let p = params("+14158675309");
        let good = Some("RSOYDt4T1cUTdK1PDd93/VVr8B8=");
        assert_eq!(
            twilio_verify("12345", url, &p, None),
            Err(SignatureError::Missing("X-Twilio-Signature"))
        );
        assert_eq!(
            twilio_verify("54321", url, &p, good),
            Err(SignatureError::TwilioMismatch)
        );
        assert_eq!(
            twilio_verify("12345", "https://mycompany.com/myapp.php", &p, good),
            Err(SignatureError::TwilioMismatch)
        );
        assert_eq!(
            twilio_verify("12345", url, &params("+14158675310"), good),
            Err(SignatureError::TwilioMismatch)
        );
        assert_eq!(
            twilio_verify("12345", url, &p, Some("not base64!")),
            Err(SignatureError::TwilioMismatch)
        );
    }
}
