//! `until` (docs/timing.md, "Instants", "Daylight-saving changes" and "A target already in the
//! past"): the four closed forms of an instant, and their resolution.
//!
//! | form | example | read in |
//! |---|---|---|
//! | absolute instant | `2026-09-01T08:00:00Z` | its own RFC 3339 offset |
//! | wall clock | `2026-09-01 08:00` (seconds optional) | `tz` |
//! | offset plus wall clock | `+2d 08:00`, `+1bd 09:30` | `tz`, from today's local date |
//! | calendar pattern | `mon..fri 08:30` | `tz`, next match strictly after now |
//!
//! A text of the exact wall-clock shape is a wall clock (a one-off), not the equivalent calendar
//! pattern, so a past one resolves to its (past) instant. Natural language (`tomorrow 9am`,
//! `next monday`) is refused with `BAD_UNTIL` and a hint listing the four forms.

use crate::code::Code;
use crate::timing::business_days::add_business_days;
use crate::timing::calendar::{is_weekday_list, CalendarPattern};
use crate::timing::duration::{Duration, MAX_YEARS};
use crate::timing::error::TimingError;
use crate::timing::holidays::Holidays;
use crate::timing::zone::Zone;
use chrono::{DateTime, Days, FixedOffset, NaiveDate, NaiveDateTime, NaiveTime, Utc};

const FORMS_HINT: &str = "an until is one of: an RFC 3339 instant `2026-09-01T08:00:00Z`, a wall clock `2026-09-01 08:00`, an offset and wall clock `+2d 08:00` / `+1bd 09:30`, or a calendar pattern such as `mon..fri 08:30`";

/// The largest `N` in `+Nd` / `+Nbd` (the duration bound, in days).
const MAX_OFFSET_DAYS: u32 = (MAX_YEARS * 366) as u32;

/// A parsed `until`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Until {
    /// RFC 3339 with its own offset; `tz` is not consulted.
    Absolute(DateTime<FixedOffset>),
    /// A local wall clock read in `tz`.
    WallClock(NaiveDateTime),
    /// `+Nd HH:MM` (calendar days) or `+Nbd HH:MM` (business days) from today's local date.
    Offset {
        /// `N`: how many days (or business days) after today's local date.
        days: u32,
        /// `bd` rather than `d`: step business days, skipping holidays.
        business: bool,
        /// The local time of day on the target date.
        time: NaiveTime,
    },
    /// A calendar pattern: the next match strictly after now.
    Pattern(CalendarPattern),
}

fn bad(text: &str, position: Option<usize>, hint: impl Into<String>) -> TimingError {
    TimingError::new(Code::BadUntil, text, position, hint)
}

/// `HH:MM` or `HH:MM:SS`, two digits each.
fn parse_hms(s: &str) -> Option<NaiveTime> {
    let b = s.as_bytes();
    let two = |i: usize| -> Option<u32> {
        (b.get(i)?.is_ascii_digit() && b.get(i + 1)?.is_ascii_digit())
            .then(|| ((b[i] - b'0') * 10 + (b[i + 1] - b'0')) as u32)
    };
    match b.len() {
        5 if b[2] == b':' => NaiveTime::from_hms_opt(two(0)?, two(3)?, 0),
        8 if b[2] == b':' && b[5] == b':' => NaiveTime::from_hms_opt(two(0)?, two(3)?, two(6)?),
        _ => None,
    }
}

fn is_date_shape(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 10
        && b[4] == b'-'
        && b[7] == b'-'
        && (0..10).all(|i| i == 4 || i == 7 || b[i].is_ascii_digit())
}

