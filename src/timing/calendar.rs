//! Calendar patterns (docs/timing.md, "Instants" and "Daylight-saving changes"): the systemd `OnCalendar` subset
//! `[weekdays] [Y-M-D] H:M[:S]`, and the next match after an instant in a zone.
//!
//! Each date or time field is `*`, a value, a list `a,b`, a range `a..b`, or a repetition
//! `v/step` (also `a..b/step`), as systemd reads them: `0/5` is 0, 5, 10, … up to the field's
//! maximum. Like systemd (checked with `systemd-analyze calendar` 255), `*/step` is refused (write
//! `0/step`, or `1/step` for a month or day), years are four digits from 1970 to 2199, ranges go
//! upwards, and weekdays (`mon`…`sun`, or full names, any case) form lists and upward ranges
//! (`mon..fri`, `sat,sun`). Seconds default to `00`; an omitted date is `*-*-*`. Not in the
//! subset (refused with a hint): shorthands (`daily`), a missing time, `M-D` dates, `~` (days from
//! the end of a month), fractional seconds, and a zone inside the pattern (it goes in `tz`).
//!
//! Matching (docs/timing.md, "Daylight-saving changes"): every matching local time maps to one instant by docs/timing.md, "Daylight-saving changes" (a repeated time at
//! its first occurrence, a skipped time moved forward by the gap), and the answer is the earliest
//! such instant strictly after `now`. Matching days are found by skipping non-matching years and
//! months and the time within a day by bit masks, so a search costs a few microseconds.

use crate::code::Code;
use crate::timing::error::TimingError;
use crate::timing::zone::Zone;
use chrono::{
    DateTime, Datelike, Days, NaiveDate, NaiveDateTime, NaiveTime, TimeZone, Timelike, Utc,
};
use std::fmt;

const MIN_YEAR: i32 = 1970;
const MAX_YEAR: i32 = 2199;
const WEEKDAYS: [&str; 7] = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"];
const WEEKDAY_NAMES: [&str; 7] = [
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
];

/// A parsed calendar pattern. Each field is a bit set of the values it matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CalendarPattern {
    text: String,
    /// Bit 0 = Monday … bit 6 = Sunday.
    weekdays: u8,
    /// Bit `y - 1970` for years 1970..=2199.
    years: [u64; 4],
    /// Bits 1..=12.
    months: u64,
    /// Bits 1..=31.
    days: u64,
    /// Bits 0..=23.
    hours: u64,
    /// Bits 0..=59.
    minutes: u64,
    /// Bits 0..=59.
    seconds: u64,
}

impl fmt::Display for CalendarPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// The lowest set bit at or above `from`.
fn next_bit(mask: u64, from: u32) -> Option<u32> {
    if from >= 64 {
        return None;
    }
    let m = mask & (u64::MAX << from);
    (m != 0).then(|| m.trailing_zeros())
}

/// The highest set bit at or below `upto`.
fn prev_bit(mask: u64, upto: u32) -> Option<u32> {
    let m = if upto >= 63 {
        mask
    } else {
        mask & ((1u64 << (upto + 1)) - 1)
    };
    (m != 0).then(|| 63 - m.leading_zeros())
}

struct Field {
    name: &'static str,
    min: u32,
    max: u32,
    /// What `*/step` should be written as.
    star_step_start: u32,
}

const MONTH: Field = Field {
    name: "months",
    min: 1,
    max: 12,
    star_step_start: 1,
};
const DAY: Field = Field {
    name: "days of the month",
    min: 1,
    max: 31,
    star_step_start: 1,
};
const HOUR: Field = Field {
    name: "hours",
    min: 0,
    max: 23,
    star_step_start: 0,
};
const MINUTE: Field = Field {
    name: "minutes",
    min: 0,
    max: 59,
    star_step_start: 0,
};
const SECOND: Field = Field {
    name: "seconds",
    min: 0,
    max: 59,
    star_step_start: 0,
};
const YEAR: Field = Field {
    name: "years",
    min: MIN_YEAR as u32,
    max: MAX_YEAR as u32,
    star_step_start: MIN_YEAR as u32,
};

struct Parser<'a> {
    text: &'a str,
}

