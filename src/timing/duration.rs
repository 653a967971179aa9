//! Durations (docs/timing.md, "Durations" and "Daylight-saving changes"; docs/flows.md, "Timeouts"): the `duration` / `for` / `timeout` / `jitter` grammar and
//! its arithmetic in a zone.
//!
//! Grammar: number-and-unit terms in any order, spaces optional between and inside terms
//! (`2h30m`, `1mo15d`, `30 seconds`, `1.5 hours`). Units are lower case:
//!
//! | unit | also | kind |
//! |---|---|---|
//! | `ms` | `millisecond(s)` | fixed |
//! | `s` | `sec`, `secs`, `second(s)` | fixed |
//! | `m` | `min`, `mins`, `minute(s)` | fixed |
//! | `h` | `hr`, `hrs`, `hour(s)` | fixed |
//! | `d` | `day(s)` | calendar |
//! | `bd` | `business day(s)` (one or more spaces) | calendar |
//! | `w` | `week(s)` | calendar |
//! | `mo` | `month(s)` | calendar |
//! | `y` | `year(s)` | calendar |
//!
//! Decisions the documented grammar leaves open:
//! - `businessday(s)` and `business_day(s)` are refused with a hint to write `business days` or
//!   `bd`: one long spelling, the documented one.
//! - Leading and trailing spaces are allowed (they are "spaces between terms" with nothing on
//!   one side); other whitespace (tabs, newlines) is refused.
//! - A number is digits with an optional `.digits` part; `1.`, `.5`, `1,5` are refused.
//! - A JSON number is milliseconds; an integral float (`30000.0`) is accepted as that integer.
//! - A duration may not exceed [`MAX_YEARS`] years (nominally): a larger one is `BAD_DURATION`
//!   "too large" rather than an overflow.
//!
//! Arithmetic ([`Duration::add_to`]) is Temporal's `ZonedDateTime.add` (overflow `constrain`,
//! disambiguation `compatible`) extended with business days, which step after weeks and days.

use crate::code::Code;
use crate::timing::business_days::{add_business_days, max_weekday_span_days};
use crate::timing::error::TimingError;
use crate::timing::holidays::Holidays;
use crate::timing::zone::Zone;
use chrono::{DateTime, Datelike, Days, Months, NaiveDate, Utc};
use std::fmt;
use std::sync::OnceLock;

/// The longest duration accepted, in (nominal) years. Far beyond any plan's `max_wait`, and small
/// enough that no arithmetic on an instant of this era can overflow.
pub const MAX_YEARS: u64 = 10_000;
const MS_PER_DAY: u64 = 86_400_000;
/// Nominal upper bound in days: a year counted as 366 days.
const MAX_DAYS: u64 = MAX_YEARS * 366;
/// Fixed-point scale for exact decimal arithmetic on fixed units (10^-18 ms).
const SCALE: u128 = 1_000_000_000_000_000_000;
const SCALE_DIGITS: usize = 18;
/// An integer part longer than this is too large for any unit (10^13 ms is 317 years; 10^13
/// hours is far beyond [`MAX_YEARS`]); refusing early keeps the exact arithmetic in `u128`.
const MAX_INT_DIGITS: usize = 13;

/// A parsed duration: calendar parts kept apart (they need a zone), fixed parts summed in ms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Duration {
    /// `y`: added together with `months`, clamping the day to the end of the target month.
    pub years: u32,
    /// `mo`.
    pub months: u32,
    /// `w`: seven calendar days each, added with `days`.
    pub weeks: u32,
    /// `d`: calendar days, wall clock kept (23 or 25 hours across a DST change).
    pub days: u32,
    /// `bd`: Monday–Friday that are not holidays, stepped after the other calendar units.
    pub business_days: u32,
    /// `h`, `m`, `s`, `ms` summed: elapsed time, added last.
    pub fixed_ms: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unit {
    Ms,
    S,
    M,
    H,
    D,
    Bd,
    W,
    Mo,
    Y,
}

impl Unit {
    fn index(self) -> usize {
        self as usize
    }
    /// Milliseconds per unit for fixed units.
    fn fixed_ms(self) -> Option<u64> {
        match self {
            Unit::Ms => Some(1),
            Unit::S => Some(1_000),
            Unit::M => Some(60_000),
            Unit::H => Some(3_600_000),
            _ => None,
        }
    }
    fn symbol(self) -> &'static str {
        match self {
            Unit::Ms => "ms",
            Unit::S => "s",
            Unit::M => "m",
            Unit::H => "h",
            Unit::D => "d",
            Unit::Bd => "bd",
            Unit::W => "w",
            Unit::Mo => "mo",
            Unit::Y => "y",
        }
    }
    /// The largest count accepted for a calendar unit (about [`MAX_YEARS`] years).
    fn max_count(self) -> u64 {
        match self {
            Unit::Y => MAX_YEARS,
            Unit::Mo => MAX_YEARS * 12,
            Unit::W => MAX_DAYS / 7,
            Unit::D => MAX_DAYS,
            Unit::Bd => MAX_DAYS * 5 / 7,
            _ => u64::MAX,
        }
    }
}

fn unit_from_word(word: &str) -> Option<Unit> {
    Some(match word {
        "ms" | "millisecond" | "milliseconds" => Unit::Ms,
        "s" | "sec" | "secs" | "second" | "seconds" => Unit::S,
        "m" | "min" | "mins" | "minute" | "minutes" => Unit::M,
        "h" | "hr" | "hrs" | "hour" | "hours" => Unit::H,
        "d" | "day" | "days" => Unit::D,
        "bd" => Unit::Bd,
        "w" | "week" | "weeks" => Unit::W,
        "mo" | "month" | "months" => Unit::Mo,
        "y" | "year" | "years" => Unit::Y,
        _ => return None,
    })
}

const UNITS_HINT: &str =
    "units are ms, s, m, h, d, bd, w, mo, y (or long spellings such as `minutes`, `business days`)";