impl Until {
    /// Parses an `until` slot. `BAD_UNTIL` for a malformed instant, wall clock or offset, and
    /// for natural language; a calendar pattern's own errors are `BAD_PATTERN` /
    /// `NEVER_MATCHES`; `${…}` is `INTERPOLATION_REFUSED`.
    pub fn parse(text: &str) -> Result<Until, TimingError> {
        if let Some(p) = text.find("${") {
            return Err(TimingError::new(
                Code::InterpolationRefused,
                text,
                Some(p),
                "`${…}` interpolation is refused in a timing slot: it produces a string; write a literal, or in a flow an expression `$: input.field` (a timestamp or epoch milliseconds)",
            ));
        }
        if text.trim().is_empty() {
            return Err(bad(
                text,
                Some(0),
                format!("the until is empty: {FORMS_HINT}"),
            ));
        }
        if text.trim_start().starts_with("$:") {
            return Err(bad(
                text,
                Some(text.len() - text.trim_start().len()),
                "`$:` expressions are accepted only in a flow's timing slots, where they must infer to a timestamp or epoch milliseconds; here write a literal such as `2026-09-01T08:00:00Z`",
            ));
        }
        if text.starts_with('+') {
            return parse_offset(text);
        }
        if is_date_shape(text) {
            let b = text.as_bytes();
            if b.get(10).is_some_and(|c| *c == b'T' || *c == b't') {
                return DateTime::parse_from_rfc3339(text).map(Until::Absolute).map_err(|_| {
                    bad(text, Some(10), "an absolute instant is RFC 3339 with seconds and an offset, e.g. `2026-09-01T08:00:00Z` or `2026-09-01T10:00:00+02:00`; for a wall clock read in `tz` write `2026-09-01 08:00`")
                });
            }
            let clock_shape = (b.len() == 16 || b.len() == 19)
                && b[10] == b' '
                && b[11..].iter().all(|c| c.is_ascii_digit() || *c == b':');
            if clock_shape {
                let date = NaiveDate::from_ymd_opt(
                    text[0..4].parse().unwrap_or(0),
                    text[5..7].parse().unwrap_or(0),
                    text[8..10].parse().unwrap_or(0),
                )
                .ok_or_else(|| bad(text, Some(0), format!("`{}` is not a date: write `YYYY-MM-DD HH:MM` with a day that exists in the month", &text[..10])))?;
                let time = parse_hms(&text[11..]).ok_or_else(|| {
                    bad(
                        text,
                        Some(11),
                        "the time of a wall clock is `HH:MM` or `HH:MM:SS` (24-hour), e.g. `08:00`",
                    )
                })?;
                return Ok(Until::WallClock(date.and_time(time)));
            }
        }
        // Natural language: a first word that is not a weekday list.
        let first = text.split(' ').find(|w| !w.is_empty()).unwrap_or("");
        let first_at = text.find(first).unwrap_or(0);
        if first
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphabetic())
            && !is_weekday_list(first)
        {
            return Err(bad(
                text,
                Some(first_at),
                format!("natural language is not accepted: {FORMS_HINT}"),
            ));
        }
        if !text.contains(':') {
            if Duration::parse(text).is_ok() {
                return Err(bad(text, Some(0), format!("`{text}` is a duration: put it in `for` (or `duration`), or write an offset with a time of day such as `+2d 08:00`")));
            }
            if !text.contains('-')
                && !first
                    .bytes()
                    .next()
                    .is_some_and(|b| b.is_ascii_alphabetic())
            {
                return Err(bad(text, Some(0), FORMS_HINT));
            }
        }
        // A weekday followed by words (`monday morning`) is natural language too.
        let mut offset = 0;
        for word in text.split(' ') {
            let at = offset;
            offset += word.len() + 1;
            if at > first_at
                && !word.is_empty()
                && word.bytes().all(|b| b.is_ascii_alphabetic())
                && !is_weekday_list(word)
                && !(word.contains('/') || word == "UTC")
            {
                return Err(bad(
                    text,
                    Some(at),
                    format!("natural language is not accepted: {FORMS_HINT}"),
                ));
            }
        }
        CalendarPattern::parse(text).map(Until::Pattern)
    }

    /// The target instant. Never fails on a past target: it is returned as it is and the slot
    /// clamps (docs/timing.md, "A target already in the past"). A pattern with no match left (bounded by its years) resolves to its
    /// last match, which is in the past; one with no match at all before or after now (only
    /// possible past 2199) resolves to `now`.
    pub fn resolve(&self, now: DateTime<Utc>, zone: &Zone, h: &Holidays) -> DateTime<Utc> {
        match self {
            Until::Absolute(t) => t.with_timezone(&Utc),
            Until::WallClock(local) => zone.to_instant(*local),
            Until::Offset {
                days,
                business,
                time,
            } => {
                let today = zone.to_local(now).date();
                let date = if *business {
                    add_business_days(today, *days, h)
                } else {
                    today
                        .checked_add_days(Days::new(*days as u64))
                        .unwrap_or(NaiveDate::MAX)
                };
                zone.to_instant(date.and_time(*time))
            }
            Until::Pattern(p) => p
                .next_after(now, zone)
                .or_else(|| p.last_at_or_before(now, zone))
                .unwrap_or(now),
        }
    }
}