impl Parser<'_> {
    fn bad(&self, position: usize, hint: impl Into<String>) -> TimingError {
        TimingError::new(Code::BadPattern, self.text, Some(position), hint)
    }

    /// Parses one numeric field starting at byte `at` of the pattern; returns the matched values
    /// as offsets from `field.min` in a 256-bit set.
    fn field(
        &self,
        s: &str,
        at: usize,
        field: &Field,
        year: bool,
    ) -> Result<[u64; 4], TimingError> {
        let mut set = [0u64; 4];
        let mut put = |v: u32| {
            let i = (v - field.min) as usize;
            set[i / 64] |= 1 << (i % 64);
        };
        if s.is_empty() {
            return Err(self.bad(
                at,
                format!("missing value for {}: write `*` or a number", field.name),
            ));
        }
        let mut offset = at;
        for item in s.split(',') {
            let here = offset;
            offset += item.len() + 1;
            if item.is_empty() {
                return Err(self.bad(
                    here,
                    "empty list item: write values separated by single commas, e.g. `8,12`",
                ));
            }
            if let Some(p) = item.find('~') {
                return Err(self.bad(here + p, "`~` (days counted from the end of the month) is not supported: list the days instead"));
            }
            if item.contains('.') && !item.contains("..") {
                return Err(self.bad(
                    here + item.find('.').unwrap_or(0),
                    format!(
                        "fractional values are not supported in {}: use whole numbers",
                        field.name
                    ),
                ));
            }
            let (range_part, step) = match item.split_once('/') {
                Some((r, st)) => (r, Some((st, here + r.len() + 1))),
                None => (item, None),
            };
            if range_part == "*" {
                if step.is_some() {
                    return Err(self.bad(here, format!("`*/step` is not accepted (systemd refuses it too): write `{}/step` to repeat from {}", field.star_step_start, field.star_step_start)));
                }
                for v in field.min..=field.max {
                    put(v);
                }
                continue;
            }
            let (lo_text, hi_text) = match range_part.split_once("..") {
                Some((a, b)) => (a, Some(b)),
                None => (range_part, None),
            };
            let lo = self.number(lo_text, here, field, year)?;
            let hi = match hi_text {
                Some(b) => {
                    let hi = self.number(b, here + lo_text.len() + 2, field, year)?;
                    if hi < lo {
                        return Err(self.bad(
                            here,
                            format!("a range goes upwards: write `{hi}..{lo}`, or list the values"),
                        ));
                    }
                    Some(hi)
                }
                None => None,
            };
            let step = match step {
                None => None,
                Some((st, st_at)) => {
                    if st.is_empty() || !st.bytes().all(|b| b.is_ascii_digit()) || st.len() > 4 {
                        return Err(
                            self.bad(st_at, "a repetition step is a whole number, e.g. `0/15`")
                        );
                    }
                    let n: u32 = st.parse().expect("digits");
                    if n == 0 {
                        return Err(self.bad(st_at, "a repetition step is at least 1"));
                    }
                    Some(n)
                }
            };
            match (hi, step) {
                (None, None) => put(lo),
                (Some(hi), None) => (lo..=hi).for_each(&mut put),
                (hi, Some(st)) => {
                    let end = hi.unwrap_or(field.max);
                    let mut v = lo;
                    while v <= end {
                        put(v);
                        v += st;
                    }
                }
            }
        }
        Ok(set)
    }

    fn number(&self, s: &str, at: usize, field: &Field, year: bool) -> Result<u32, TimingError> {
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
            let hint = if s.bytes().any(|b| b.is_ascii_alphabetic()) && !year && field.min == 0 {
                format!("`{s}` is not a number: times are 24-hour `HH:MM`, e.g. `09:00` or `17:30`")
            } else {
                format!("`{s}` is not a value for {}: write `*`, a number, a list `a,b`, a range `a..b` or a repetition `v/step`", field.name)
            };
            return Err(self.bad(at, hint));
        }
        if year && s.len() != 4 {
            return Err(self.bad(at, "write the year with four digits (`2026`) or `*`"));
        }
        if s.len() > 4 {
            return Err(self.bad(
                at,
                format!("{} are {} to {}", field.name, field.min, field.max),
            ));
        }
        let v: u32 = s.parse().expect("digits");
        if v < field.min || v > field.max {
            let extra = if year { " (as in systemd)" } else { "" };
            return Err(self.bad(
                at,
                format!("{} are {} to {}{extra}", field.name, field.min, field.max),
            ));
        }
        Ok(v)
    }

    fn weekdays(&self, s: &str, at: usize) -> Result<u8, TimingError> {
        let mut mask = 0u8;
        let mut offset = at;
        for item in s.split(',') {
            let here = offset;
            offset += item.len() + 1;
            if item.is_empty() {
                return Err(self.bad(
                    here,
                    "empty list item: write weekdays separated by single commas, e.g. `sat,sun`",
                ));
            }
            let (a, b) = match item.split_once("..") {
                Some((a, b)) => (a, Some(b)),
                None => (item, None),
            };
            let lo = self.weekday(a, here)?;
            match b {
                None => mask |= 1 << lo,
                Some(b) => {
                    let hi = self.weekday(b, here + a.len() + 2)?;
                    if hi < lo {
                        return Err(self.bad(here, format!("a weekday range goes from Monday towards Sunday: write `{a},…` as a list, e.g. `{a}..sun,mon..{b}`", )));
                    }
                    for d in lo..=hi {
                        mask |= 1 << d;
                    }
                }
            }
        }
        Ok(mask)
    }

    fn weekday(&self, s: &str, at: usize) -> Result<u32, TimingError> {
        let lower = s.to_ascii_lowercase();
        WEEKDAYS
            .iter()
            .position(|w| *w == lower)
            .or_else(|| WEEKDAY_NAMES.iter().position(|w| *w == lower))
            .map(|i| i as u32)
            .ok_or_else(|| self.bad(at, format!("`{s}` is not a weekday: use mon, tue, wed, thu, fri, sat or sun (any case)")))
    }
}

/// Whether a word is a weekday spelling the pattern grammar accepts (used by `until` to tell a
/// pattern from natural language).
pub(crate) fn is_weekday_list(s: &str) -> bool {
    !s.is_empty()
        && s.split(',').all(|item| {
            item.split("..").all(|w| {
                let l = w.to_ascii_lowercase();
                WEEKDAYS.contains(&l.as_str()) || WEEKDAY_NAMES.contains(&l.as_str())
            })
        })
}

/// A field of at most 60 values as a mask indexed by the value itself (`shift` = the field's
/// minimum, since `Parser::field` stores offsets from it).
fn to_u64(set: [u64; 4], shift: u32) -> u64 {
    set[0] << shift
}