/// The hint for a word that is not a unit.
fn unknown_unit_hint(word: &str) -> String {
    if word == "M" {
        return "`M` is not a unit: use `mo` for months or `m` for minutes".into();
    }
    let lower = word.to_ascii_lowercase();
    if lower == "businessday" || lower == "businessdays" {
        return format!("`{word}` is not a unit: write `business days` (with a space) or `bd`");
    }
    if unit_from_word(&lower).is_some() || lower == "business" {
        return format!("`{word}` is not a unit: units are lower case, write `{lower}`");
    }
    format!("`{word}` is not a unit: {UNITS_HINT}")
}

impl Duration {
    /// A fixed duration of `ms` milliseconds (a JSON number).
    pub fn from_millis(ms: u64) -> Duration {
        Duration {
            fixed_ms: ms,
            ..Duration::default()
        }
    }

    /// True when there is no (non-zero) calendar part: the duration is elapsed time whatever the
    /// zone. `jitter` accepts only these (docs/flows.md, "Timeouts"); `0d20m` counts as fixed.
    pub fn is_fixed(&self) -> bool {
        self.years == 0
            && self.months == 0
            && self.weeks == 0
            && self.days == 0
            && self.business_days == 0
    }

    /// True for `0s`, `0d`, `0bd`…: no wait at all.
    pub fn is_zero(&self) -> bool {
        self.is_fixed() && self.fixed_ms == 0
    }

    /// Reads a duration slot's JSON value: a number is milliseconds (a non-negative integer), a
    /// string is the grammar; anything else is `BAD_SCHEMA`.
    pub fn from_json(v: &serde_json::Value) -> Result<Duration, TimingError> {
        use serde_json::Value;
        match v {
            Value::String(s) => Duration::parse(s),
            Value::Number(n) => {
                let text = n.to_string();
                let bad = |hint: &str| {
                    Err(TimingError::new(Code::BadDuration, text.clone(), None, hint))
                };
                let ms = if let Some(u) = n.as_u64() {
                    u
                } else if n.as_i64().is_some() {
                    return bad("a duration cannot be negative: give a number of milliseconds of 0 or more, e.g. 30000");
                } else {
                    match n.as_f64() {
                        Some(f) if f.is_finite() && f >= 0.0 && f.fract() == 0.0 && f <= 9.0e15 => {
                            f as u64
                        }
                        Some(f) if f < 0.0 => return bad("a duration cannot be negative: give a number of milliseconds of 0 or more, e.g. 30000"),
                        _ => return bad("a number is milliseconds and must be a whole number, e.g. 30000; for fractions of a unit write a string such as \"1.5s\""),
                    }
                };
                if ms > MAX_DAYS * MS_PER_DAY {
                    return bad(&format!(
                        "too large: a duration is at most {MAX_YEARS} years"
                    ));
                }
                Ok(Duration::from_millis(ms))
            }
            _ => Err(TimingError::new(
                Code::BadSchema,
                v.to_string(),
                None,
                "a duration is a string such as \"2h30m\" or \"2bd\", or an unquoted number of milliseconds such as 30000",
            )),
        }
    }

    /// Parses the string grammar (see the module docs). Refusals: `BAD_DURATION` with the byte
    /// position of the offending part, `QUOTED_NUMBER` for a bare number, and
    /// `INTERPOLATION_REFUSED` for `${…}`.
    pub fn parse(text: &str) -> Result<Duration, TimingError> {
        Parser { text, pos: 0 }.parse()
    }

    /// The longest elapsed time this duration can take from any start, for plan limits
    /// (docs/flows.md, "Plan limits" `WAIT_EXCEEDS_LIMIT`). The bound, per part:
    /// - years and months together: the most days that many months span from the first of any
    ///   month of the 400-year Gregorian cycle (`1mo` = 31 days, `1y` = 366, `13mo` = 397): exact,
    ///   since the end-of-month clamp only shortens a span;
    /// - weeks and days: exactly that many calendar days;
    /// - business days: the most calendar days that many weekdays span from any weekday (`1bd` =
    ///   3 days from a Friday, `5bd` = 7), plus one business day for each weekday holiday that
    ///   can fall inside such a span (a holiday delays the result by at most one business day):
    ///   the most weekday holidays in any window of that many days, grown until it is stable, so
    ///   holidays years away from each other do not add up;
    /// - fixed units: themselves.
    ///
    /// Calendar days count as 24 hours: DST is deliberately not added. A plan limit is written in
    /// the same calendar terms (`max_wait: 7d`), and a `7d` wait is exactly that limit on every
    /// date, even across a fall-back night when it lasts 169 elapsed hours. The part left out is
    /// at most the zone's offset change (one hour in practice; 30 minutes on Lord Howe).
    pub fn max_span(&self, h: &Holidays) -> chrono::Duration {
        let months = self.years as u64 * 12 + self.months as u64;
        let mut days = max_days_for_months(months) + self.weeks as u64 * 7 + self.days as u64;
        if self.business_days > 0 {
            days += max_business_span_days(self.business_days as u64, h);
        }
        chrono::Duration::milliseconds((days * MS_PER_DAY + self.fixed_ms) as i64)
    }

