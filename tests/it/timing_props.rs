//! Property tests for the timing core's durations, business days, calendar patterns and
//! parsers (the invariants docs/timing.md states, checked on generated inputs).

use chrono::{DateTime, Duration as Span, NaiveDateTime, TimeZone, Timelike, Utc};
use nudge::timing::{
    add_business_days, is_business_day, CalendarPattern, Duration, Holidays, Until, Zone,
};
use proptest::prelude::*;

const ZONES: [&str; 10] = [
    "UTC",
    "Europe/Prague",
    "America/New_York",
    "Australia/Sydney",
    "Australia/Lord_Howe",
    "Asia/Kolkata",
    "Asia/Kathmandu",
    "Pacific/Chatham",
    "America/St_Johns",
    "+05:45",
];

fn zone() -> impl Strategy<Value = Zone> {
    prop::sample::select(ZONES.to_vec()).prop_map(|z| Zone::parse(z).unwrap())
}

/// Instants from 2020 to 2040, with milliseconds.
fn instant() -> impl Strategy<Value = DateTime<Utc>> {
    (1_577_836_800_000i64..2_208_988_800_000i64)
        .prop_map(|ms| Utc.timestamp_millis_opt(ms).unwrap())
}

/// 2026 DST changes (UTC instants) of the zones above, where the corner cases are.
const CHANGES: [(&str, &str); 10] = [
    ("America/New_York", "2026-03-08T07:00:00Z"),
    ("America/New_York", "2026-11-01T06:00:00Z"),
    ("Europe/Prague", "2026-03-29T01:00:00Z"),
    ("Europe/Prague", "2026-10-25T01:00:00Z"),
    ("Australia/Sydney", "2026-04-04T16:00:00Z"),
    ("Australia/Sydney", "2026-10-03T16:00:00Z"),
    ("Australia/Lord_Howe", "2026-04-04T15:00:00Z"),
    ("Australia/Lord_Howe", "2026-10-03T15:30:00Z"),
    ("Pacific/Chatham", "2026-04-04T14:00:00Z"),
    ("America/St_Johns", "2026-03-08T05:30:00Z"),
];

/// A zone and an instant within 36 hours of one of its DST changes.
fn near_dst() -> impl Strategy<Value = (Zone, DateTime<Utc>)> {
    (
        prop::sample::select(CHANGES.to_vec()),
        -36 * 3600i64..36 * 3600i64,
    )
        .prop_map(|((z, c), secs)| {
            let at = DateTime::parse_from_rfc3339(c).unwrap().with_timezone(&Utc);
            (Zone::parse(z).unwrap(), at + Span::seconds(secs))
        })
}

/// A zone and an instant: anywhere, or (more often) near one of the zone's DST changes.
fn zone_and_instant() -> impl Strategy<Value = (Zone, DateTime<Utc>)> {
    prop_oneof![1 => (zone(), instant()), 2 => near_dst()]
}

fn holidays() -> impl Strategy<Value = Holidays> {
    prop::collection::vec(0u64..2_000, 0..12).prop_map(|days| {
        let base = chrono::NaiveDate::from_ymd_opt(2019, 12, 1).unwrap();
        Holidays::from_dates(days.into_iter().map(|d| base + chrono::Days::new(d * 4)))
    })
}

fn duration() -> impl Strategy<Value = Duration> {
    (
        0u32..3,
        0u32..15,
        0u32..5,
        0u32..40,
        0u32..30,
        0u64..200_000_000,
    )
        .prop_map(
            |(years, months, weeks, days, business_days, fixed_ms)| Duration {
                years,
                months,
                weeks,
                days,
                business_days,
                fixed_ms,
            },
        )
}