impl CalendarPattern {
    /// Parses a pattern. `BAD_PATTERN` with the position and a hint for syntax errors;
    /// `NEVER_MATCHES` for a well-formed pattern no date satisfies (`*-02-30 08:00`,
    /// `mon 2026-03-03 08:00`).
    pub fn parse(text: &str) -> Result<CalendarPattern, TimingError> {
        let p = Parser { text };
        // Tokens split on spaces, with their byte offsets.
        let mut tokens: Vec<(usize, &str)> = Vec::new();
        let mut i = 0;
        for part in text.split(' ') {
            if !part.is_empty() {
                tokens.push((i, part));
            }
            i += part.len() + 1;
        }
        if tokens.is_empty() {
            return Err(p.bad(
                0,
                "the pattern is empty: write e.g. `mon..fri 08:30` or `*-*-01 08:00`",
            ));
        }
        if let Some(pos) = text.find(|c: char| c.is_whitespace() && c != ' ') {
            return Err(p.bad(pos, "separate the parts of a pattern with plain spaces"));
        }
        let mut idx = 0;
        let mut weekdays = 0x7f;
        let (at0, first) = tokens[0];
        if first
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphabetic())
        {
            let lower = first.to_ascii_lowercase();
            if [
                "minutely",
                "hourly",
                "daily",
                "weekly",
                "monthly",
                "yearly",
                "annually",
                "quarterly",
                "semiannually",
            ]
            .contains(&lower.as_str())
            {
                return Err(p.bad(at0, format!("shorthands such as `{first}` are not supported: write the pattern out, e.g. `*-*-* 00:00`")));
            }
            weekdays = p.weekdays(first, at0)?;
            idx = 1;
        }
        let mut date: Option<(usize, &str)> = None;
        if let Some(&(at, tok)) = tokens.get(idx) {
            if !tok.contains(':') && tok.contains('-') {
                date = Some((at, tok));
                idx += 1;
            }
        }
        let Some(&(time_at, time)) = tokens.get(idx) else {
            let end = text.trim_end().len();
            return Err(p.bad(
                end,
                "a pattern ends with a time of day `HH:MM[:SS]`, e.g. `mon 09:00`",
            ));
        };
        if !time.contains(':') {
            let hint = if tokens.len() > idx + 1 || time.contains('/') {
                "expected a time of day `HH:MM[:SS]` here (the order is `[weekdays] [Y-M-D] HH:MM[:SS]`)"
            } else {
                "a pattern ends with a time of day `HH:MM[:SS]`, e.g. `mon 09:00`"
            };
            return Err(p.bad(time_at, hint));
        }
        if let Some(&(extra_at, extra)) = tokens.get(idx + 1) {
            let hint = if extra.contains('/')
                || extra == "UTC"
                || extra.bytes().all(|b| b.is_ascii_alphabetic())
            {
                "a zone does not go inside the pattern: give it in the `tz` slot".to_string()
            } else {
                "unexpected text after the time: a pattern is `[weekdays] [Y-M-D] HH:MM[:SS]`"
                    .to_string()
            };
            return Err(p.bad(extra_at, hint));
        }