    /// `t` plus this duration in `zone` (docs/timing.md, "Durations" and "Daylight-saving changes"): years and months together with the
    /// end-of-month clamp, then weeks and days as calendar days, then business days (skipping
    /// `h`), all on the local date with the time of day kept; the local wall time back to an
    /// instant by docs/timing.md, "Daylight-saving changes"; then the fixed part as elapsed time. Without a calendar part there is no
    /// wall-clock round trip, so `1h` from the second 02:30 of a fall-back night is 03:30.
    ///
    /// Saturates at chrono's last instant if the result cannot be represented (only possible
    /// for a `t` near the year 262000: parsed durations are at most [`MAX_YEARS`]).
    pub fn add_to(&self, t: DateTime<Utc>, zone: &Zone, h: &Holidays) -> DateTime<Utc> {
        let base = if self.is_fixed() {
            t
        } else {
            let local = zone.to_local(t);
            match self.add_calendar(local.date(), h) {
                Some(date) => zone.to_instant(date.and_time(local.time())),
                None => return DateTime::<Utc>::MAX_UTC,
            }
        };
        i64::try_from(self.fixed_ms)
            .ok()
            .and_then(|ms| base.checked_add_signed(chrono::Duration::milliseconds(ms)))
            .unwrap_or(DateTime::<Utc>::MAX_UTC)
    }

    /// The calendar part applied to a local date.
    fn add_calendar(&self, date: NaiveDate, h: &Holidays) -> Option<NaiveDate> {
        let months = self.years.checked_mul(12)?.checked_add(self.months)?;
        let date = date.checked_add_months(Months::new(months))?;
        let days = (self.weeks as u64) * 7 + self.days as u64;
        let date = date.checked_add_days(Days::new(days))?;
        if self.business_days == 0 {
            return Some(date);
        }
        let out = add_business_days(date, self.business_days, h);
        (out != NaiveDate::MAX).then_some(out)
    }
}

/// The most calendar days `n` business days can span from any start, given the holidays.
///
/// `k` weekday holidays inside the span push it to at most `n + k` weekdays, and a span of `L`
/// days holds at most the largest count of weekday holidays in any `L` consecutive days; start
/// from `k = 0` and grow until stable (`k` only grows and is bounded by the holiday count).
fn max_business_span_days(n: u64, h: &Holidays) -> u64 {
    let weekday_holidays: Vec<NaiveDate> = h
        .iter()
        .copied()
        .filter(|d| d.weekday().num_days_from_monday() < 5)
        .collect();
    let mut k = 0u64;
    loop {
        let span = max_weekday_span_days(n + k);
        // Sliding window: most holidays with pairwise distance < span (i.e. in span days).
        let mut most = 0u64;
        let mut lo = 0usize;
        for hi in 0..weekday_holidays.len() {
            while (weekday_holidays[hi] - weekday_holidays[lo]).num_days() as u64 >= span {
                lo += 1;
            }
            most = most.max((hi - lo + 1) as u64);
        }
        if most <= k {
            return span;
        }
        k = most;
    }
}

/// The most days `n` months can span, over every start month of the 400-year Gregorian cycle.
fn max_days_for_months(n: u64) -> u64 {
    const CYCLE_MONTHS: u64 = 4800;
    const CYCLE_DAYS: u64 = 146_097;
    if n == 0 {
        return 0;
    }
    // prefix[k] = days from 2000-01-01 to the first of the k-th month after it, k in 0..=9600.
    static PREFIX: OnceLock<Vec<u64>> = OnceLock::new();
    let prefix = PREFIX.get_or_init(|| {
        let base = NaiveDate::from_ymd_opt(2000, 1, 1).expect("valid date");
        (0..=2 * CYCLE_MONTHS)
            .map(|k| {
                let d = NaiveDate::from_ymd_opt(2000 + (k / 12) as i32, (k % 12) as u32 + 1, 1)
                    .expect("valid date");
                (d - base).num_days() as u64
            })
            .collect()
    });
    let r = (n % CYCLE_MONTHS) as usize;
    let whole = (n / CYCLE_MONTHS) * CYCLE_DAYS;
    if r == 0 {
        return whole;
    }
    whole
        + (0..CYCLE_MONTHS as usize)
            .map(|s| prefix[s + r] - prefix[s])
            .max()
            .unwrap_or(0)
}

impl fmt::Display for Duration {
    /// The canonical spelling, e.g. `1mo2d1h30m`; `0s` for zero.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut any = false;
        for (n, sym) in [
            (self.years as u64, "y"),
            (self.months as u64, "mo"),
            (self.weeks as u64, "w"),
            (self.days as u64, "d"),
            (self.business_days as u64, "bd"),
            (self.fixed_ms / 3_600_000, "h"),
            (self.fixed_ms / 60_000 % 60, "m"),
            (self.fixed_ms / 1000 % 60, "s"),
            (self.fixed_ms % 1000, "ms"),
        ] {
            if n > 0 {
                write!(f, "{n}{sym}")?;
                any = true;
            }
        }
        if !any {
            f.write_str("0s")?;
        }
        Ok(())
    }
}

struct Parser<'a> {
    text: &'a str,
    pos: usize,
}

