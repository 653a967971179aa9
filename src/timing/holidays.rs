//! `settings.holidays` (SPEC §1 Settings, §2.3a): local dates that business days skip and that
//! send windows treat as closed. A date is read in the zone of the wait or window that uses it.

use crate::code::Code;
use crate::timing::error::TimingError;
use chrono::NaiveDate;
use std::collections::BTreeSet;

/// A set of holiday dates. Sorted, so business-day arithmetic can count the holidays in a
/// range with one ordered scan.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Holidays {
    dates: BTreeSet<NaiveDate>,
}

impl Holidays {
    /// No holidays (the seeds' model).
    pub fn none() -> Holidays {
        Holidays::default()
    }

    /// Parses `YYYY-MM-DD` dates. A repeated date is harmless and kept once. The first bad entry
    /// is refused with `BAD_SCHEMA` (a wrong value in a settings field), its index as position.
    pub fn parse<S: AsRef<str>>(dates: &[S]) -> Result<Holidays, TimingError> {
        let mut set = BTreeSet::new();
        for (index, raw) in dates.iter().enumerate() {
            let text = raw.as_ref();
            set.insert(parse_date(text).ok_or_else(|| {
                TimingError::new(
                    Code::BadSchema,
                    text,
                    Some(index),
                    format!(
                        "holiday #{index} `{text}` is not a date: write `YYYY-MM-DD`, e.g. `2026-12-25`"
                    ),
                )
            })?);
        }
        Ok(Holidays { dates: set })
    }

    /// Builds a set from dates already parsed.
    pub fn from_dates<I: IntoIterator<Item = NaiveDate>>(dates: I) -> Holidays {
        Holidays {
            dates: dates.into_iter().collect(),
        }
    }

    /// Whether `d` is a holiday.
    pub fn contains(&self, d: NaiveDate) -> bool {
        self.dates.contains(&d)
    }

    /// How many distinct dates.
    pub fn len(&self) -> usize {
        self.dates.len()
    }

    /// Whether there are no holidays.
    pub fn is_empty(&self) -> bool {
        self.dates.is_empty()
    }

    /// The holidays in `from..=to`, in order.
    pub fn in_range(&self, from: NaiveDate, to: NaiveDate) -> impl Iterator<Item = &NaiveDate> {
        let empty = from > to;
        self.dates
            .range(from..=if empty { from } else { to })
            .filter(move |_| !empty)
    }

    /// The dates, in order.
    pub fn iter(&self) -> impl Iterator<Item = &NaiveDate> {
        self.dates.iter()
    }
}

/// Exactly `YYYY-MM-DD` with two-digit month and day (chrono alone would accept `2026-1-5`).
fn parse_date(text: &str) -> Option<NaiveDate> {
    let b = text.as_bytes();
    let shape = b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter()
            .enumerate()
            .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit());
    if !shape {
        return None;
    }
    NaiveDate::from_ymd_opt(
        text[0..4].parse().ok()?,
        text[5..7].parse().ok()?,
        text[8..10].parse().ok()?,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_dedups() {
        let h = Holidays::parse(&["2026-12-24", "2026-12-25", "2026-12-24"]).unwrap();
        assert_eq!(h.len(), 2);
        assert!(h.contains(NaiveDate::from_ymd_opt(2026, 12, 25).unwrap()));
        assert!(!h.contains(NaiveDate::from_ymd_opt(2026, 12, 26).unwrap()));
        assert!(Holidays::none().is_empty());
    }

    #[test]
    fn refuses_bad_dates_with_index() {
        for (list, index) in [
            (vec!["2026-12-24", "2026-02-30"], 1),
            (vec!["2026-1-05"], 0),
            (vec!["2026-12-24", "2026-12-25", "Christmas"], 2),
            (vec!["2026-12-25T00:00:00Z"], 0),
            (vec![""], 0),
        ] {
            let err = Holidays::parse(&list).unwrap_err();
            assert_eq!(err.code, Code::BadSchema);
            assert_eq!(err.position, Some(index));
            assert!(err.hint.contains("YYYY-MM-DD"), "{}", err.hint);
        }
    }
}