/// Whether `local` is inside a gap of `zone` (it does not read back).
fn in_gap(zone: &Zone, local: NaiveDateTime) -> bool {
    zone.to_local(zone.to_instant(local)) != local
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn durations_never_resolve_before_now(d in duration(), (z, t) in zone_and_instant(), h in holidays()) {
        let r = d.add_to(t, &z, &h);
        prop_assert!(r >= t, "{d} from {t} in {z} gave {r}");
        let moves = d.fixed_ms > 0 || d.days > 0 || d.weeks > 0 || d.months > 0 || d.years > 0;
        if moves {
            prop_assert!(r > t, "{d} from {t} in {z} did not move");
        }
    }

    #[test]
    fn fixed_durations_are_elapsed_time(ms in 0u64..10_000_000_000, (z, t) in zone_and_instant()) {
        let d = Duration::from_millis(ms);
        prop_assert_eq!(d.add_to(t, &z, &Holidays::none()) - t, Span::milliseconds(ms as i64));
    }

    #[test]
    fn business_days_land_on_business_days_at_the_same_time(
        n in 0u32..30, (z, t) in zone_and_instant(), h in holidays()
    ) {
        let d = Duration { business_days: n, ..Duration::default() };
        let r = d.add_to(t, &z, &h);
        let start = z.to_local(t);
        let end = z.to_local(r);
        if n == 0 {
            prop_assert_eq!(r, t);
        } else {
            let wanted = add_business_days(start.date(), n, &h).and_time(start.time());
            if in_gap(&z, wanted) {
                // The kept time does not exist that day: it moved forward by the gap (at most
                // an hour in these zones), still on the business day.
                prop_assert!(end > wanted && end - wanted <= Span::hours(1), "{wanted} -> {end}");
            } else {
                prop_assert_eq!(end, wanted);
            }
            prop_assert!(is_business_day(end.date(), &h), "{end} is not a business day");
            // Exactly n business days in (start, end], counted one day at a time.
            let mut count = 0;
            let mut day = start.date();
            while day < end.date() {
                day = day.succ_opt().unwrap();
                if is_business_day(day, &h) {
                    count += 1;
                }
            }
            prop_assert_eq!(count, n);
        }
    }

    #[test]
    fn max_span_bounds_every_start(d in duration(), (z, t) in zone_and_instant(), h in holidays()) {
        // DST is deliberately left out of max_span (documented): allow one offset change.
        let elapsed = d.add_to(t, &z, &h) - t;
        let bound = d.max_span(&h);
        prop_assert!(elapsed <= bound + Span::hours(1), "{d} from {t}: {elapsed} > {bound}");
    }

    #[test]
    fn max_span_bounds_business_days_among_dense_holidays(
        n in 0u32..25,
        start in 0u64..60,
        offsets in prop::collection::vec(0u64..90, 0..30),
    ) {
        let base = chrono::NaiveDate::from_ymd_opt(2026, 1, 1).unwrap();
        let h = Holidays::from_dates(offsets.into_iter().map(|o| base + chrono::Days::new(o)));
        let d = Duration { business_days: n, ..Duration::default() };
        let t = Utc.from_utc_datetime(&(base + chrono::Days::new(start)).and_hms_opt(12, 0, 0).unwrap());
        prop_assert!(d.add_to(t, &Zone::Utc, &h) - t <= d.max_span(&h));
    }

    #[test]
    fn display_round_trips(d in duration()) {
        prop_assert_eq!(Duration::parse(&d.to_string()), Ok(d));
    }
}

