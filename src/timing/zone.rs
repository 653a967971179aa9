//! Zones (docs/timing.md, "Zones") and the two wall-clock rules of docs/timing.md, "Daylight-saving changes".
//!
//! A [`Zone`] is an IANA name, `UTC`, or a fixed offset. Local time exists only while computing:
//! [`Zone::to_instant`] turns a wall clock into an instant with Temporal's `compatible`
//! disambiguation (a skipped time moves forward by the gap, a repeated one takes its first
//! occurrence), and [`Zone::to_local`] goes the other way.

use crate::code::Code;
use crate::timing::error::TimingError;
use chrono::{DateTime, Duration, FixedOffset, NaiveDateTime, Offset, TimeZone, Utc};
use chrono_tz::Tz;
use std::fmt;

/// The largest fixed offset accepted, in seconds (±14:00, the widest offset in use on Earth).
const MAX_FIXED_OFFSET_SECS: i32 = 14 * 3600;

/// A zone a wall clock is read in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Zone {
    /// The literal `UTC`.
    Utc,
    /// An IANA name or link containing a `/` (`Europe/Prague`, `US/Eastern`).
    Iana(Tz),
    /// A fixed offset such as `+02:00`.
    Fixed(FixedOffset),
}

impl Zone {
    /// Parses a `tz` slot. Refuses abbreviations, legacy single-word names and `Local`, each
    /// with a reason, and hints at the right case for a miscased IANA name.
    pub fn parse(text: &str) -> Result<Zone, TimingError> {
        let refuse = |position: Option<usize>, hint: String| {
            Err(TimingError::new(Code::BadTz, text, position, hint))
        };
        if text == "UTC" {
            return Ok(Zone::Utc);
        }
        if text.is_empty() {
            return refuse(None, "the zone is empty: give an IANA name such as `Europe/Prague`, `UTC`, or an offset such as `+02:00`".into());
        }
        if text.starts_with('+') || text.starts_with('-') {
            return parse_fixed(text).map(Zone::Fixed);
        }
        if text.eq_ignore_ascii_case("local") {
            return refuse(None, "`Local` is refused: it depends on the host, so one flow would mean different things on two workers; name an IANA zone such as `Europe/Prague`".into());
        }
        if !text.contains('/') {
            return refuse(
                None,
                format!(
                    "`{text}` is an abbreviation or a legacy single-word name, which means the wrong thing half the year; use an IANA name with a `/` such as `Europe/Prague` or `America/New_York`, or `UTC`"
                ),
            );
        }
        match text.parse::<Tz>() {
            Ok(tz) => Ok(Zone::Iana(tz)),
            Err(_) => match Tz::from_str_insensitive(text) {
                Ok(tz) => refuse(None, format!("zone names are case-sensitive: did you mean `{}`?", tz.name())),
                Err(_) => refuse(None, format!("`{text}` is not an IANA zone name; see the tz database list, e.g. `Europe/Prague`")),
            },
        }
    }

    /// The canonical spelling: the IANA name as written, `UTC`, or `+HH:MM`.
    pub fn name(&self) -> String {
        match self {
            Zone::Utc => "UTC".to_string(),
            Zone::Iana(tz) => tz.name().to_string(),
            Zone::Fixed(off) => format_offset(off.local_minus_utc()),
        }
    }

    /// The UTC offset in force at `instant`.
    pub fn offset_at(&self, instant: DateTime<Utc>) -> FixedOffset {
        match self {
            Zone::Utc => FixedOffset::east_opt(0).expect("zero offset"),
            Zone::Fixed(off) => *off,
            Zone::Iana(tz) => tz.offset_from_utc_datetime(&instant.naive_utc()).fix(),
        }
    }

    /// The wall clock at `instant` in this zone.
    pub fn to_local(&self, instant: DateTime<Utc>) -> NaiveDateTime {
        instant.naive_utc() + Duration::seconds(self.offset_at(instant).local_minus_utc() as i64)
    }

    /// The instant of a wall clock in this zone, by docs/timing.md, "Daylight-saving changes" (Temporal's `compatible`): a time
    /// in a gap is read with the offset in force before the gap, which moves it forward by the
    /// gap's length; a time in a fold takes the earlier instant.
    pub fn to_instant(&self, local: NaiveDateTime) -> DateTime<Utc> {
        match self {
            Zone::Utc => Utc.from_utc_datetime(&local),
            Zone::Fixed(off) => {
                Utc.from_utc_datetime(&(local - Duration::seconds(off.local_minus_utc() as i64)))
            }
            Zone::Iana(_) => {
                // Temporal's algorithm: the offsets a day before and a day after bracket any
                // single transition; each candidate is kept only if it reads back to `local`.
                let as_utc = Utc.from_utc_datetime(&local);
                let before = self.offset_at(as_utc - Duration::days(1)).local_minus_utc() as i64;
                let after = self.offset_at(as_utc + Duration::days(1)).local_minus_utc() as i64;
                let mut candidates: Vec<DateTime<Utc>> = [before, after]
                    .iter()
                    .map(|off| as_utc - Duration::seconds(*off))
                    .filter(|cand| self.to_local(*cand) == local)
                    .collect();
                candidates.sort();
                candidates.dedup();
                match candidates.first() {
                    Some(first) => *first,
                    // A gap: read with the offset before it (forward by the gap's length).
                    None => as_utc - Duration::seconds(before),
                }
            }
        }
    }
}

