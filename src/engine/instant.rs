//! How instants are written in answers (docs/service.md): RFC 3339 in UTC with a `Z`, milliseconds
//! only when not zero.

use chrono::{DateTime, SecondsFormat, Timelike, Utc};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

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

/// The text chrono's serde writes for an instant (RFC 3339 in UTC with a `Z`, and as many
/// fractional digits as the instant needs: none, 3, 6 or 9). Stored states and journey entries
/// have always held instants in this form; [`stored`] writes it straight (chrono's formatter
/// goes a character at a time through `fmt`, a few percent of the planner's CPU), and reads
/// it back with a fast path for exactly this form.
pub fn write_stored(out: &mut Vec<u8>, t: &DateTime<Utc>) {
    match spelled(t) {
        Some((buf, len)) => out.extend_from_slice(&buf[..len]),
        // Years outside four digits, and leap seconds: chrono's own spelling.
        None => out.extend_from_slice(t.to_rfc3339_opts(SecondsFormat::AutoSi, true).as_bytes()),
    }
}

/// [`write_stored`] onto a `String` (a journey entry's text is written straight into its
/// step's `String`, with no bytes to check for UTF-8 afterwards).
pub fn push_stored(out: &mut String, t: &DateTime<Utc>) {
    match spelled(t) {
        Some((buf, len)) => out.push_str(std::str::from_utf8(&buf[..len]).expect("ASCII")),
        None => out.push_str(&t.to_rfc3339_opts(SecondsFormat::AutoSi, true)),
    }
}

/// The instant spelled into a buffer on the stack, and its length; `None` for what chrono
/// spells itself (years outside four digits, leap seconds).
pub fn spelled(t: &DateTime<Utc>) -> Option<([u8; 30], usize)> {
    use chrono::Datelike;
    let (year, nanos) = (t.year(), t.nanosecond());
    if !(0..=9999).contains(&year) || nanos >= 1_000_000_000 {
        return None;
    }
    // Spelled into a buffer on the stack, then appended once (one capacity check, not one per
    // character); the date's parts are read from chrono once.
    let (date, time) = (t.date_naive(), t.time());
    let mut buf = [0u8; 30];
    let mut len = 0;
    let mut digits = |n: u32, width: usize, buf: &mut [u8; 30]| {
        let mut n = n;
        for slot in buf[len..len + width].iter_mut().rev() {
            *slot = b'0' + (n % 10) as u8;
            n /= 10;
        }
        len += width;
    };
    digits(year as u32, 4, &mut buf);
    digits(date.month(), 3, &mut buf); // one digit more: the separator's slot, fixed below
    digits(date.day(), 3, &mut buf);
    digits(time.hour(), 3, &mut buf);
    digits(time.minute(), 3, &mut buf);
    digits(time.second(), 3, &mut buf);
    if nanos != 0 {
        if nanos % 1_000_000 == 0 {
            digits(nanos / 1_000_000, 4, &mut buf);
        } else if nanos % 1_000 == 0 {
            digits(nanos / 1_000, 7, &mut buf);
        } else {
            digits(nanos, 10, &mut buf);
        }
        buf[19] = b'.';
    }
    // The separators over the leading zero each two-digit part was given.
    buf[4] = b'-';
    buf[7] = b'-';
    buf[10] = b'T';
    buf[13] = b':';
    buf[16] = b':';
    buf[len] = b'Z';
    Some((buf, len + 1))
}

/// Reads an instant as chrono's serde does (any RFC 3339 instant, offsets converted to UTC),
/// with a fast path for the form [`write_stored`] writes.
pub fn read_stored(text: &str) -> Result<DateTime<Utc>, String> {
    if let Some(t) = read_canonical(text.as_bytes()) {
        return Ok(t);
    }
    text.parse::<DateTime<chrono::FixedOffset>>()
        .map(|t| t.with_timezone(&Utc))
        .map_err(|e| e.to_string())
}