/// Patterns built from the grammar's pieces.
fn pattern() -> impl Strategy<Value = String> {
    let weekdays = prop::sample::select(vec![
        "",
        "mon ",
        "mon..fri ",
        "sat,sun ",
        "Tue,Thu ",
        "fri ",
    ]);
    let date = prop::sample::select(vec![
        "",
        "*-*-* ",
        "*-*-01 ",
        "*-*-1..7 ",
        "*-02-29 ",
        "2026..2030-*-* ",
        "*-1,4,7,10-15 ",
        "*-*-31 ",
        "*-*-28..31 ",
        "*-3/2-1/10 ",
    ]);
    let hour = prop::sample::select(vec![
        "*", "0", "2", "8", "1,2,3", "8..17", "0/6", "23", "2..3",
    ]);
    let minute = prop::sample::select(vec!["*", "00", "30", "0/15", "15,45", "59", "5/20"]);
    let second = prop::sample::select(vec!["", ":00", ":*", ":0/20", ":59"]);
    (weekdays, date, hour, minute, second).prop_map(|(w, d, h, m, s)| format!("{w}{d}{h}:{m}{s}"))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn next_after_is_the_earliest_later_match(text in pattern(), (z, now) in zone_and_instant()) {
        let p = match CalendarPattern::parse(&text) {
            Ok(p) => p,
            // Only impossible combinations may be refused.
            Err(e) => {
                prop_assert_eq!(e.code, nudge::code::Code::NeverMatches, "{}", text);
                return Ok(());
            }
        };
        let Some(next) = p.next_after(now, &z) else {
            // Only a year-bounded pattern can run out (before 2199).
            prop_assert!(text.contains("2026..2030"), "{} ran out after {}", text, now);
            return Ok(());
        };
        prop_assert!(next > now);
        // It is the instant of a matching local time, read directly or (in a gap) normalized
        // forward from one up to an hour earlier.
        let local = z.to_local(next);
        let matched = p.matches_local(local)
            || (1..=60).any(|m| {
                let cand = local - Span::minutes(m);
                p.matches_local(cand) && z.to_instant(cand) == next
            });
        prop_assert!(matched, "{text} in {z} after {now}: {next} ({local}) is not a match");
        // No matching local time between (three hours before now) and the answer maps into
        // (now, next): scanned second by second, when the answer is near.
        if next - now <= Span::hours(30) {
            let mut l = (z.to_local(now) - Span::hours(3)).with_nanosecond(0).unwrap();
            while l < local {
                if p.matches_local(l) {
                    let i = z.to_instant(l);
                    prop_assert!(!(i > now && i < next), "{text} in {z} after {now}: {l} -> {i} is before {next}");
                }
                l += Span::seconds(1);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn last_at_or_before_is_the_latest_earlier_match(text in pattern(), (z, now) in zone_and_instant()) {
        let Ok(p) = CalendarPattern::parse(&text) else { return Ok(()) };
        let Some(last) = p.last_at_or_before(now, &z) else {
            prop_assert!(text.contains("2026..2030"), "{} has no match before {}", text, now);
            return Ok(());
        };
        prop_assert!(last <= now);
        let local = z.to_local(last);
        let matched = p.matches_local(local)
            || (1..=60).any(|m| {
                let cand = local - Span::minutes(m);
                p.matches_local(cand) && z.to_instant(cand) == last
            });
        prop_assert!(matched, "{text} in {z} before {now}: {last} ({local}) is not a match");
        if now - last <= Span::hours(30) {
            let mut l = (local - Span::hours(3)).with_nanosecond(0).unwrap();
            let end = z.to_local(now) + Span::hours(3);
            while l < end {
                if p.matches_local(l) {
                    let i = z.to_instant(l);
                    prop_assert!(!(i > last && i <= now), "{text} in {z} before {now}: {l} -> {i} is after {last}");
                }
                l += Span::seconds(1);
            }
        }
    }
}

/// Strings near the grammars (their alphabets and shapes), plus arbitrary text.
fn near_grammar() -> impl Strategy<Value = String> {
    prop_oneof![
        "[0-9a-zA-Z .,:*/+$\\-{}~]{0,24}",
        "[0-9]{1,25}(\\.[0-9]{0,25})?[a-zA-Z]{0,9}( [0-9]{1,3}[a-z]{1,8}){0,4}",
        "(mon|Fri|sun|\\*|[0-9]{1,4})([.,]{1,2}[0-9a-z*]{1,4}){0,3}( [0-9*/.,-]{1,12}){0,2} [0-9*/.,]{1,6}:[0-9*/.,]{1,6}(:[0-9*/.,]{1,6})?",
        "\\+[0-9]{0,12}(d|bd|h|)? ?[0-9]{0,2}:?[0-9]{0,2}",
        "[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}(:[0-9]{2})?(Z|[+-][0-9]{2}:[0-9]{2})?",
        any::<String>(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn parsers_never_panic(text in near_grammar(), now in instant(), z in zone()) {
        let h = Holidays::none();
        if let Ok(d) = Duration::parse(&text) {
            let _ = d.add_to(now, &z, &h);
            let _ = d.max_span(&h);
        }
        if let Ok(u) = Until::parse(&text) {
            let _ = u.resolve(now, &z, &h);
        }
        if let Ok(p) = CalendarPattern::parse(&text) {
            let _ = p.next_after(now, &z);
        }
        let _ = Zone::parse(&text);
    }

    #[test]
    fn refusals_point_inside_the_text(text in near_grammar()) {
        let errors = [
            Duration::parse(&text).err(),
            Until::parse(&text).err(),
            CalendarPattern::parse(&text).err(),
        ];
        for err in errors.into_iter().flatten() {
            if let Some(p) = err.position {
                prop_assert!(p <= text.len(), "{:?}: position {}", text, p);
            }
            prop_assert!(!err.hint.is_empty());
        }
    }
}