impl fmt::Display for Zone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

fn format_offset(secs: i32) -> String {
    let sign = if secs < 0 { '-' } else { '+' };
    let abs = secs.abs();
    format!("{sign}{:02}:{:02}", abs / 3600, (abs % 3600) / 60)
}

/// `+HH:MM` / `-HH:MM`, at most ±14:00.
fn parse_fixed(text: &str) -> Result<FixedOffset, TimingError> {
    let bad = |position: usize, hint: &str| {
        Err(TimingError::new(Code::BadTz, text, Some(position), hint))
    };
    let bytes = text.as_bytes();
    let shape_ok = bytes.len() == 6
        && bytes[1].is_ascii_digit()
        && bytes[2].is_ascii_digit()
        && bytes[3] == b':'
        && bytes[4].is_ascii_digit()
        && bytes[5].is_ascii_digit();
    if !shape_ok {
        return bad(
            0,
            "a fixed offset is written `+HH:MM` or `-HH:MM`, e.g. `+02:00` or `-05:30`",
        );
    }
    let hours: i32 = text[1..3].parse().expect("two digits");
    let minutes: i32 = text[4..6].parse().expect("two digits");
    if minutes >= 60 {
        return bad(4, "the minutes of an offset are 00 to 59");
    }
    let secs = hours * 3600 + minutes * 60;
    if secs > MAX_FIXED_OFFSET_SECS {
        return bad(1, "an offset is at most ±14:00");
    }
    let signed = if bytes[0] == b'-' { -secs } else { secs };
    Ok(FixedOffset::east_opt(signed).expect("within ±14:00"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::NaiveDate;

    fn local(y: i32, mo: u32, d: u32, h: u32, mi: u32) -> NaiveDateTime {
        NaiveDate::from_ymd_opt(y, mo, d)
            .unwrap()
            .and_hms_opt(h, mi, 0)
            .unwrap()
    }

    #[test]
    fn gap_moves_forward_by_its_length() {
        // 2026-03-29 02:30 does not exist in Prague: it is 03:30 CEST = 01:30Z.
        let z = Zone::parse("Europe/Prague").unwrap();
        assert_eq!(
            z.to_instant(local(2026, 3, 29, 2, 30)).to_rfc3339(),
            "2026-03-29T01:30:00+00:00"
        );
    }

    #[test]
    fn fold_takes_the_first_occurrence() {
        // 2026-10-25 02:30 happens twice in Prague; the first is CEST (+02:00) = 00:30Z.
        let z = Zone::parse("Europe/Prague").unwrap();
        assert_eq!(
            z.to_instant(local(2026, 10, 25, 2, 30)).to_rfc3339(),
            "2026-10-25T00:30:00+00:00"
        );
    }

    #[test]
    fn lord_howe_half_hour_gap() {
        // Lord Howe springs forward 02:00 -> 02:30 on 2026-10-04; 02:15 becomes 02:45 (+11:00).
        let z = Zone::parse("Australia/Lord_Howe").unwrap();
        let at = z.to_instant(local(2026, 10, 4, 2, 15));
        assert_eq!(z.to_local(at), local(2026, 10, 4, 2, 45));
    }

    #[test]
    fn refusals_name_the_reason() {
        for (text, needle) in [
            ("CET", "abbreviation"),
            ("EST5EDT", "abbreviation"),
            ("GMT", "abbreviation"),
            ("Local", "host"),
            ("europe/prague", "Europe/Prague"),
            ("Mars/Olympus", "not an IANA"),
            ("+14:30", "at most"),
            ("+2:00", "+HH:MM"),
            ("+02:60", "00 to 59"),
        ] {
            let err = Zone::parse(text).unwrap_err();
            assert_eq!(err.code, Code::BadTz, "{text}");
            assert!(err.hint.contains(needle), "{text}: {}", err.hint);
        }
    }

    #[test]
    fn accepted_forms() {
        assert_eq!(Zone::parse("UTC").unwrap(), Zone::Utc);
        assert_eq!(Zone::parse("US/Eastern").unwrap().name(), "US/Eastern");
        assert_eq!(Zone::parse("-05:30").unwrap().name(), "-05:30");
        assert_eq!(Zone::parse("+14:00").unwrap().name(), "+14:00");
    }
}