        let (years, months, days) = match date {
            None => ([u64::MAX; 4], (1u64 << 13) - 2, ((1u64 << 32) - 2)),
            Some((at, d)) => {
                let parts: Vec<&str> = d.split('-').collect();
                if parts.len() != 3 {
                    return Err(p.bad(
                        at,
                        "write the date as `Y-M-D`, e.g. `*-12-25` or `2026-*-01`",
                    ));
                }
                let y_at = at;
                let m_at = y_at + parts[0].len() + 1;
                let d_at = m_at + parts[1].len() + 1;
                let years = p.field(parts[0], y_at, &YEAR, true)?;
                let months = to_u64(p.field(parts[1], m_at, &MONTH, false)?, 1);
                let days = to_u64(p.field(parts[2], d_at, &DAY, false)?, 1);
                (years, months, days)
            }
        };
        let parts: Vec<&str> = time.split(':').collect();
        if parts.len() > 3 {
            return Err(p.bad(time_at, "a time is `HH:MM` or `HH:MM:SS`"));
        }
        let h_at = time_at;
        let m_at = h_at + parts[0].len() + 1;
        let hours = to_u64(p.field(parts[0], h_at, &HOUR, false)?, 0);
        let minutes = to_u64(p.field(parts[1], m_at, &MINUTE, false)?, 0);
        let seconds = match parts.get(2) {
            Some(s) => to_u64(p.field(s, m_at + parts[1].len() + 1, &SECOND, false)?, 0),
            None => 1,
        };
        let mut years = years;
        // Keep only the 230 valid year bits.
        let n_years = (MAX_YEAR - MIN_YEAR + 1) as usize;
        for (i, w) in years.iter_mut().enumerate() {
            for b in 0..64 {
                if i * 64 + b >= n_years {
                    *w &= !(1u64 << b);
                }
            }
        }
        let pattern = CalendarPattern {
            text: text.to_string(),
            weekdays,
            years,
            months,
            days,
            hours,
            minutes,
            seconds,
        };
        if !pattern.has_any_date() {
            return Err(TimingError::new(
                Code::NeverMatches,
                text,
                // Only the date part (with the weekdays) can be impossible.
                Some(date.map_or(0, |(at, _)| at)),
                "no date matches this pattern (check the day exists in the month, e.g. `*-02-30` never does, and that the weekday can fall on the date)",
            ));
        }
        Ok(pattern)
    }

    fn year_matches(&self, y: i32) -> bool {
        if !(MIN_YEAR..=MAX_YEAR).contains(&y) {
            return false;
        }
        let i = (y - MIN_YEAR) as usize;
        self.years[i / 64] & (1 << (i % 64)) != 0
    }

    fn day_matches(&self, d: NaiveDate) -> bool {
        self.months & (1 << d.month()) != 0
            && self.days & (1 << d.day()) != 0
            && self.weekdays & (1 << d.weekday().num_days_from_monday()) != 0
    }

    /// Whether any (year, month, day) in 1970..=2199 satisfies the date fields and weekdays.
    fn has_any_date(&self) -> bool {
        (MIN_YEAR..=MAX_YEAR)
            .filter(|y| self.year_matches(*y))
            .any(|y| {
                (1..=12u32)
                    .filter(|m| self.months & (1 << m) != 0)
                    .any(|m| {
                        let first = NaiveDate::from_ymd_opt(y, m, 1).expect("valid date");
                        let len = days_in_month(y, m);
                        let w1 = first.weekday().num_days_from_monday();
                        (1..=len).any(|d| {
                            self.days & (1 << d) != 0
                                && self.weekdays & (1 << ((w1 + d - 1) % 7)) != 0
                        })
                    })
            })
    }

    /// Whether the local time `t` matches the pattern.
    pub fn matches_local(&self, t: NaiveDateTime) -> bool {
        self.year_matches(t.year())
            && self.day_matches(t.date())
            && self.hours & (1 << t.hour()) != 0
            && self.minutes & (1 << t.minute()) != 0
            && self.seconds & (1 << t.second()) != 0
            && t.nanosecond() == 0
    }

    /// The first matching day at or after `d`, skipping whole years and months.
    fn first_day_at_or_after(&self, mut d: NaiveDate) -> Option<NaiveDate> {
        loop {
            if d.year() > MAX_YEAR {
                return None;
            }
            if d.year() < MIN_YEAR {
                d = NaiveDate::from_ymd_opt(MIN_YEAR, 1, 1)?;
            }
            if !self.year_matches(d.year()) {
                d = NaiveDate::from_ymd_opt(d.year() + 1, 1, 1)?;
            } else if self.months & (1 << d.month()) == 0 {
                d = first_of_next_month(d)?;
            } else if !self.day_matches(d) {
                d = d.succ_opt()?;
            } else {
                return Some(d);
            }
        }
    }

    /// The last matching day at or before `d`.
    fn last_day_at_or_before(&self, mut d: NaiveDate) -> Option<NaiveDate> {
        loop {
            if d.year() < MIN_YEAR {
                return None;
            }
            if d.year() > MAX_YEAR {
                d = NaiveDate::from_ymd_opt(MAX_YEAR, 12, 31)?;
            }
            if !self.year_matches(d.year()) {
                d = NaiveDate::from_ymd_opt(d.year() - 1, 12, 31)?;
            } else if self.months & (1 << d.month()) == 0 {
                d = NaiveDate::from_ymd_opt(d.year(), d.month(), 1)?.pred_opt()?;
            } else if !self.day_matches(d) {
                d = d.pred_opt()?;
            } else {
                return Some(d);
            }
        }
    }

    /// The first matching time of day at or after `t` (whole seconds).
    fn first_time_at_or_after(&self, t: NaiveTime) -> Option<NaiveTime> {
        let (h0, m0, s0) = (t.hour(), t.minute(), t.second());
        let first_m = self.minutes.trailing_zeros();
        let first_s = self.seconds.trailing_zeros();
        if self.hours & (1 << h0) != 0 {
            if self.minutes & (1 << m0) != 0 {
                if let Some(s) = next_bit(self.seconds, s0) {
                    return NaiveTime::from_hms_opt(h0, m0, s);
                }
            }
            if let Some(m) = next_bit(self.minutes, m0 + 1) {
                return NaiveTime::from_hms_opt(h0, m, first_s);
            }
        }
        let h = next_bit(self.hours, h0 + 1)?;
        NaiveTime::from_hms_opt(h, first_m, first_s)
    }

    /// The earliest instant strictly after `now` whose local time in `zone` matches, each local
    /// match mapped by docs/timing.md, "Daylight-saving changes". `None` when no match remains (a pattern bounded by its years,
    /// or past 2199).
    pub fn next_after(&self, now: DateTime<Utc>, zone: &Zone) -> Option<DateTime<Utc>> {
        // A skipped (gap) time maps forward, so a match on the previous local day can still
        // land after `now`: start one day early. Once a day yields a candidate, the following
        // day is checked too, since one of its gap times can only map later, but a gap of a whole
        // day (Samoa, 2011) may shift the candidate's day by one.
        let start = zone.to_local(now).date().checked_sub_days(Days::new(1))?;
        let mut day = self.first_day_at_or_after(start)?;
        let mut best: Option<DateTime<Utc>> = None;
        let mut cutoff: Option<NaiveDate> = None;
        loop {
            if cutoff.is_some_and(|c| day > c) {
                break;
            }
            if let Some(c) = self.earliest_in_day(day, now, zone) {
                if best.is_none_or(|b| c < b) {
                    best = Some(c);
                }
                if cutoff.is_none() {
                    cutoff = day.succ_opt();
                }
            }
            match day.succ_opt().and_then(|d| self.first_day_at_or_after(d)) {
                Some(d) => day = d,
                None => break,
            }
        }
        best
    }

    /// The latest match at or before `now` (for a pattern with no match left, `until` reports
    /// the last one as a target in the past).
    pub fn last_at_or_before(&self, now: DateTime<Utc>, zone: &Zone) -> Option<DateTime<Utc>> {
        // The mirror of `next_after`: a day after now's local date can still hold a match that
        // maps before now only across a fold, so start a day late; once a day yields a
        // candidate, check the day before too.
        let start = zone.to_local(now).date().succ_opt()?;
        let mut day = self.last_day_at_or_before(start)?;
        let mut best: Option<DateTime<Utc>> = None;
        let mut cutoff: Option<NaiveDate> = None;
        loop {
            if cutoff.is_some_and(|c| day < c) {
                break;
            }
            if let Some(c) = self.latest_in_day(day, now, zone) {
                if best.is_none_or(|b| c > b) {
                    best = Some(c);
                }
                if cutoff.is_none() {
                    cutoff = day.pred_opt();
                }
            }
            match day.pred_opt().and_then(|d| self.last_day_at_or_before(d)) {
                Some(d) => day = d,
                None => break,
            }
        }
        best
    }

    /// Whether a time of day matches the time fields.
    fn time_matches(&self, t: NaiveTime) -> bool {
        self.hours & (1 << t.hour()) != 0
            && self.minutes & (1 << t.minute()) != 0
            && self.seconds & (1 << t.second()) != 0
    }

    /// The last matching time of day at or before `t`.
    fn last_time_at_or_before(&self, t: NaiveTime) -> Option<NaiveTime> {
        if self.time_matches(t) {
            Some(t)
        } else {
            self.last_time_before(t)
        }
    }

    /// The last matching time of day strictly before `t`.
    fn last_time_before(&self, t: NaiveTime) -> Option<NaiveTime> {
        let (h0, m0, s0) = (t.hour(), t.minute(), t.second());
        let last_m = prev_bit(self.minutes, 59)?;
        let last_s = prev_bit(self.seconds, 59)?;
        if self.hours & (1 << h0) != 0 {
            if self.minutes & (1 << m0) != 0 && s0 > 0 {
                if let Some(s) = prev_bit(self.seconds, s0 - 1) {
                    return NaiveTime::from_hms_opt(h0, m0, s);
                }
            }
            if m0 > 0 {
                if let Some(m) = prev_bit(self.minutes, m0 - 1) {
                    return NaiveTime::from_hms_opt(h0, m, last_s);
                }
            }
        }
        if h0 == 0 {
            return None;
        }
        let h = prev_bit(self.hours, h0 - 1)?;
        NaiveTime::from_hms_opt(h, last_m, last_s)
    }

    /// The earliest instant after `now` among the matches on local day `day`.
    ///
    /// The day is split where the zone's offset changes (found by bisection): before the
    /// boundary `B = T + max(o1, o2)` every local time maps with the earlier offset `o1` (that
    /// covers both a gap, read with the offset before it, and a fold, first occurrence), from `B`
    /// on with the later offset `o2`. Within a piece the mapping is monotonic, so the first match
    /// with `L - o > now` is found directly from the bit masks.
    fn earliest_in_day(
        &self,
        day: NaiveDate,
        now: DateTime<Utc>,
        zone: &Zone,
    ) -> Option<DateTime<Utc>> {
        let pieces = day_pieces(day, zone)?;
        let now_naive = now.naive_utc();
        let mut best: Option<DateTime<Utc>> = None;
        for (lo, hi, off) in pieces {
            // L - off > now  <=>  L > now + off; L is whole seconds.
            let threshold = now_naive + chrono::Duration::seconds(off);
            let after = threshold.with_nanosecond(0)? + chrono::Duration::seconds(1);
            let from = after.max(lo);
            if from >= hi || from.date() != day {
                continue;
            }
            let mut time = self.first_time_at_or_after(from.time());
            // Guard against zones with several changes in three days: confirm with `to_instant`.
            for _ in 0..4 {
                let Some(t) = time else { break };
                let local = day.and_time(t);
                if local >= hi {
                    break;
                }
                let inst = zone.to_instant(local);
                if inst > now {
                    if best.is_none_or(|b| inst < b) {
                        best = Some(inst);
                    }
                    break;
                }
                let next = t.overflowing_add_signed(chrono::Duration::seconds(1)).0;
                time = if next == NaiveTime::MIN {
                    None
                } else {
                    self.first_time_at_or_after(next)
                };
            }
        }
        best
    }
    /// The latest instant at or before `now` among the matches on local day `day` (the mirror
    /// of `earliest_in_day`).
    fn latest_in_day(
        &self,
        day: NaiveDate,
        now: DateTime<Utc>,
        zone: &Zone,
    ) -> Option<DateTime<Utc>> {
        let now_naive = now.naive_utc();
        let mut best: Option<DateTime<Utc>> = None;
        for (lo, hi, off) in day_pieces(day, zone)? {
            // L - off <= now  <=>  L <= now + off; L is whole seconds.
            let bound = (now_naive + chrono::Duration::seconds(off)).with_nanosecond(0)?;
            let to = bound.min(hi - chrono::Duration::seconds(1));
            if to < lo || to.date() != day {
                continue;
            }
            let mut time = self.last_time_at_or_before(to.time());
            for _ in 0..4 {
                let Some(t) = time else { break };
                let local = day.and_time(t);
                if local < lo {
                    break;
                }
                let inst = zone.to_instant(local);
                if inst <= now {
                    if best.is_none_or(|b| inst > b) {
                        best = Some(inst);
                    }
                    break;
                }
                time = self.last_time_before(t);
            }
        }
        best
    }
}

