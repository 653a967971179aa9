//! `settings.holidays` (docs/flows.md, "Settings"; docs/timing.md, "Business days and holidays"):
//! local dates that business days skip and
//! that send windows treat as closed. A date is read in the zone of the wait or window that uses
//! it. Entries are dates (`2026-12-24`), calendars (`US`, `DE-BY`, [`holiday_calendars`]) whose
//! dates are taken in at parse time, and `contact`: the contact's own country, added per
//! contact by [`Holidays::for_contact`].
//!
//! [`holiday_calendars`]: crate::timing::holiday_calendars

use crate::code::Code;
use crate::timing::error::TimingError;
use crate::timing::holiday_calendars;
use chrono::NaiveDate;
use std::borrow::Cow;
use std::collections::BTreeSet;

/// The entry that names the contact's own country's calendar.
pub const CONTACT: &str = "contact";

/// A set of holiday dates. Sorted, so business-day arithmetic can count the holidays in a
/// range with one ordered scan.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Holidays {
    dates: BTreeSet<NaiveDate>,
    /// The calendars named, in the order listed (for answers and the journey).
    calendars: Vec<&'static str>,
    /// `contact` was listed: [`Holidays::for_contact`] adds the contact's country.
    contact: bool,
}

/// What `contact` resolved to for one contact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ContactCalendar {
    /// The flow does not list `contact`.
    NotAsked,
    /// The contact's country, with a shipped calendar (`DE`).
    Country(&'static str),
    /// No calendar: why, for the journey (no country and no phone, or a country without data).
    None(String),
}

impl Holidays {
    /// No holidays (the seeds' model).
    pub fn none() -> Holidays {
        Holidays::default()
    }

    /// Parses entries: `YYYY-MM-DD` dates, calendar codes (`US`, `DE-BY`, `GB-ENG`) and
    /// `contact`. A repeated date is harmless and kept once. The first bad entry is refused with
    /// `BAD_SCHEMA` (a wrong value in a settings field), its index as position: a date that is
    /// not one, or a code the shipped data does not have (with a hint when one is close).
    pub fn parse<S: AsRef<str>>(entries: &[S]) -> Result<Holidays, TimingError> {
        let mut out = Holidays::default();
        for (index, raw) in entries.iter().enumerate() {
            let text = raw.as_ref();
            if text == CONTACT {
                out.contact = true;
                continue;
            }
            if let Some(date) = parse_date(text) {
                out.dates.insert(date);
                continue;
            }
            let looks_like_date = text.starts_with(|c: char| c.is_ascii_digit());
            match holiday_calendars::calendar(text) {
                Some(cal) if !looks_like_date => {
                    out.dates.extend(cal.days.keys().copied());
                    if !out.calendars.contains(&cal.code) {
                        out.calendars.push(cal.code);
                    }
                }
                _ => {
                    let hint = if looks_like_date {
                        format!("holiday #{index} `{text}` is not a date: write `YYYY-MM-DD`, e.g. `2026-12-25`")
                    } else {
                        let near = holiday_calendars::suggest(text)
                            .map(|s| format!(" ({s})"))
                            .unwrap_or_default();
                        format!(
                            "holiday #{index} `{text}` is neither a date `YYYY-MM-DD` nor a holiday calendar{near}: \
                             use a country (`US`), a subdivision (`DE-BY`, `GB-ENG`) or `contact`"
                        )
                    };
                    return Err(TimingError::new(Code::BadSchema, text, Some(index), hint));
                }
            }
        }
        Ok(out)
    }

    /// The calendars listed, in order (`contact` not included).
    pub fn calendars(&self) -> &[&'static str] {
        &self.calendars
    }

    /// Whether `contact` was listed.
    pub fn wants_contact(&self) -> bool {
        self.contact
    }

    /// The holidays for one contact: these, plus the calendar of `country` (the contact's
    /// `country`, else its phone's region) when `contact` was listed. Borrowed when nothing is
    /// added, so a flow without `contact` costs no copy.
    pub fn for_contact(&self, country: Option<&str>) -> (Cow<'_, Holidays>, ContactCalendar) {
        if !self.contact {
            return (Cow::Borrowed(self), ContactCalendar::NotAsked);
        }
        let Some(country) = country else {
            return (
                Cow::Borrowed(self),
                ContactCalendar::None(
                    "the contact has no `country` and no phone number, so its own holidays are none".into(),
                ),
            );
        };
        match holiday_calendars::calendar(country) {
            Some(cal) => {
                let mut h = self.clone();
                h.contact = false;
                h.dates.extend(cal.days.keys().copied());
                if !h.calendars.contains(&cal.code) {
                    h.calendars.push(cal.code);
                }
                (Cow::Owned(h), ContactCalendar::Country(cal.code))
            }
            None => (
                Cow::Borrowed(self),
                ContactCalendar::None(format!(
                    "no holiday calendar ships for the contact's country `{country}`, so its own holidays are none"
                )),
            ),
        }
    }

    /// Builds a set from dates already parsed.
    pub fn from_dates<I: IntoIterator<Item = NaiveDate>>(dates: I) -> Holidays {
        Holidays {
            dates: dates.into_iter().collect(),
            ..Holidays::default()
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
            (vec!["US", "XX"], 1),
            (vec!["us"], 0),
            (vec!["DE-XX"], 0),
            (vec!["2026-12-25T00:00:00Z"], 0),
            (vec![""], 0),
        ] {
            let err = Holidays::parse(&list).unwrap_err();
            assert_eq!(err.code, Code::BadSchema);
            assert_eq!(err.position, Some(index));
            assert!(err.hint.contains("YYYY-MM-DD"), "{}", err.hint);
        }
        let err = Holidays::parse(&["us"]).unwrap_err();
        assert!(err.hint.contains("did you mean `US`"), "{}", err.hint);
        let err = Holidays::parse(&["DE-XX"]).unwrap_err();
        assert!(err.hint.contains("DE-BY"), "{}", err.hint);
    }

    #[test]
    fn calendars_and_contact() {
        let d = |y, m, dd| NaiveDate::from_ymd_opt(y, m, dd).unwrap();
        let h = Holidays::parse(&["US", "2026-12-24", "contact"]).unwrap();
        assert!(h.contains(d(2026, 7, 3)) && h.contains(d(2026, 12, 24)));
        assert_eq!(h.calendars(), ["US"]);
        assert!(h.wants_contact());
        // German Unity Day only through the contact's country.
        assert!(!h.contains(d(2026, 10, 3)));
        let (de, which) = h.for_contact(Some("DE"));
        assert!(de.contains(d(2026, 10, 3)) && de.contains(d(2026, 7, 3)));
        assert_eq!(which, ContactCalendar::Country("DE"));
        let (none, which) = h.for_contact(None);
        assert!(!none.contains(d(2026, 10, 3)));
        assert!(matches!(which, ContactCalendar::None(ref why) if why.contains("no `country`")));
        let (_, which) = h.for_contact(Some("ZZ"));
        assert!(matches!(which, ContactCalendar::None(ref why) if why.contains("`ZZ`")));
        let plain = Holidays::parse(&["2026-12-24"]).unwrap();
        assert_eq!(plain.for_contact(Some("DE")).1, ContactCalendar::NotAsked);
    }
}
