//! How instants are written in answers (SPEC §7): RFC 3339 in UTC with a `Z`, milliseconds
//! only when not zero.

use chrono::{DateTime, SecondsFormat, Timelike, Utc};
use serde::{Deserialize, Deserializer, Serializer};

/// `2026-12-04T20:00:00Z`, or `2026-12-04T20:00:00.250Z` when there are milliseconds.
pub fn format(t: DateTime<Utc>) -> String {
    let precision = if t.nanosecond() % 1_000_000_000 == 0 {
        SecondsFormat::Secs
    } else {
        SecondsFormat::Millis
    };
    t.to_rfc3339_opts(precision, true)
}

/// Reads RFC 3339 with any offset (`+02:00` too) into UTC.
pub fn parse(text: &str) -> Result<DateTime<Utc>, String> {
    DateTime::parse_from_rfc3339(text)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|e| {
            format!("`{text}` is not an RFC 3339 instant ({e}); write e.g. `2026-12-04T20:00:00Z`")
        })
}

/// serde `with` module for a required instant.
pub mod required {
    use super::*;

    /// Writes the instant as [`format()`] does.
    pub fn serialize<S: Serializer>(t: &DateTime<Utc>, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format(*t))
    }

    /// Reads any RFC 3339 instant, as [`parse()`] does.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<DateTime<Utc>, D::Error> {
        let text = String::deserialize(d)?;
        parse(&text).map_err(serde::de::Error::custom)
    }
}

/// serde `with` module for an optional instant (use with `default` and
/// `skip_serializing_if = "Option::is_none"`).
pub mod optional {
    use super::*;

    /// Writes the instant as [`format()`] does, or `null`.
    pub fn serialize<S: Serializer>(t: &Option<DateTime<Utc>>, s: S) -> Result<S::Ok, S::Error> {
        match t {
            Some(t) => s.serialize_str(&format(*t)),
            None => s.serialize_none(),
        }
    }

    /// Reads an RFC 3339 instant, as [`parse()`] does, or `null`.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<DateTime<Utc>>, D::Error> {
        match Option::<String>::deserialize(d)? {
            Some(text) => parse(&text).map(Some).map_err(serde::de::Error::custom),
            None => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn milliseconds_only_when_not_zero() {
        let t = Utc.with_ymd_and_hms(2026, 12, 4, 20, 0, 0).unwrap();
        assert_eq!(format(t), "2026-12-04T20:00:00Z");
        let t = t + chrono::Duration::milliseconds(250);
        assert_eq!(format(t), "2026-12-04T20:00:00.250Z");
        assert_eq!(
            parse("2026-12-04T21:00:00+01:00").unwrap(),
            Utc.with_ymd_and_hms(2026, 12, 4, 20, 0, 0).unwrap()
        );
        assert!(parse("2026-12-04 20:00").unwrap_err().contains("RFC 3339"));
    }
}