/// `YYYY-MM-DDTHH:MM:SS[.f{3,6,9}]Z` exactly, or `None` (then chrono decides).
fn read_canonical(b: &[u8]) -> Option<DateTime<Utc>> {
    let num = |range: std::ops::Range<usize>| -> Option<u32> {
        let part = b.get(range)?;
        part.iter().try_fold(0u32, |n, &c| {
            c.is_ascii_digit().then(|| n * 10 + u32::from(c - b'0'))
        })
    };
    if b.len() < 20
        || b[4] != b'-'
        || b[7] != b'-'
        || b[10] != b'T'
        || b[13] != b':'
        || b[16] != b':'
        || *b.last()? != b'Z'
    {
        return None;
    }
    let nanos = match b.len() {
        20 => 0,
        24 if b[19] == b'.' => num(20..23)? * 1_000_000,
        27 if b[19] == b'.' => num(20..26)? * 1_000,
        30 if b[19] == b'.' => num(20..29)?,
        _ => return None,
    };
    let date = chrono::NaiveDate::from_ymd_opt(num(0..4)? as i32, num(5..7)?, num(8..10)?)?;
    let time =
        chrono::NaiveTime::from_hms_nano_opt(num(11..13)?, num(14..16)?, num(17..19)?, nanos)?;
    Some(date.and_time(time).and_utc())
}

/// serde `with` module for an instant kept in stored state: chrono's text, written and read
/// fast ([`write_stored`], [`read_stored`]).
pub mod stored {
    use super::*;

    /// Writes the instant as chrono's serde does; to a binary format (the stored state's
    /// MessagePack, `store::state_encoding`), as an integer: milliseconds since the epoch, or
    /// when the instant has a finer part, `[seconds, nanoseconds]`.
    pub fn serialize<S: Serializer>(t: &DateTime<Utc>, s: S) -> Result<S::Ok, S::Error> {
        if !s.is_human_readable() {
            let nanos = t.timestamp_subsec_nanos();
            if nanos % 1_000_000 == 0 {
                return s.serialize_i64(t.timestamp_millis());
            }
            return (t.timestamp(), nanos).serialize(s);
        }
        let mut out = Vec::with_capacity(30);
        write_stored(&mut out, t);
        s.serialize_str(std::str::from_utf8(&out).expect("ASCII"))
    }

    /// Reads an instant as chrono's serde does (and either form [`serialize`] writes to a
    /// binary format).
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<DateTime<Utc>, D::Error> {
        if d.is_human_readable() {
            d.deserialize_str(Visitor)
        } else {
            d.deserialize_any(Visitor)
        }
    }

    struct Visitor;

    impl<'de> serde::de::Visitor<'de> for Visitor {
        type Value = DateTime<Utc>;

        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("an RFC 3339 formatted date and time string")
        }

        fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<DateTime<Utc>, E> {
            read_stored(text).map_err(E::custom)
        }

        fn visit_i64<E: serde::de::Error>(self, millis: i64) -> Result<DateTime<Utc>, E> {
            DateTime::from_timestamp_millis(millis)
                .ok_or_else(|| E::custom(format!("{millis} ms is out of range for an instant")))
        }

        fn visit_u64<E: serde::de::Error>(self, millis: u64) -> Result<DateTime<Utc>, E> {
            let millis = i64::try_from(millis)
                .map_err(|_| E::custom(format!("{millis} ms is out of range for an instant")))?;
            self.visit_i64(millis)
        }

        fn visit_seq<A: serde::de::SeqAccess<'de>>(
            self,
            mut seq: A,
        ) -> Result<DateTime<Utc>, A::Error> {
            use serde::de::Error;
            let secs: i64 = seq
                .next_element()?
                .ok_or_else(|| A::Error::invalid_length(0, &self))?;
            let nanos: u32 = seq
                .next_element()?
                .ok_or_else(|| A::Error::invalid_length(1, &self))?;
            DateTime::from_timestamp(secs, nanos)
                .ok_or_else(|| A::Error::custom(format!("{secs} s {nanos} ns is out of range")))
        }
    }
}

/// [`stored`] for an optional instant (use with `default` and
/// `skip_serializing_if = "Option::is_none"`).
pub mod stored_opt {
    use super::*;

    /// Writes the instant as chrono's serde does, or `null`.
    pub fn serialize<S: Serializer>(t: &Option<DateTime<Utc>>, s: S) -> Result<S::Ok, S::Error> {
        match t {
            Some(t) => stored::serialize(t, s),
            None => s.serialize_none(),
        }
    }