/// The local day split where the zone's offset changes (found by bisection), each piece with
/// the offset its local times map with: before the boundary `B = T + max(o1, o2)` the earlier
/// offset `o1` (that covers both a gap, read with the offset before it, and a fold, first
/// occurrence), from `B` on the later offset `o2`. Within a piece the mapping is monotonic.
fn day_pieces(day: NaiveDate, zone: &Zone) -> Option<Vec<(NaiveDateTime, NaiveDateTime, i64)>> {
    let day_start = day.and_hms_opt(0, 0, 0)?;
    let next_start = day.succ_opt()?.and_hms_opt(0, 0, 0)?;
    let probe_before = Utc.from_utc_datetime(&day_start) - chrono::Duration::days(1);
    let probe_after = Utc.from_utc_datetime(&next_start) + chrono::Duration::days(1);
    let o1 = zone.offset_at(probe_before).local_minus_utc() as i64;
    let o2 = zone.offset_at(probe_after).local_minus_utc() as i64;
    let mut pieces: Vec<(NaiveDateTime, NaiveDateTime, i64)> = Vec::with_capacity(2);
    if o1 == o2 {
        pieces.push((day_start, next_start, o1));
    } else {
        // Bisection for the first instant with an offset other than o1.
        let (mut lo, mut hi) = (probe_before.timestamp(), probe_after.timestamp());
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            let off = zone
                .offset_at(DateTime::from_timestamp(mid, 0)?)
                .local_minus_utc() as i64;
            if off == o1 {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let boundary =
            DateTime::from_timestamp(hi, 0)?.naive_utc() + chrono::Duration::seconds(o1.max(o2));
        if boundary > day_start {
            pieces.push((day_start, boundary.min(next_start), o1));
        }
        if boundary < next_start {
            pieces.push((boundary.max(day_start), next_start, o2));
        }
    }
    Some(pieces)
}

fn days_in_month(y: i32, m: u32) -> u32 {
    let first = NaiveDate::from_ymd_opt(y, m, 1).expect("valid date");
    let next = first_of_next_month(first).expect("in range");
    (next - first).num_days() as u32
}

fn first_of_next_month(d: NaiveDate) -> Option<NaiveDate> {
    if d.month() == 12 {
        NaiveDate::from_ymd_opt(d.year() + 1, 1, 1)
    } else {
        NaiveDate::from_ymd_opt(d.year(), d.month() + 1, 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text)
            .unwrap()
            .with_timezone(&Utc)
    }

    /// The first `n` matches after `now`.
    fn nexts(pattern: &str, zone: &str, now: &str, n: usize) -> Vec<String> {
        let p = CalendarPattern::parse(pattern).unwrap();
        let z = Zone::parse(zone).unwrap();
        let mut t = at(now);
        let mut out = Vec::new();
        for _ in 0..n {
            match p.next_after(t, &z) {
                Some(next) => {
                    out.push(next.format("%Y-%m-%d %H:%M:%S").to_string());
                    t = next;
                }
                None => out.push("never".into()),
            }
        }
        out
    }

    #[test]
    fn agrees_with_systemd_away_from_dst() {
        // Expectations printed by `systemd-analyze calendar --base-time='<now> UTC'
        // --iterations=2 '<pattern> <zone>'` (systemd 255), UTC lines.
        for (pattern, zone, now, want) in [
            (
                "mon..fri 08:30",
                "America/New_York",
                "2026-03-01T10:00:00Z",
                ["2026-03-02 13:30:00", "2026-03-03 13:30:00"],
            ),
            (
                "*-*-01 08:00",
                "Europe/Prague",
                "2026-01-31T23:30:00Z",
                ["2026-02-01 07:00:00", "2026-03-01 07:00:00"],
            ),
            (
                "*:*:0/5",
                "UTC",
                "2026-03-01T10:00:02Z",
                ["2026-03-01 10:00:05", "2026-03-01 10:00:10"],
            ),
            (
                "sat,sun 10:15:30",
                "Asia/Kolkata",
                "2026-06-15T03:17:45Z",
                ["2026-06-20 04:45:30", "2026-06-21 04:45:30"],
            ),
            (
                "*-*-* 8..17/2:00",
                "Asia/Kathmandu",
                "2026-06-15T03:17:45Z",
                ["2026-06-15 04:15:00", "2026-06-15 06:15:00"],
            ),
            (
                "fri *-*-13 13:13",
                "Pacific/Chatham",
                "2026-01-31T23:59:59Z",
                ["2026-02-12 23:28:00", "2026-03-12 23:28:00"],
            ),
            (
                "*-02-29 12:00",
                "America/St_Johns",
                "2026-01-01T00:00:00Z",
                ["2028-02-29 15:30:00", "2032-02-29 15:30:00"],
            ),
            (
                "2027/2-01-01 00:00",
                "UTC",
                "2026-12-31T12:00:00Z",
                ["2027-01-01 00:00:00", "2029-01-01 00:00:00"],
            ),
            (
                "Mon 09:00",
                "Asia/Tokyo",
                "2026-03-28T21:30:00Z",
                ["2026-03-30 00:00:00", "2026-04-06 00:00:00"],
            ),
            (
                "*-*-31 06:00",
                "Australia/Sydney",
                "2026-06-15T03:17:45Z",
                ["2026-07-30 20:00:00", "2026-08-30 20:00:00"],
            ),
            (
                "tue 2026-*-1..7 18:00",
                "Europe/Prague",
                "2026-06-15T03:17:45Z",
                ["2026-07-07 16:00:00", "2026-08-04 16:00:00"],
            ),
        ] {
            assert_eq!(
                nexts(pattern, zone, now, 2),
                want,
                "{pattern} in {zone} after {now}"
            );
        }
    }

    #[test]
    fn strictly_after_now() {
        // Exactly on a match: the next one. Between seconds: the next whole second.
        assert_eq!(
            nexts("*-*-* 08:00", "UTC", "2026-03-02T08:00:00Z", 1),
            ["2026-03-03 08:00:00"]
        );
        assert_eq!(
            nexts("*:*:*", "UTC", "2026-03-02T08:00:00.500Z", 1),
            ["2026-03-02 08:00:01"]
        );
        assert_eq!(
            nexts("*-*-* 23:59:59", "UTC", "2026-12-31T23:59:59Z", 1),
            ["2027-01-01 23:59:59"]
        );
    }

    // DST expectations follow docs/timing.md, "Daylight-saving changes" (a skipped time moves forward by the gap, a
    // repeated one matches at its first occurrence); the instants were checked with Python's
    // zoneinfo (fold=0).

    #[test]
    fn a_skipped_time_moves_forward() {
        // Prague 2026-03-29: 02:30 does not exist; it is 03:30 CEST = 01:30Z.
        assert_eq!(
            nexts("*-*-* 02:30", "Europe/Prague", "2026-03-28T12:00:00Z", 2),
            ["2026-03-29 01:30:00", "2026-03-30 00:30:00"]
        );
        // After the jump (03:10 CEST) the normalized 02:30 is still ahead.
        assert_eq!(
            nexts("*-*-* 02:30", "Europe/Prague", "2026-03-29T01:10:00Z", 1),
            ["2026-03-29 01:30:00"]
        );
        // New York 2026-03-08 02:30 -> 03:30 EDT = 07:30Z.
        assert_eq!(
            nexts("sun 02:30", "America/New_York", "2026-03-07T00:00:00Z", 1),
            ["2026-03-08 07:30:00"]
        );
        // Lord Howe's 30-minute gap: 02:15 -> 02:45 (+11:00).
        assert_eq!(
            nexts(
                "*-*-* 02:15",
                "Australia/Lord_Howe",
                "2026-10-03T00:00:00Z",
                1
            ),
            ["2026-10-03 15:45:00"]
        );
    }

    #[test]
    fn a_normalized_time_can_be_overtaken() {
        // 02:15 and 02:30 are skipped (-> 03:15, 03:30 CEST), so 03:15 (01:15Z) comes before
        // the normalized 02:30 (01:30Z), and each instant is reported once.
        assert_eq!(
            nexts(
                "*-*-* 2,3:15,30",
                "Europe/Prague",
                "2026-03-29T00:50:00Z",
                3
            ),
            [
                "2026-03-29 01:15:00",
                "2026-03-29 01:30:00",
                "2026-03-30 00:15:00"
            ]
        );
        // `02:45` normalizes to 03:45 CEST (01:45Z), after 03:10 CEST (01:10Z).
        assert_eq!(
            nexts(
                "*-*-* 2,3:10,45",
                "Europe/Prague",
                "2026-03-29T00:50:00Z",
                2
            ),
            ["2026-03-29 01:10:00", "2026-03-29 01:45:00"]
        );
    }

    #[test]
    fn a_repeated_time_matches_once_at_its_first_occurrence() {
        // Prague 2026-10-25 02:30 happens at 00:30Z and 01:30Z; only the first matches.
        assert_eq!(
            nexts("*-*-* 02:30", "Europe/Prague", "2026-10-25T00:00:00Z", 2),
            ["2026-10-25 00:30:00", "2026-10-26 01:30:00"]
        );
        // From inside the second occurrence (02:45 CET, 01:45Z), 02:50's first occurrence is past.
        assert_eq!(
            nexts("*-*-* 02:50", "Europe/Prague", "2026-10-25T01:45:00Z", 1),
            ["2026-10-26 01:50:00"]
        );
        assert_eq!(
            nexts("*-*-* 03:00", "Europe/Prague", "2026-10-25T01:45:00Z", 1),
            ["2026-10-25 02:00:00"]
        );
        // Every minute through the fold: the repeated hour is not reported twice.
        let got = nexts("*-*-* *:0/30", "Europe/Prague", "2026-10-24T23:50:00Z", 5);
        assert_eq!(
            got,
            [
                "2026-10-25 00:00:00",
                "2026-10-25 00:30:00",
                "2026-10-25 02:00:00",
                "2026-10-25 02:30:00",
                "2026-10-25 03:00:00"
            ]
        );
        assert_eq!(
            nexts("sun 01:30", "America/New_York", "2026-10-31T00:00:00Z", 1),
            ["2026-11-01 05:30:00"]
        );
        // Lord Howe 2026-04-05 01:45 twice: first at +11:00; the next day's is at +10:30.
        assert_eq!(
            nexts(
                "*-*-* 01:45",
                "Australia/Lord_Howe",
                "2026-04-04T00:00:00Z",
                2
            ),
            ["2026-04-04 14:45:00", "2026-04-05 15:15:00"]
        );
    }

    #[test]
    fn a_skipped_day() {
        // Samoa skipped 2011-12-30: its 10:00 reads as 2011-12-31 10:00 (+14), the same instant
        // as the 31st's own 10:00, reported once.
        assert_eq!(
            nexts("*-*-* 10:00", "Pacific/Apia", "2011-12-29T20:00:00Z", 2),
            ["2011-12-30 20:00:00", "2011-12-31 20:00:00"]
        );
    }

    #[test]
    fn a_match_on_the_previous_local_day_can_still_be_ahead() {
        // At 2011-12-30T15:00Z it is already 31 December 05:00 in Apia, but the skipped
        // 30 December 10:00 reads as 31 December 10:00 (+14) = 20:00Z: still ahead.
        assert_eq!(
            nexts("*-12-30 10:00", "Pacific/Apia", "2011-12-30T15:00:00Z", 2),
            ["2011-12-30 20:00:00", "2012-12-29 20:00:00"]
        );
    }

    #[test]
    fn year_bounded_patterns_end() {
        assert_eq!(
            nexts("2026-*-* 08:00", "UTC", "2026-12-31T09:00:00Z", 1),
            ["never"]
        );
        assert_eq!(
            nexts("2199-12-31 23:59:59", "UTC", "2199-12-31T23:59:58Z", 2),
            ["2199-12-31 23:59:59", "never"]
        );
        let p = CalendarPattern::parse("2026-*-01 08:00").unwrap();
        assert_eq!(
            p.last_at_or_before(at("2027-06-01T00:00:00Z"), &Zone::Utc),
            Some(at("2026-12-01T08:00:00Z"))
        );
        assert_eq!(
            p.last_at_or_before(at("2026-03-01T07:59:59Z"), &Zone::Utc),
            Some(at("2026-02-01T08:00:00Z"))
        );
        assert_eq!(
            p.last_at_or_before(at("2025-06-01T00:00:00Z"), &Zone::Utc),
            None
        );
    }

    #[test]
    fn never_matches() {
        for text in [
            "*-02-30 08:00",
            "*-04-31 08:00",
            "*-2,4,6,9,11-31 08:00",
            "mon 2026-03-03 08:00",
            "2027-02-29 00:00",
            "sat..sun 2026-03-02..06 08:00",
        ] {
            let err = CalendarPattern::parse(text).unwrap_err();
            assert_eq!(err.code, Code::NeverMatches, "{text}");
            assert_eq!(
                err.position,
                text.find(|c: char| c == '*' || c.is_ascii_digit()),
                "{text}"
            );
            assert!(err.hint.contains("no date matches"), "{text}");
        }
        // Rare but possible: a Friday 29 February (2036), a Monday 2026-03-02.
        for text in ["fri *-02-29 08:00", "mon 2026-03-02 08:00", "*-02-29 00:00"] {
            assert!(CalendarPattern::parse(text).is_ok(), "{text}");
        }
        assert_eq!(
            nexts("fri *-02-29 08:00", "UTC", "2026-01-01T00:00:00Z", 1),
            ["2036-02-29 08:00:00"]
        );
    }

    #[test]
    fn refusals_have_position_and_fix() {
        for (text, position, needle) in [
            ("", 0, "empty"),
            ("mon", 3, "ends with a time"),
            ("daily", 0, "shorthands"),
            ("*-*-*", 5, "ends with a time"),
            ("mon 9am", 4, "time of day"),
            ("*-*-* 08", 6, "time of day"),
            ("*/5:00", 0, "`0/step`"),
            ("*-*/2-* 08:00", 2, "`1/step`"),
            ("*-*-* 24:00", 6, "hours are 0 to 23"),
            ("*-*-* 08:60", 9, "minutes are 0 to 59"),
            ("*-*-* 08:00:60", 12, "seconds are 0 to 59"),
            ("*-13-01 08:00", 2, "months are 1 to 12"),
            ("*-*-00 08:00", 4, "days of the month are 1 to 31"),
            ("26-01-01 08:00", 0, "four digits"),
            ("1969-01-01 00:00", 0, "1970 to 2199"),
            ("2200-01-01 00:00", 0, "1970 to 2199"),
            ("01-01 08:00", 0, "`Y-M-D`"),
            ("*-*-* 23..8:00", 6, "range goes upwards"),
            ("fri..mon 08:00", 0, "from Monday towards Sunday"),
            ("*-*-* 1..5/0:00", 11, "at least 1"),
            ("*-*-* 08,,09:00", 9, "empty list item"),
            ("mon,,tue 08:00", 4, "empty list item"),
            ("*-*-*~01 08:00", 5, "`~`"),
            ("*-*-* 08:00:00.5", 14, "fractional"),
            ("moon 08:00", 0, "not a weekday"),
            ("*-*-* 08:00 Europe/Prague", 12, "`tz` slot"),
            ("*-*-* 08:00 foo:bar", 12, "unexpected text"),
            ("*-*-* 08:00:00:00", 6, "`HH:MM` or `HH:MM:SS`"),
            ("*-*-*\t08:00", 5, "plain spaces"),
            ("*-*-* 0x8:00", 6, "not a number"),
        ] {
            let err = CalendarPattern::parse(text).unwrap_err();
            assert_eq!(err.code, Code::BadPattern, "{text:?}: {err}");
            assert_eq!(err.position, Some(position), "{text:?}: {err}");
            assert!(
                err.hint.contains(needle),
                "{text:?}: hint {:?} lacks {needle:?}",
                err.hint
            );
        }
    }

    #[test]
    fn accepted_forms() {
        for text in [
            "mon 09:00",
            "MON 09:00",
            "Monday 09:00",
            "mOn..FrI 08:30",
            "sat,sun 10:00",
            "mon,wed..fri *-*-01 9:5",
            "*-*-01 08:00",
            "*:*:0/5",
            "2026-*-* 8:00",
            "*-1..3-1,15 0:0",
            "*-*-* 5/10:00",
            "*-*-* 00:00/15",
            "2027/2-01-01 00:00",
            "  mon   09:00  ",
            "*-*-* 08,09:00,30",
            "*-*-* 8..17/2:00",
        ] {
            assert!(CalendarPattern::parse(text).is_ok(), "{text}");
        }
        let p = CalendarPattern::parse("*-*-* 5/10:00").unwrap();
        let hours: Vec<u32> = (0..24).filter(|h| p.hours & (1 << h) != 0).collect();
        assert_eq!(hours, [5, 15]);
        let p = CalendarPattern::parse("*-*-* 8..17/2:00").unwrap();
        let hours: Vec<u32> = (0..24).filter(|h| p.hours & (1 << h) != 0).collect();
        assert_eq!(hours, [8, 10, 12, 14, 16]);
    }
}
