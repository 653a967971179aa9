//! Business days (`bd`, `+Nbd`; docs/timing.md, "Business days and holidays"): Monday to Friday
//! that are not holidays.
//!
//! Stepping rule: from date `d`, step forward one calendar day at a time and count each business
//! day reached; the answer is the `n`-th. So from Friday or Saturday, `1` is Monday, and `0` is
//! `d` itself whatever day it is. Computed in O(holidays in range), not day by day, so a large `n`
//! cannot stall a worker.

use crate::timing::holidays::Holidays;
use chrono::{Datelike, Days, NaiveDate};

/// Whether `d` is Monday–Friday and not a holiday.
pub fn is_business_day(d: NaiveDate, h: &Holidays) -> bool {
    d.weekday().num_days_from_monday() < 5 && !h.contains(d)
}

/// The `n`-th business day strictly after `d` (`d` itself when `n` is 0).
///
/// Saturates at chrono's last date for absurd `n` (durations are bounded when parsed, so this
/// only guards against misuse).
pub fn add_business_days(d: NaiveDate, n: u32, h: &Holidays) -> NaiveDate {
    let mut from = d;
    let mut remaining = n as u64;
    // Each round: jump `remaining` weekdays, then count the weekday holidays jumped over; those
    // must be made up after the landing day. Terminates because holidays are finite and ordered.
    while remaining > 0 {
        let to = add_weekdays(from, remaining);
        let skipped = h
            .in_range(from.succ_opt().unwrap_or(from), to)
            .filter(|x| x.weekday().num_days_from_monday() < 5)
            .count() as u64;
        if to == from {
            return to; // saturated
        }
        from = to;
        remaining = skipped;
    }
    from
}

/// The `n`-th Monday–Friday strictly after `d` (holidays ignored).
pub(crate) fn add_weekdays(d: NaiveDate, n: u64) -> NaiveDate {
    if n == 0 {
        return d;
    }
    let wd = d.weekday().num_days_from_monday() as u64; // Mon = 0
                                                        // Weekdays strictly after a weekend day are those strictly after the Friday before it.
    let (base, w) = if wd >= 5 {
        (d - Days::new(wd - 4), 4)
    } else {
        (d, wd)
    };
    let monday = base - Days::new(w);
    let total = w + n;
    let days = (total / 5) * 7 + total % 5;
    monday
        .checked_add_days(Days::new(days))
        .unwrap_or(NaiveDate::MAX)
}

/// The most calendar days `n` weekdays can span, over every start weekday (no holidays).
pub(crate) fn max_weekday_span_days(n: u64) -> u64 {
    if n == 0 {
        return 0;
    }
    // Same formula as `add_weekdays`, for each start weekday, without building far dates.
    (0..7u64)
        .map(|wd| {
            let (back, w) = if wd >= 5 { (wd - 4, 4) } else { (0, wd) };
            let total = w + n;
            (total / 5) * 7 + total % 5 - w - back
        })
        .max()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Weekday;

    fn date(y: i32, m: u32, d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, d).unwrap()
    }

    /// The documented rule written literally: step one day at a time.
    fn stepping(d: NaiveDate, n: u32, h: &Holidays) -> NaiveDate {
        let mut cur = d;
        let mut left = n;
        while left > 0 {
            cur = cur.succ_opt().unwrap();
            if is_business_day(cur, h) {
                left -= 1;
            }
        }
        cur
    }

    #[test]
    fn spec_examples() {
        let h = Holidays::none();
        // 2026-03-06 is a Friday, 03-07 a Saturday, 03-09 a Monday.
        assert_eq!(date(2026, 3, 6).weekday(), Weekday::Fri);
        assert_eq!(add_business_days(date(2026, 3, 6), 1, &h), date(2026, 3, 9));
        assert_eq!(add_business_days(date(2026, 3, 7), 1, &h), date(2026, 3, 9));
        assert_eq!(add_business_days(date(2026, 3, 8), 1, &h), date(2026, 3, 9));
        assert_eq!(add_business_days(date(2026, 3, 7), 0, &h), date(2026, 3, 7));
        assert_eq!(
            add_business_days(date(2026, 3, 6), 5, &h),
            date(2026, 3, 13)
        );
    }

    #[test]
    fn holidays_are_skipped() {
        let h = Holidays::parse(&["2026-12-24", "2026-12-25", "2026-12-28"]).unwrap();
        // Wed 2026-12-23 + 1bd: Thu 24 and Fri 25 are holidays, Mon 28 too -> Tue 29.
        assert_eq!(
            add_business_days(date(2026, 12, 23), 1, &h),
            date(2026, 12, 29)
        );
        assert!(!is_business_day(date(2026, 12, 24), &h));
        assert!(!is_business_day(date(2026, 12, 26), &h));
        assert!(is_business_day(date(2026, 12, 29), &h));
    }

    #[test]
    fn fast_path_equals_stepping() {
        let h = Holidays::parse(&[
            "2026-01-01",
            "2026-01-02",
            "2026-01-05",
            "2026-01-10",
            "2026-04-03",
            "2026-04-06",
            "2026-12-24",
            "2026-12-25",
        ])
        .unwrap();
        for hol in [Holidays::none(), h] {
            let mut d = date(2025, 12, 20);
            while d < date(2026, 2, 10) {
                for n in 0..40 {
                    assert_eq!(
                        add_business_days(d, n, &hol),
                        stepping(d, n, &hol),
                        "{d} + {n}"
                    );
                }
                d = d.succ_opt().unwrap();
            }
        }
    }

    #[test]
    fn max_weekday_span() {
        assert_eq!(max_weekday_span_days(0), 0);
        assert_eq!(max_weekday_span_days(1), 3); // Friday -> Monday
        assert_eq!(max_weekday_span_days(5), 7);
        assert_eq!(max_weekday_span_days(6), 10); // Friday -> Monday after next
        let h = Holidays::none();
        for n in 0..30u32 {
            let worst = (0..7)
                .map(|k| {
                    let s = date(2026, 3, 2) + Days::new(k);
                    (add_business_days(s, n, &h) - s).num_days() as u64
                })
                .max()
                .unwrap();
            assert_eq!(max_weekday_span_days(n as u64), worst, "{n}");
        }
    }
}