/// `+Nd HH:MM[:SS]` or `+Nbd HH:MM[:SS]`.
fn parse_offset(text: &str) -> Result<Until, TimingError> {
    let rest = &text[1..];
    let digits = rest.bytes().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 {
        return Err(bad(
            text,
            Some(1),
            "an offset is `+` then a number of days, e.g. `+2d 08:00` or `+1bd 09:30`",
        ));
    }
    let after_num = &rest[digits..];
    let unit_len = after_num
        .bytes()
        .take_while(|b| b.is_ascii_alphabetic())
        .count();
    let unit = &after_num[..unit_len];
    let unit_at = 1 + digits;
    let business = match unit {
        "d" => false,
        "bd" => true,
        "" => return Err(bad(text, Some(unit_at), "add the unit: `d` (calendar days) or `bd` (business days), e.g. `+2d 08:00`")),
        other => {
            return Err(bad(text, Some(unit_at), format!("`{other}` is not an offset unit: an offset counts `d` (calendar days) or `bd` (business days), e.g. `+2d 08:00`; for a duration from now use `for`")))
        }
    };
    let n: u64 = if digits > 9 {
        u64::MAX
    } else {
        rest[..digits].parse().expect("digits")
    };
    if n > MAX_OFFSET_DAYS as u64 {
        return Err(bad(
            text,
            Some(1),
            format!("too large: an offset is at most {MAX_OFFSET_DAYS} days"),
        ));
    }
    let tail = &after_num[unit_len..];
    let time_text = tail.trim_start_matches(' ');
    let time_at = text.len() - time_text.len();
    if time_text.is_empty() {
        return Err(bad(
            text,
            Some(text.len()),
            format!(
                "add a time of day: `{text} 08:00`; for a duration from now use `for: {}`",
                &text[1..]
            ),
        ));
    }
    if time_text.len() == tail.len() {
        return Err(bad(
            text,
            Some(time_at),
            "separate the offset and the time with a space: `+2d 08:00`",
        ));
    }
    let time = parse_hms(time_text).ok_or_else(|| {
        bad(
            text,
            Some(time_at),
            "the time is `HH:MM` or `HH:MM:SS` (24-hour), e.g. `+2d 08:00`",
        )
    })?;
    Ok(Until::Offset {
        days: n as u32,
        business,
        time,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn at(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text)
            .unwrap()
            .with_timezone(&Utc)
    }

    fn resolve(text: &str, now: &str, zone: &str, holidays: &[&str]) -> DateTime<Utc> {
        Until::parse(text).unwrap().resolve(
            at(now),
            &Zone::parse(zone).unwrap(),
            &Holidays::parse(holidays).unwrap(),
        )
    }

    #[test]
    fn the_four_forms() {
        assert!(matches!(
            Until::parse("2026-09-01T08:00:00Z"),
            Ok(Until::Absolute(_))
        ));
        assert!(matches!(
            Until::parse("2026-09-01T10:00:00+02:00"),
            Ok(Until::Absolute(_))
        ));
        assert!(matches!(
            Until::parse("2026-09-01T10:00:00.250+02:00"),
            Ok(Until::Absolute(_))
        ));
        assert!(matches!(
            Until::parse("2026-09-01 08:00"),
            Ok(Until::WallClock(_))
        ));
        assert!(matches!(
            Until::parse("2026-09-01 08:00:30"),
            Ok(Until::WallClock(_))
        ));
        assert_eq!(
            Until::parse("+2d 08:00"),
            Ok(Until::Offset {
                days: 2,
                business: false,
                time: NaiveTime::from_hms_opt(8, 0, 0).unwrap()
            })
        );
        assert_eq!(
            Until::parse("+1bd 09:30:15"),
            Ok(Until::Offset {
                days: 1,
                business: true,
                time: NaiveTime::from_hms_opt(9, 30, 15).unwrap()
            })
        );
        for p in [
            "*-*-01 08:00",
            "mon 09:00",
            "mon..fri 08:30",
            "*:*:0/5",
            "Monday 09:00",
            "2026-09-01 8:00",
        ] {
            assert!(matches!(Until::parse(p), Ok(Until::Pattern(_))), "{p}");
        }
    }

    #[test]
    fn refusals() {
        use Code::*;
        for (text, code, position, needle) in [
            ("", BadUntil, Some(0), "RFC 3339"),
            ("tomorrow 9am", BadUntil, Some(0), "natural language"),
            (
                "next monday",
                BadUntil,
                Some(0),
                "calendar pattern such as `mon..fri 08:30`",
            ),
            (
                "in 2 days",
                BadUntil,
                Some(0),
                "offset and wall clock `+2d 08:00`",
            ),
            ("now", BadUntil, Some(0), "natural language"),
            ("2d", BadUntil, Some(0), "put it in `for`"),
            ("2026-09-01T08:00", BadUntil, Some(10), "offset"),
            ("2026-09-01T08:00:00", BadUntil, Some(10), "offset"),
            ("2026-02-30 08:00", BadUntil, Some(0), "not a date"),
            ("2026-09-01 25:00", BadUntil, Some(11), "`HH:MM`"),
            ("+2d", BadUntil, Some(3), "add a time of day"),
            ("+2 08:00", BadUntil, Some(2), "`d` (calendar days) or `bd`"),
            ("+2h 08:00", BadUntil, Some(2), "`for`"),
            ("+d 08:00", BadUntil, Some(1), "a number of days"),
            ("+2d08:00", BadUntil, Some(3), "separate"),
            ("+2d 8am", BadUntil, Some(4), "`HH:MM`"),
            ("+99999999999d 08:00", BadUntil, Some(1), "too large"),
            ("12345", BadUntil, Some(0), "RFC 3339"),
            ("${x}", InterpolationRefused, Some(0), "interpolation"),
            (
                "$: input.demo_at",
                BadUntil,
                Some(0),
                "only in a flow's timing slots",
            ),
            ("mon 9am", BadPattern, Some(4), "time of day"),
            ("monday morning", BadUntil, Some(7), "natural language"),
            ("fri 17:00 sharp", BadUntil, Some(10), "natural language"),
            ("mon 09:00 Europe/Prague", BadPattern, Some(10), "`tz` slot"),
            ("*-02-30 08:00", NeverMatches, Some(0), "no date matches"),
        ] {
            let err = Until::parse(text).unwrap_err();
            assert_eq!(err.code, code, "{text:?}: {err}");
            assert_eq!(err.position, position, "{text:?}: {err}");
            assert!(
                err.hint.contains(needle),
                "{text:?}: hint {:?} lacks {needle:?}",
                err.hint
            );
        }
    }

    // Expected instants: Python zoneinfo (fold=0) and numpy.busday_offset, or the documented rule.

    #[test]
    fn absolute_ignores_the_zone() {
        assert_eq!(
            resolve(
                "2026-09-01T10:00:00+02:00",
                "2026-06-01T00:00:00Z",
                "America/New_York",
                &[]
            ),
            at("2026-09-01T08:00:00Z")
        );
    }

    #[test]
    fn wall_clock_in_the_zone_and_dst() {
        let now = "2026-01-01T00:00:00Z";
        assert_eq!(
            resolve("2026-09-01 08:00", now, "Europe/Prague", &[]),
            at("2026-09-01T06:00:00Z")
        );
        assert_eq!(
            resolve("2026-03-29 02:30", now, "Europe/Prague", &[]),
            at("2026-03-29T01:30:00Z")
        );
        assert_eq!(
            resolve("2026-10-25 02:30", now, "Europe/Prague", &[]),
            at("2026-10-25T00:30:00Z")
        );
        assert_eq!(
            resolve("2026-09-01 08:00", now, "+05:45", &[]),
            at("2026-09-01T02:15:00Z")
        );
    }

    #[test]
    fn a_past_target_is_returned_as_it_is() {
        let now = "2026-06-01T00:00:00Z";
        assert_eq!(
            resolve("2026-01-01 00:00", now, "Asia/Kathmandu", &[]),
            at("2025-12-31T18:15:00Z")
        );
        assert_eq!(
            resolve("2020-01-01T00:00:00Z", now, "UTC", &[]),
            at("2020-01-01T00:00:00Z")
        );
        // A pattern whose matches are all past resolves to its last match.
        assert_eq!(
            resolve("2026-*-01 8,9:00", "2027-03-01T00:00:00Z", "UTC", &[]),
            at("2026-12-01T09:00:00Z")
        );
    }

    #[test]
    fn offsets_count_from_todays_local_date() {
        // 2026-12-18 is a Friday. 23:30Z is already Saturday in Prague.
        assert_eq!(
            resolve("+1bd 09:30", "2026-12-18T10:00:00Z", "Europe/Prague", &[]),
            at("2026-12-21T08:30:00Z")
        );
        assert_eq!(
            resolve("+1bd 09:30", "2026-12-18T23:30:00Z", "Europe/Prague", &[]),
            at("2026-12-21T08:30:00Z")
        );
        assert_eq!(
            resolve("+2d 08:00", "2026-12-18T23:30:00Z", "Europe/Prague", &[]),
            at("2026-12-21T07:00:00Z")
        );
        assert_eq!(
            resolve("+2d 08:00", "2026-12-18T23:30:00Z", "UTC", &[]),
            at("2026-12-20T08:00:00Z")
        );
        // +0bd is today, weekend or not, and may be in the past.
        assert_eq!(
            resolve("+0bd 08:00", "2026-12-19T10:00:00Z", "Europe/Prague", &[]),
            at("2026-12-19T07:00:00Z")
        );
        assert_eq!(
            resolve("+0d 23:00", "2026-12-19T10:00:00Z", "Europe/Prague", &[]),
            at("2026-12-19T22:00:00Z")
        );
        // Holidays are skipped.
        assert_eq!(
            resolve(
                "+1bd 09:00",
                "2026-12-23T10:00:00Z",
                "Europe/Prague",
                &["2026-12-24", "2026-12-25"]
            ),
            at("2026-12-28T08:00:00Z")
        );
        // Onto the spring-forward night: 02:30 -> 03:30 CEST.
        assert_eq!(
            resolve("+1d 02:30", "2026-03-28T12:00:00Z", "Europe/Prague", &[]),
            at("2026-03-29T01:30:00Z")
        );
    }

    #[test]
    fn patterns_take_the_next_match() {
        // systemd: 'Mon 09:00 Asia/Tokyo' after 2026-03-28 21:30 UTC.
        assert_eq!(
            resolve("Mon 09:00", "2026-03-28T21:30:00Z", "Asia/Tokyo", &[]),
            at("2026-03-30T00:00:00Z")
        );
        let now = Utc.with_ymd_and_hms(2026, 3, 28, 12, 0, 0).unwrap();
        let u = Until::parse("*-*-* 02:30").unwrap();
        assert_eq!(
            u.resolve(
                now,
                &Zone::parse("Europe/Prague").unwrap(),
                &Holidays::none()
            ),
            at("2026-03-29T01:30:00Z")
        );
    }
}