    /// Reads an instant as chrono's serde does, or `null`.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<DateTime<Utc>>, D::Error> {
        #[derive(Deserialize)]
        struct Wrapped(#[serde(with = "stored")] DateTime<Utc>);
        Ok(Option::<Wrapped>::deserialize(d)?.map(|Wrapped(t)| t))
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

    /// The stored form is chrono's serde text, both ways, for any instant: whole seconds,
    /// milli-, micro- and nanoseconds, years from 0 to 9999 and beyond, offsets read back.
    mod stored_form {
        use super::super::*;
        use proptest::prelude::*;

        fn chrono_text(t: &DateTime<Utc>) -> String {
            serde_json::to_string(t).unwrap()
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(5_000))]

            #[test]
            fn written_and_read_as_chrono_does(
                secs in -62_167_219_200i64 - 86_400 * 400..253_402_300_799 + 86_400 * 400,
                sub in prop_oneof![
                    Just(0u32),
                    (0u32..1000).prop_map(|ms| ms * 1_000_000),
                    (0u32..1_000_000).prop_map(|us| us * 1_000),
                    0u32..1_000_000_000,
                ],
            ) {
                let t = DateTime::from_timestamp(secs, sub).unwrap();
                let mut out = Vec::new();
                write_stored(&mut out, &t);
                let text = String::from_utf8(out).unwrap();
                prop_assert_eq!(format!("\"{text}\""), chrono_text(&t));
                prop_assert_eq!(read_stored(&text).unwrap(), t);
                let through_serde: DateTime<Utc> = serde_json::from_str(&chrono_text(&t)).unwrap();
                prop_assert_eq!(read_stored(&text).unwrap(), through_serde);
            }

            /// To a binary format (the stored state's MessagePack) an instant is an integer
            /// of milliseconds, or seconds and nanoseconds, and reads back exactly, with and
            /// without `Option` around it.
            #[test]
            fn a_binary_format_keeps_it_exactly(
                secs in -62_167_219_200i64 - 86_400 * 400..253_402_300_799 + 86_400 * 400,
                sub in prop_oneof![
                    Just(0u32),
                    (0u32..1000).prop_map(|ms| ms * 1_000_000),
                    0u32..1_000_000_000,
                ],
            ) {
                #[derive(Debug, PartialEq, Serialize, Deserialize)]
                struct Both {
                    #[serde(with = "stored")]
                    at: DateTime<Utc>,
                    #[serde(default, skip_serializing_if = "Option::is_none", with = "stored_opt")]
                    maybe: Option<DateTime<Utc>>,
                }
                let t = DateTime::from_timestamp(secs, sub).unwrap();
                for value in [Both { at: t, maybe: Some(t) }, Both { at: t, maybe: None }] {
                    let bytes = rmp_serde::to_vec_named(&value).unwrap();
                    prop_assert_eq!(rmp_serde::from_slice::<Both>(&bytes).unwrap(), value);
                }
                // Whole milliseconds are one integer (9 bytes at most), not 24 bytes of text.
                if sub % 1_000_000 == 0 {
                    let mut bytes = Vec::new();
                    stored::serialize(&t, &mut rmp_serde::Serializer::new(&mut bytes)).unwrap();
                    prop_assert!(bytes.len() <= 9);
                }
            }
        }

        #[test]
        fn other_rfc_3339_forms_are_read_as_chrono_reads_them() {
            for text in [
                "2026-12-04T21:00:00+01:00",
                "2026-12-04t20:00:00z",
                "2026-12-04 20:00:00Z",
                "2026-12-04T20:00:00.5Z",
                "2026-12-04T20:00:00.1234Z",
                "+12026-12-04T20:00:00Z",
            ] {
                let ours = read_stored(text).ok();
                let chrono: Option<DateTime<Utc>> =
                    serde_json::from_str(&format!("\"{text}\"")).ok();
                assert_eq!(ours, chrono, "{text}");
            }
            for bad in [
                "2026-13-04T20:00:00Z",
                "2026-12-04T20:00:00",
                "",
                "2026-12-04T25:00:00Z",
            ] {
                assert!(read_stored(bad).is_err(), "{bad}");
                assert!(serde_json::from_str::<DateTime<Utc>>(&format!("\"{bad}\"")).is_err());
            }
        }
    }
}