impl Parser<'_> {
    fn err(&self, code: Code, position: usize, hint: impl Into<String>) -> TimingError {
        TimingError::new(code, self.text, Some(position), hint)
    }

    fn bad(&self, position: usize, hint: impl Into<String>) -> TimingError {
        self.err(Code::BadDuration, position, hint)
    }

    fn byte(&self) -> Option<u8> {
        self.text.as_bytes().get(self.pos).copied()
    }

    fn skip_spaces(&mut self) {
        while self.byte() == Some(b' ') {
            self.pos += 1;
        }
    }

    fn take_while(&mut self, f: impl Fn(u8) -> bool) -> &str {
        let start = self.pos;
        while self.byte().is_some_and(&f) {
            self.pos += 1;
        }
        &self.text[start..self.pos]
    }

    fn parse(mut self) -> Result<Duration, TimingError> {
        let text = self.text;
        if let Some(p) = text.find("${") {
            return Err(self.err(
                Code::InterpolationRefused,
                p,
                "`${…}` interpolation is refused in a timing slot: it produces a string; write a literal such as `2h30m`, or an expression `$: input.wait_ms` (a number of milliseconds) in a flow",
            ));
        }
        let trimmed_start = text.len() - text.trim_start_matches(' ').len();
        if text[trimmed_start..].starts_with("$:") {
            return Err(self.bad(
                trimmed_start,
                "`$:` expressions are accepted only in a flow's timing slots, where they must infer to a number of milliseconds; here write a literal duration such as `30m`",
            ));
        }
        if text.trim_matches(' ').is_empty() {
            return Err(self.bad(
                0,
                "the duration is empty: write one such as `30m`, `2h30m` or `2bd` (`0s` for no wait)",
            ));
        }
        let core = text.trim_matches(' ');
        let is_number = {
            let mut parts = core.splitn(2, '.');
            let int = parts.next().unwrap_or("");
            let frac = parts.next();
            !int.is_empty()
                && int.bytes().all(|b| b.is_ascii_digit())
                && frac.is_none_or(|f| !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit()))
        };
        if is_number {
            return Err(self.err(
                Code::QuotedNumber,
                trimmed_start,
                format!("a quoted number is refused: \"{core}\" could mean milliseconds or seconds; write it unquoted ({core}) for milliseconds, or add a unit such as `{core}s`"),
            ));
        }

        let mut out = Duration::default();
        let mut seen: [Option<usize>; 9] = [None; 9];
        let mut fixed: u128 = 0; // in 10^-18 ms
        let mut last_fraction: Option<usize> = None;
        loop {
            self.skip_spaces();
            let Some(c) = self.byte() else { break };
            let start = self.pos;
            if c == b'-' {
                return Err(self.bad(
                    start,
                    "a duration cannot be negative: write it without `-`, e.g. `30m`",
                ));
            }
            if c == b'+' {
                return Err(self.bad(start, "write a duration without a sign, e.g. `30m`"));
            }
            if c.is_ascii_alphabetic() {
                let word = self.take_while(|b| b.is_ascii_alphabetic()).to_string();
                let hint = if unit_from_word(&word).is_some() || word == "business" {
                    format!("expected a number before `{word}`, e.g. `2{word}`")
                } else {
                    format!(
                        "expected a number, then a unit; {}",
                        unknown_unit_hint(&word)
                    )
                };
                return Err(self.bad(start, hint));
            }
            if !c.is_ascii_digit() {
                return Err(self.unexpected(start));
            }
            // The number: digits, optionally `.digits`.
            let int = self.take_while(|b| b.is_ascii_digit()).to_string();
            let mut frac: Option<String> = None;
            if self.byte() == Some(b'.') {
                self.pos += 1;
                let f = self.take_while(|b| b.is_ascii_digit()).to_string();
                if f.is_empty() {
                    return Err(self.bad(
                        self.pos - 1,
                        "a decimal point needs digits on both sides, e.g. `1.5h`",
                    ));
                }
                frac = Some(f);
            } else if self.byte() == Some(b',')
                && self
                    .text
                    .as_bytes()
                    .get(self.pos + 1)
                    .is_some_and(|b| b.is_ascii_digit())
            {
                return Err(self.bad(self.pos, "use a decimal point, not a comma: `1.5h`"));
            }
            let number_text = &text[start..self.pos];
            self.skip_spaces();
            let unit_start = self.pos;
            let word = self.take_while(|b| b.is_ascii_alphabetic()).to_string();
            if word.is_empty() {
                return Err(match self.byte() {
                    None => self.bad(
                        start,
                        format!("`{number_text}` has no unit: add one, e.g. `{number_text}m` or `{number_text}s` ({UNITS_HINT})"),
                    ),
                    Some(_) => self.unexpected(self.pos),
                });
            }
            let unit = if word == "business" {
                let save = self.pos;
                self.skip_spaces();
                let next = self.take_while(|b| b.is_ascii_alphabetic()).to_string();
                if save == self.pos || !(next == "day" || next == "days") {
                    return Err(self.bad(unit_start, "write `business days` (or `bd`)"));
                }
                Unit::Bd
            } else {
                match unit_from_word(&word) {
                    Some(u) => u,
                    None => return Err(self.bad(unit_start, unknown_unit_hint(&word))),
                }
            };
            if let Some(first) = seen[unit.index()] {
                return Err(self.bad(
                    start,
                    format!("`{}` is given twice (first at position {first}): write each unit once, e.g. `2h30m`", unit.symbol()),
                ));
            }
            seen[unit.index()] = Some(start);

            let int_digits = int.trim_start_matches('0');
            if int_digits.len() > MAX_INT_DIGITS {
                return Err(self.too_large(start));
            }
            let int_value: u64 = if int_digits.is_empty() {
                0
            } else {
                int_digits.parse().expect("digits")
            };
            match unit.fixed_ms() {
                Some(per) => {
                    let frac_scaled: u128 = match &frac {
                        None => 0,
                        Some(f) => {
                            let f = f.trim_end_matches('0');
                            if f.len() > SCALE_DIGITS {
                                return Err(self.bad(start, "the fixed units must add up to a whole number of milliseconds: use fewer decimal places"));
                            }
                            if f.is_empty() {
                                0
                            } else {
                                f.parse::<u128>().expect("digits")
                                    * 10u128.pow((SCALE_DIGITS - f.len()) as u32)
                            }
                        }
                    };
                    if frac_scaled * per as u128 % SCALE != 0 {
                        last_fraction = Some(start);
                    }
                    fixed += (int_value as u128 * SCALE + frac_scaled) * per as u128;
                    if fixed / SCALE > (MAX_DAYS * MS_PER_DAY) as u128 {
                        return Err(self.too_large(start));
                    }
                }
                None => {
                    if frac.is_some() {
                        return Err(self.bad(
                            start,
                            format!("`{number_text}{}`: a decimal part is allowed on fixed units only (ms, s, m, h); use a whole number of {}, or a fixed unit such as `36h`", unit.symbol(), long_name(unit)),
                        ));
                    }
                    if int_value > unit.max_count() {
                        return Err(self.too_large(start));
                    }
                    let v = int_value as u32;
                    match unit {
                        Unit::Y => out.years = v,
                        Unit::Mo => out.months = v,
                        Unit::W => out.weeks = v,
                        Unit::D => out.days = v,
                        Unit::Bd => out.business_days = v,
                        _ => unreachable!("fixed units handled above"),
                    }
                }
            }
            // A term must be followed by a space, the next number, or the end.
            match self.byte() {
                None | Some(b' ') => {}
                Some(b) if b.is_ascii_digit() => {}
                Some(_) => return Err(self.unexpected(self.pos)),
            }
        }
        if fixed % SCALE != 0 {
            return Err(self.bad(
                last_fraction.unwrap_or(0),
                "the fixed units must add up to a whole number of milliseconds (`1.5ms` is refused): round to whole milliseconds, e.g. `2ms`, or use a larger unit such as `1.5s`",
            ));
        }
        out.fixed_ms = (fixed / SCALE) as u64;
        let nominal_days = max_days_for_months(out.years as u64 * 12 + out.months as u64)
            + out.weeks as u64 * 7
            + out.days as u64
            + max_weekday_span_days(out.business_days as u64)
            + out.fixed_ms / MS_PER_DAY;
        if nominal_days > MAX_DAYS {
            return Err(TimingError::new(
                Code::BadDuration,
                text,
                None,
                format!("too large: a duration is at most {MAX_YEARS} years"),
            ));
        }
        Ok(out)
    }

    fn too_large(&self, position: usize) -> TimingError {
        self.bad(
            position,
            format!("too large: a duration is at most {MAX_YEARS} years"),
        )
    }

    fn unexpected(&self, position: usize) -> TimingError {
        let ch = self.text[position..].chars().next().unwrap_or(' ');
        let hint = match ch {
            '\t' | '\n' | '\r' => "only plain spaces may separate terms, e.g. `2h 30m`".to_string(),
            ',' | ';' | '+' | '&' => format!("`{ch}` is not needed between terms: write them one after another, e.g. `2h30m` or `2h 30m`"),
            _ => format!("unexpected `{ch}`: a duration is number-and-unit terms such as `2h30m`, `1mo15d` or `30 seconds`"),
        };
        self.bad(position, hint)
    }
}

