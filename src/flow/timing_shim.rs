//! TEMPORARY stand-in for the timing types that branches `timing` and `windows` are building
//! (see TIMING-API.md). It exists only so the flow model compiles before those branches land;
//! it is deleted by the merge, and the model then uses `crate::timing` directly.

use crate::code::Code;
use crate::timing::{TimingError, Zone};
use chrono::{DateTime, FixedOffset, NaiveDate, NaiveDateTime, NaiveTime};
use std::collections::BTreeSet;

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Holidays {
    dates: BTreeSet<NaiveDate>,
}

impl Holidays {
    pub fn none() -> Holidays {
        Holidays::default()
    }
    pub fn parse<S: AsRef<str>>(dates: &[S]) -> Result<Holidays, TimingError> {
        let mut out = BTreeSet::new();
        for d in dates {
            let s = d.as_ref();
            let date = NaiveDate::parse_from_str(s, "%Y-%m-%d").map_err(|_| {
                TimingError::new(Code::BadSchema, s, None, "a holiday is a date `YYYY-MM-DD`")
            })?;
            out.insert(date);
        }
        Ok(Holidays { dates: out })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Duration {
    pub years: u32,
    pub months: u32,
    pub weeks: u32,
    pub days: u32,
    pub business_days: u32,
    pub fixed_ms: u64,
}

impl Duration {
    pub fn from_millis(ms: u64) -> Duration {
        Duration {
            fixed_ms: ms,
            ..Duration::default()
        }
    }
    pub fn is_fixed(&self) -> bool {
        self.years == 0
            && self.months == 0
            && self.weeks == 0
            && self.days == 0
            && self.business_days == 0
    }
    /// Stand-in grammar: `<n><unit>` pairs for s, m, h, d, bd, w only.
    pub fn parse(text: &str) -> Result<Duration, TimingError> {
        if text.parse::<f64>().is_ok() {
            return Err(TimingError::new(
                Code::QuotedNumber,
                text,
                Some(0),
                "unquote the number for milliseconds",
            ));
        }
        let mut d = Duration::default();
        let bytes = text.as_bytes();
        let mut i = 0;
        if text.is_empty() {
            return Err(TimingError::new(Code::BadDuration, text, Some(0), "empty"));
        }
        while i < bytes.len() {
            let start = i;
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
            if i == start {
                return Err(TimingError::new(
                    Code::BadDuration,
                    text,
                    Some(i),
                    "expected a number",
                ));
            }
            let n: u64 = text[start..i].parse().unwrap_or(0);
            let us = i;
            while i < bytes.len() && bytes[i].is_ascii_alphabetic() {
                i += 1;
            }
            match &text[us..i] {
                "s" => d.fixed_ms += n * 1000,
                "m" => d.fixed_ms += n * 60_000,
                "h" => d.fixed_ms += n * 3_600_000,
                "d" => d.days += n as u32,
                "bd" => d.business_days += n as u32,
                "w" => d.weeks += n as u32,
                _ => {
                    return Err(TimingError::new(
                        Code::BadDuration,
                        text,
                        Some(us),
                        "unknown unit",
                    ))
                }
            }
        }
        Ok(d)
    }
    pub fn from_json(v: &serde_json::Value) -> Result<Duration, TimingError> {
        match v {
            serde_json::Value::Number(n) => {
                n.as_u64().map(Duration::from_millis).ok_or_else(|| {
                    TimingError::new(
                        Code::BadDuration,
                        n.to_string(),
                        None,
                        "a non-negative integer",
                    )
                })
            }
            serde_json::Value::String(s) => Duration::parse(s),
            other => Err(TimingError::new(
                Code::BadDuration,
                other.to_string(),
                None,
                "a duration",
            )),
        }
    }
    pub fn max_span(&self, _h: &Holidays) -> chrono::Duration {
        chrono::Duration::days(
            (self.years * 366 + self.months * 31 + self.weeks * 7 + self.days) as i64
                + (self.business_days as i64 * 7 + 4) / 5,
        ) + chrono::Duration::milliseconds(self.fixed_ms as i64)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CalendarPattern {
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Until {
    Absolute(DateTime<FixedOffset>),
    WallClock(NaiveDateTime),
    Offset {
        days: u32,
        business: bool,
        time: NaiveTime,
    },
    Pattern(CalendarPattern),
}

impl Until {
    pub fn parse(text: &str) -> Result<Until, TimingError> {
        if let Ok(t) = DateTime::parse_from_rfc3339(text) {
            return Ok(Until::Absolute(t));
        }
        if let Ok(t) = NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M") {
            return Ok(Until::WallClock(t));
        }
        if text.contains(':') && !text.contains("tomorrow") {
            return Ok(Until::Pattern(CalendarPattern { text: text.into() }));
        }
        Err(TimingError::new(
            Code::BadUntil,
            text,
            Some(0),
            "one of the four forms",
        ))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowZone {
    Contact,
    Sender,
    Explicit(Zone),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SendWindow {
    pub days: [bool; 7],
    pub from: NaiveTime,
    pub to: NaiveTime,
    pub zone: WindowZone,
}

impl SendWindow {
    pub fn from_json(v: &serde_json::Value) -> Result<SendWindow, TimingError> {
        let bad = |h: &str| TimingError::new(Code::BadWindow, v.to_string(), None, h);
        let obj = v.as_object().ok_or_else(|| bad("an object"))?;
        let mut days = [false; 7];
        for d in obj
            .get("days")
            .and_then(|d| d.as_array())
            .ok_or_else(|| bad("days"))?
        {
            let names = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"];
            let s = d.as_str().unwrap_or("").to_ascii_lowercase();
            let i = names
                .iter()
                .position(|n| *n == s)
                .ok_or_else(|| bad("a weekday"))?;
            days[i] = true;
        }
        if !days.contains(&true) {
            return Err(bad("no days"));
        }
        let time = |k: &str| {
            obj.get(k)
                .and_then(|t| t.as_str())
                .and_then(|t| NaiveTime::parse_from_str(t, "%H:%M").ok())
                .ok_or_else(|| bad("HH:MM"))
        };
        let (from, to) = (time("from")?, time("to")?);
        if from >= to {
            return Err(bad("from < to"));
        }
        let zone = match obj.get("tz").and_then(|t| t.as_str()) {
            None | Some("contact") => WindowZone::Contact,
            Some("sender") => WindowZone::Sender,
            Some(z) => WindowZone::Explicit(Zone::parse(z)?),
        };
        Ok(SendWindow {
            days,
            from,
            to,
            zone,
        })
    }
}
