//! The payload of a custom event (docs/signals.md, "Custom events", seed 001): JSON up to 64 KiB; an empty or `null`
//! body arrives as `{}`, so a null never means anything but a timeout.

use serde_json::Value;

/// The largest payload accepted, in bytes of JSON text (64 KiB).
pub const MAX_PAYLOAD_BYTES: usize = 64 * 1024;

/// Why a payload was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PayloadError {
    #[error("the payload is {len} bytes; at most {MAX_PAYLOAD_BYTES} (64 KiB) of JSON are accepted: send a reference to large data instead of the data")]
    /// Over [`MAX_PAYLOAD_BYTES`]: nudge stores payloads, so large data belongs elsewhere.
    TooLarge {
        /// The payload's size in bytes.
        len: usize,
    },
    #[error("the payload is not JSON: {message} at line {line}, column {column}")]
    /// Not parseable JSON; where it broke, so the sender can find it.
    NotJson {
        /// serde_json's description of the error.
        message: String,
        /// 1-based line of the error.
        line: usize,
        /// 1-based column of the error.
        column: usize,
    },
}

/// Parses a payload: empty (or only whitespace) and `null` become `{}`.
pub fn parse(bytes: &[u8]) -> Result<Value, PayloadError> {
    if bytes.len() > MAX_PAYLOAD_BYTES {
        return Err(PayloadError::TooLarge { len: bytes.len() });
    }
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(serde_json::json!({}));
    }
    match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Null) => Ok(serde_json::json!({})),
        Ok(value) => Ok(value),
        Err(e) => Err(PayloadError::NotJson {
            message: e
                .to_string()
                .split(" at line")
                .next()
                .unwrap_or("")
                .to_string(),
            line: e.line(),
            column: e.column(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn payloads() {
        let ok: &[(&[u8], Value)] = &[
            (b"", json!({})),
            (b"  \n", json!({})),
            (b"null", json!({})),
            (b" null ", json!({})),
            (br#"{"amount": 5}"#, json!({"amount": 5})),
            (b"[1,2]", json!([1, 2])),
            (b"\"paid\"", json!("paid")),
            (b"0", json!(0)),
        ];
        for (body, want) in ok {
            assert_eq!(
                parse(body).unwrap(),
                *want,
                "{:?}",
                String::from_utf8_lossy(body)
            );
        }
        let e = parse(b"{\"a\":\n tru}").unwrap_err();
        assert!(matches!(e, PayloadError::NotJson { line: 2, .. }), "{e:?}");
        assert!(parse(b"amount=5").is_err());
    }

    #[test]
    fn sixty_four_kib_is_the_limit() {
        let fits = format!("\"{}\"", "x".repeat(MAX_PAYLOAD_BYTES - 2));
        assert_eq!(fits.len(), MAX_PAYLOAD_BYTES);
        assert!(parse(fits.as_bytes()).is_ok());
        let over = format!("\"{}\"", "x".repeat(MAX_PAYLOAD_BYTES - 1));
        assert_eq!(
            parse(over.as_bytes()),
            Err(PayloadError::TooLarge {
                len: MAX_PAYLOAD_BYTES + 1
            })
        );
    }
}