fn long_name(u: Unit) -> &'static str {
    match u {
        Unit::D => "days",
        Unit::Bd => "business days",
        Unit::W => "weeks",
        Unit::Mo => "months",
        Unit::Y => "years",
        _ => "units",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn utc(y: i32, mo: u32, d: u32, h: u32, mi: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(y, mo, d, h, mi, 0).unwrap()
    }

    fn zone(name: &str) -> Zone {
        Zone::parse(name).unwrap()
    }

    fn add(text: &str, t: DateTime<Utc>, z: &str) -> DateTime<Utc> {
        Duration::parse(text)
            .unwrap()
            .add_to(t, &zone(z), &Holidays::none())
    }

    fn dur(years: u32, months: u32, weeks: u32, days: u32, bd: u32, ms: u64) -> Duration {
        Duration {
            years,
            months,
            weeks,
            days,
            business_days: bd,
            fixed_ms: ms,
        }
    }

    #[test]
    fn accepted_spellings() {
        for (text, want) in [
            ("2h30m", dur(0, 0, 0, 0, 0, 9_000_000)),
            ("30m2h", dur(0, 0, 0, 0, 0, 9_000_000)),
            ("7d", dur(0, 0, 0, 7, 0, 0)),
            ("1mo15d", dur(0, 1, 0, 15, 0, 0)),
            ("15d1mo", dur(0, 1, 0, 15, 0, 0)),
            ("2bd", dur(0, 0, 0, 0, 2, 0)),
            ("30 seconds", dur(0, 0, 0, 0, 0, 30_000)),
            ("1.5 hours", dur(0, 0, 0, 0, 0, 5_400_000)),
            ("2 weeks", dur(0, 0, 2, 0, 0, 0)),
            ("1 business day", dur(0, 0, 0, 0, 1, 0)),
            ("3 business  days 2h", dur(0, 0, 0, 0, 3, 7_200_000)),
            ("1y2mo3w4d5bd6h7m8s9ms", dur(1, 2, 3, 4, 5, 22_028_009)),
            (
                "1 year 1 month 1 week 1 day 1 hour 1 minute 1 second 1 millisecond",
                dur(1, 1, 1, 1, 0, 3_661_001),
            ),
            (
                "2 years 3 months 2 days 2 hrs 5 mins 3 secs 4 milliseconds",
                dur(2, 3, 0, 2, 0, 7_503_004),
            ),
            ("1hr 1sec", dur(0, 0, 0, 0, 0, 3_601_000)),
            ("1 min", dur(0, 0, 0, 0, 0, 60_000)),
            ("0s", dur(0, 0, 0, 0, 0, 0)),
            ("0bd", dur(0, 0, 0, 0, 0, 0)),
            (" 5m ", dur(0, 0, 0, 0, 0, 300_000)),
            ("0.5s", dur(0, 0, 0, 0, 0, 500)),
            ("1.0005s 0.5ms", dur(0, 0, 0, 0, 0, 1001)),
            ("0.001s", dur(0, 0, 0, 0, 0, 1)),
            ("1.25m", dur(0, 0, 0, 0, 0, 75_000)),
            ("1.50000000000000000000h", dur(0, 0, 0, 0, 0, 5_400_000)),
            ("007m", dur(0, 0, 0, 0, 0, 420_000)),
        ] {
            assert_eq!(Duration::parse(text), Ok(want), "{text}");
        }
    }

    #[test]
    fn refusals_have_code_position_and_fix() {
        use Code::*;
        for (text, code, position, needle) in [
            ("", BadDuration, Some(0), "`30m`"),
            ("   ", BadDuration, Some(0), "`30m`"),
            (
                "2M",
                BadDuration,
                Some(1),
                "use `mo` for months or `m` for minutes",
            ),
            (
                "M",
                BadDuration,
                Some(0),
                "use `mo` for months or `m` for minutes",
            ),
            ("2H", BadDuration, Some(1), "write `h`"),
            ("3D", BadDuration, Some(1), "write `d`"),
            ("10S", BadDuration, Some(2), "write `s`"),
            ("1MO", BadDuration, Some(1), "write `mo`"),
            ("2Hours", BadDuration, Some(1), "write `hours`"),
            ("1h 2BD", BadDuration, Some(4), "write `bd`"),
            ("5 fortnights", BadDuration, Some(2), "units are ms, s, m"),
            (
                "1 businessday",
                BadDuration,
                Some(2),
                "`business days` (with a space) or `bd`",
            ),
            (
                "1 businessdays",
                BadDuration,
                Some(2),
                "`business days` (with a space) or `bd`",
            ),
            ("1 business", BadDuration, Some(2), "`business days`"),
            ("1 business week", BadDuration, Some(2), "`business days`"),
            ("1.5d", BadDuration, Some(0), "fixed units only"),
            ("2h 1.5w", BadDuration, Some(3), "fixed units only"),
            ("0.5mo", BadDuration, Some(0), "fixed units only"),
            ("1.5bd", BadDuration, Some(0), "fixed units only"),
            (
                "1.5ms",
                BadDuration,
                Some(0),
                "whole number of milliseconds",
            ),
            (
                "1s 0.00001m",
                BadDuration,
                Some(3),
                "whole number of milliseconds",
            ),
            ("2h2h", BadDuration, Some(2), "each unit once"),
            ("1h 30m 1 hour", BadDuration, Some(7), "each unit once"),
            (
                "1 business day 2bd",
                BadDuration,
                Some(15),
                "each unit once",
            ),
            ("-5m", BadDuration, Some(0), "negative"),
            ("5m -1s", BadDuration, Some(3), "negative"),
            ("+5m", BadDuration, Some(0), "without a sign"),
            ("2h30", BadDuration, Some(2), "`30` has no unit"),
            ("h", BadDuration, Some(0), "number before `h`"),
            ("1.h", BadDuration, Some(1), "digits on both sides"),
            (".5h", BadDuration, Some(0), "unexpected `.`"),
            ("1,5h", BadDuration, Some(1), "decimal point"),
            ("2h,30m", BadDuration, Some(2), "not needed between terms"),
            ("2h\t30m", BadDuration, Some(2), "plain spaces"),
            ("2h30m!", BadDuration, Some(5), "unexpected `!`"),
            ("10001y", BadDuration, Some(0), "too large"),
            ("99999999999999999999h", BadDuration, Some(0), "too large"),
            ("5000y 5000y", BadDuration, Some(6), "each unit once"),
            ("9000y 20000mo", BadDuration, None, "too large"),
            (
                "30000",
                QuotedNumber,
                Some(0),
                "unquoted (30000) for milliseconds",
            ),
            (" 30000 ", QuotedNumber, Some(1), "add a unit"),
            ("1.5", QuotedNumber, Some(0), "unquoted"),
            (
                "${input.wait}",
                InterpolationRefused,
                Some(0),
                "`$: input.wait_ms`",
            ),
            ("2h${x}", InterpolationRefused, Some(2), "interpolation"),
            (
                "$: input.wait_ms",
                BadDuration,
                Some(0),
                "only in a flow's timing slots",
            ),
            (
                "  $:input.x",
                BadDuration,
                Some(2),
                "only in a flow's timing slots",
            ),
        ] {
            let err = Duration::parse(text).unwrap_err();
            assert_eq!(err.code, code, "{text:?}: {err}");
            assert_eq!(err.position, position, "{text:?}: {err}");
            assert!(
                err.hint.contains(needle),
                "{text:?}: hint {:?} lacks {needle:?}",
                err.hint
            );
            assert_eq!(err.text, text);
        }
    }

    #[test]
    fn json_numbers_are_milliseconds() {
        use serde_json::json;
        assert_eq!(
            Duration::from_json(&json!(30000)),
            Ok(Duration::from_millis(30_000))
        );
        assert_eq!(Duration::from_json(&json!(0)), Ok(Duration::from_millis(0)));
        assert_eq!(
            Duration::from_json(&json!(30000.0)),
            Ok(Duration::from_millis(30_000))
        );
        assert_eq!(Duration::from_json(&json!("2bd")).unwrap().business_days, 2);
        for (v, code, needle) in [
            (json!(-1), Code::BadDuration, "negative"),
            (json!(-1.5), Code::BadDuration, "negative"),
            (json!(1.5), Code::BadDuration, "whole number"),
            (json!(1e300), Code::BadDuration, "whole number"),
            (json!(u64::MAX), Code::BadDuration, "too large"),
            (json!("30000"), Code::QuotedNumber, "unquoted"),
            (
                json!(true),
                Code::BadSchema,
                "unquoted number of milliseconds",
            ),
            (json!(null), Code::BadSchema, "a string such as"),
            (json!({"for": "1h"}), Code::BadSchema, "a string such as"),
        ] {
            let err = Duration::from_json(&v).unwrap_err();
            assert_eq!(err.code, code, "{v}");
            assert!(err.hint.contains(needle), "{v}: {}", err.hint);
        }
    }

    #[test]
    fn display_is_canonical_and_parses_back() {
        for text in [
            "2h30m",
            "1y2mo3w4d5bd6h7m8s9ms",
            "0s",
            "90 minutes",
            "1.5s",
            "2 weeks 1 day",
        ] {
            let d = Duration::parse(text).unwrap();
            assert_eq!(Duration::parse(&d.to_string()), Ok(d), "{text} -> {d}");
        }
        assert_eq!(Duration::parse("90 minutes").unwrap().to_string(), "1h30m");
    }

    #[test]
    fn is_fixed_means_no_calendar_part() {
        assert!(Duration::parse("20m").unwrap().is_fixed());
        assert!(Duration::parse("0d20m").unwrap().is_fixed());
        assert!(!Duration::parse("1d").unwrap().is_fixed());
        assert!(!Duration::parse("1bd").unwrap().is_fixed());
        assert!(Duration::parse("0bd").unwrap().is_zero());
    }

    // Expected instants below were computed with Python's zoneinfo (fold=0 for the wall clock
    // after the calendar step) and numpy.busday_offset, independently of this code.

    #[test]
    fn a_day_across_dst_keeps_the_wall_clock() {
        // Prague springs forward on 2026-03-29: 12:00 CET -> 12:00 CEST is 23 hours.
        assert_eq!(
            add("1d", utc(2026, 3, 28, 11, 0), "Europe/Prague"),
            utc(2026, 3, 29, 10, 0)
        );
        // ... and falls back on 2026-10-25: 25 hours.
        assert_eq!(
            add("1d", utc(2026, 10, 24, 10, 0), "Europe/Prague"),
            utc(2026, 10, 25, 11, 0)
        );
        // 24h is elapsed time.
        assert_eq!(
            add("24h", utc(2026, 3, 28, 11, 0), "Europe/Prague"),
            utc(2026, 3, 29, 11, 0)
        );
        // A kept wall clock that falls in the gap moves forward: 02:30 -> 03:30 CEST.
        assert_eq!(
            add("1d", utc(2026, 3, 28, 1, 30), "Europe/Prague"),
            utc(2026, 3, 29, 1, 30)
        );
        // New York, 2026-03-08: 02:30 does not exist.
        assert_eq!(
            add("1d", utc(2026, 3, 7, 7, 30), "America/New_York"),
            utc(2026, 3, 8, 7, 30)
        );
        // Sydney springs forward on 2026-10-04, Lord Howe by 30 minutes the same night.
        assert_eq!(
            add("1d", utc(2026, 10, 2, 16, 30), "Australia/Sydney"),
            utc(2026, 10, 3, 16, 30)
        );
        assert_eq!(
            add("1d", utc(2026, 10, 2, 15, 45), "Australia/Lord_Howe"),
            utc(2026, 10, 3, 15, 45)
        );
    }

    #[test]
    fn a_fold_takes_the_first_occurrence() {
        // 2026-10-24 02:30 CEST + 1d = 2026-10-25 02:30, first occurrence (CEST) = 00:30Z.
        assert_eq!(
            add("1d", utc(2026, 10, 24, 0, 30), "Europe/Prague"),
            utc(2026, 10, 25, 0, 30)
        );
        // From the second 02:30 (01:30Z), a calendar day on is 02:30 CET of the 26th.
        assert_eq!(
            add("1d", utc(2026, 10, 25, 1, 30), "Europe/Prague"),
            utc(2026, 10, 26, 1, 30)
        );
        // New York 2026-11-01 01:30 happens twice: the first is 05:30Z.
        assert_eq!(
            add("1d", utc(2026, 10, 31, 5, 30), "America/New_York"),
            utc(2026, 11, 1, 5, 30)
        );
        // Sydney 2026-04-05 02:30 twice: first 15:30Z (Apr 4); Lord Howe 01:45 twice: 14:45Z.
        assert_eq!(
            add("1w", utc(2026, 3, 28, 15, 30), "Australia/Sydney"),
            utc(2026, 4, 4, 15, 30)
        );
        assert_eq!(
            add("1d", utc(2026, 4, 3, 14, 45), "Australia/Lord_Howe"),
            utc(2026, 4, 4, 14, 45)
        );
    }

    #[test]
    fn zero_calendar_part_skips_the_round_trip() {
        // docs/timing.md, "Daylight-saving changes": 1h from the second 02:30 (01:30Z) is 02:30Z, not a re-reading of 03:30.
        let second = utc(2026, 10, 25, 1, 30);
        assert_eq!(add("1h", second, "Europe/Prague"), utc(2026, 10, 25, 2, 30));
        assert_eq!(
            add("0d1h", second, "Europe/Prague"),
            utc(2026, 10, 25, 2, 30)
        );
        assert_eq!(add("0bd", second, "Europe/Prague"), second);
        assert_eq!(add("0s", second, "Europe/Prague"), second);
        // With a calendar part the fixed units follow the wall-clock round trip.
        assert_eq!(
            add("1d1h", second, "Europe/Prague"),
            utc(2026, 10, 26, 2, 30)
        );
    }

    #[test]
    fn months_clamp_to_the_end_of_the_month() {
        assert_eq!(
            add("1mo", utc(2026, 1, 31, 9, 0), "Europe/Prague"),
            utc(2026, 2, 28, 9, 0)
        );
        assert_eq!(
            add("1mo", utc(2028, 1, 31, 9, 0), "UTC"),
            utc(2028, 2, 29, 9, 0)
        );
        assert_eq!(
            add("1y", utc(2028, 2, 29, 9, 0), "UTC"),
            utc(2029, 2, 28, 9, 0)
        );
        assert_eq!(
            add("4y", utc(2028, 2, 29, 9, 0), "UTC"),
            utc(2032, 2, 29, 9, 0)
        );
        // Years and months first, then days, whatever the written order: 31 Jan + 1mo1d = 1 Mar.
        assert_eq!(
            add("1mo1d", utc(2026, 1, 31, 9, 0), "UTC"),
            utc(2026, 3, 1, 9, 0)
        );
        assert_eq!(
            add("1d1mo", utc(2026, 1, 31, 9, 0), "UTC"),
            utc(2026, 3, 1, 9, 0)
        );
        // Years and months together: 31 Jan 2027 + 1y1mo = 29 Feb 2028.
        assert_eq!(
            add("1y1mo", utc(2027, 1, 31, 9, 0), "UTC"),
            utc(2028, 2, 29, 9, 0)
        );
        // Prague, 31 Jan 11:00 CET + 1mo15d2h = 15 Mar 13:00 CET = 12:00Z.
        assert_eq!(
            add("1mo15d2h", utc(2026, 1, 31, 10, 0), "Europe/Prague"),
            utc(2026, 3, 15, 12, 0)
        );
    }

    #[test]
    fn business_days_step_over_weekends_and_holidays() {
        let z = zone("Europe/Prague");
        let none = Holidays::none();
        let d = |t: &str| Duration::parse(t).unwrap();
        // Fri 2026-03-06 10:00 CET (09:00Z) + 1bd = Mon 10:00; from Saturday too.
        assert_eq!(
            d("1bd").add_to(utc(2026, 3, 6, 9, 0), &z, &none),
            utc(2026, 3, 9, 9, 0)
        );
        assert_eq!(
            d("1bd").add_to(utc(2026, 3, 7, 9, 0), &z, &none),
            utc(2026, 3, 9, 9, 0)
        );
        assert_eq!(
            d("0bd").add_to(utc(2026, 3, 7, 9, 0), &z, &none),
            utc(2026, 3, 7, 9, 0)
        );
        // Across the spring-forward weekend the wall clock is kept: Fri 02:30 CET -> Mon 02:30
        // CEST (00:30Z).
        assert_eq!(
            d("1bd").add_to(utc(2026, 3, 27, 1, 30), &z, &none),
            utc(2026, 3, 30, 0, 30)
        );
        let xmas = Holidays::parse(&["2026-12-24", "2026-12-25"]).unwrap();
        assert_eq!(
            d("1bd").add_to(utc(2026, 12, 23, 9, 0), &z, &xmas),
            utc(2026, 12, 28, 9, 0)
        );
        // Business days go after days: Thu 2026-12-17 + 1d = Fri 18, + 1bd = Mon 21.
        assert_eq!(
            d("1bd1d").add_to(utc(2026, 12, 17, 9, 0), &z, &none),
            utc(2026, 12, 21, 9, 0)
        );
    }

    #[test]
    fn max_span_bounds() {
        let none = Holidays::none();
        let span = |t: &str, h: &Holidays| Duration::parse(t).unwrap().max_span(h);
        let days = chrono::Duration::days;
        assert_eq!(span("1mo", &none), days(31));
        assert_eq!(span("2mo", &none), days(62)); // July + August
        assert_eq!(span("12mo", &none), days(366));
        assert_eq!(span("1y", &none), days(366));
        assert_eq!(span("13mo", &none), days(397));
        assert_eq!(span("400y", &none), days(146_097));
        assert_eq!(span("7d", &none), days(7));
        assert_eq!(span("1w", &none), days(7));
        assert_eq!(span("1bd", &none), days(3));
        assert_eq!(span("5bd", &none), days(7));
        assert_eq!(span("2h30m", &none), chrono::Duration::minutes(150));
        assert_eq!(span("0s", &none), chrono::Duration::zero());
        // Holidays on weekdays can each cost one more business day; weekend ones cannot.
        let h = Holidays::parse(&["2026-12-24", "2026-12-25", "2026-12-26"]).unwrap();
        assert_eq!(span("5bd", &h), days(11)); // 7 business days from a Friday: Tuesday week
        assert_eq!(span("2d", &h), days(2));
        // Holidays too far apart to fall in one span count once.
        let spread = Holidays::parse(&["2026-01-01", "2026-05-01", "2026-12-24"]).unwrap();
        assert_eq!(span("5bd", &spread), days(10)); // 6 business days from a Friday
                                                    // A holiday that lengthens the span can pull the next one in (Mondays a week apart:
                                                    // from Friday 27 February, 5bd skips 2 and 9 March and lands on Tuesday 10 March).
        let chain = Holidays::parse(&["2026-03-02", "2026-03-09", "2026-03-16"]).unwrap();
        assert_eq!(span("5bd", &chain), span("7bd", &none));
        assert_eq!(span("5bd", &chain), days(11));
        // The plan-limit comparison of docs/flows.md, "Plan limits": 7d and 5bd fit max_wait 7d, 6bd does not.
        assert!(span("7d", &none) <= days(7));
        assert!(span("5bd", &none) <= days(7));
        assert!(span("6bd", &none) > days(7));
    }

    #[test]
    fn max_span_covers_every_start() {
        // For every start day over a leap cycle, the elapsed time stays within the bound, and
        // reaches it (the bound is tight).
        let none = Holidays::none();
        for text in ["1mo", "2mo", "1y", "1y1mo", "11mo", "3bd", "1mo2bd"] {
            let d = Duration::parse(text).unwrap();
            let bound = d.max_span(&none);
            let mut worst = chrono::Duration::zero();
            let mut t = utc(2027, 1, 1, 12, 0);
            while t < utc(2031, 1, 1, 12, 0) {
                worst = worst.max(d.add_to(t, &Zone::Utc, &none) - t);
                t += chrono::Duration::days(1);
            }
            if text == "1mo2bd" {
                // The month and the business days reach their worst on different starts.
                assert!(worst <= bound, "{text}");
            } else {
                assert_eq!(worst, bound, "{text}");
            }
        }
    }

    #[test]
    fn huge_values_do_not_overflow() {
        let d = Duration::parse("10000y").unwrap();
        let t = utc(2026, 1, 1, 0, 0);
        assert_eq!(
            d.add_to(t, &Zone::Utc, &Holidays::none()),
            utc(12026, 1, 1, 0, 0)
        );
        let far = Duration::parse("2600000bd").unwrap();
        assert!(far.add_to(t, &zone("Europe/Prague"), &Holidays::none()) > t);
        let late = DateTime::<Utc>::MAX_UTC - chrono::Duration::days(1);
        assert_eq!(
            d.add_to(late, &Zone::Utc, &Holidays::none()),
            DateTime::<Utc>::MAX_UTC
        );
    }
}
