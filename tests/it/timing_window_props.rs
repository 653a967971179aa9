//! Properties of `next_opening`, `is_open` and `schedule` over random windows, zones (with DST,
//! half-hour DST and odd offsets), holidays and instants, biased towards DST changes.
//!
//! Completeness is checked by sampling: every zone here has offsets in whole quarter hours and
//! every window bound is on a quarter hour, so every opening (an interval start, after any DST
//! normalization) lies on the UTC quarter-hour grid; an open instant in `[t, answer)` would put
//! `t` or a grid point in that range inside the windows.

use chrono::{DateTime, Datelike, Duration as Span, NaiveDate, NaiveTime, TimeZone, Utc};
use nudge::code::Code;
use nudge::timing::{
    is_open, next_opening, schedule, Channel, Duration, Holidays, ResolvedZones, SendWindow,
    WindowZone, Zone,
};
use proptest::prelude::*;

const ZONES: &[&str] = &[
    "Europe/Prague",
    "America/New_York",
    "Australia/Sydney",
    "Australia/Lord_Howe",
    "Asia/Kathmandu",
    "Pacific/Chatham",
    "America/St_Johns",
    "Asia/Tokyo",
    "America/Sao_Paulo",
    "UTC",
    "+05:45",
    "-03:30",
];

/// DST changes of 2026 in the zones above, as UTC dates (instants are drawn around them).
const CHANGES: &[(u32, u32)] = &[(3, 8), (3, 29), (4, 5), (9, 27), (10, 4), (10, 25), (11, 1)];

const QUARTER_MS: i64 = 15 * 60 * 1000;

fn zone() -> impl Strategy<Value = Zone> {
    prop::sample::select(ZONES).prop_map(|z| Zone::parse(z).unwrap())
}

fn instant() -> impl Strategy<Value = DateTime<Utc>> {
    let year_start = Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap();
    let uniform = (0i64..365 * 86_400_000).prop_map(move |ms| year_start + Span::milliseconds(ms));
    let near_change = (
        prop::sample::select(CHANGES),
        -2 * 86_400_000i64..2 * 86_400_000,
    )
        .prop_map(|((m, d), ms)| {
            Utc.with_ymd_and_hms(2026, m, d, 0, 0, 0).unwrap() + Span::milliseconds(ms)
        });
    // Window bounds sit on the quarter-hour grid: draw instants exactly on it too.
    let on_grid =
        (0i64..365 * 96).prop_map(move |q| year_start + Span::milliseconds(q * QUARTER_MS));
    prop_oneof![uniform, near_change, on_grid]
}

/// A send window on the quarter-hour grid, with DST-prone early-morning bounds likely.
fn send_window() -> impl Strategy<Value = (SendWindow, Zone)> {
    (1u8..128, 0u32..96, 1u32..96, zone()).prop_map(|(mask, a, len, z)| {
        let from = a.min(95 - 1);
        let to = (from + len).min(95);
        let days = std::array::from_fn(|i| mask & (1 << i) != 0);
        let hm = |q: u32| NaiveTime::from_hms_opt(q / 4, q % 4 * 15, 0).unwrap();
        let w = SendWindow {
            days,
            from: hm(from),
            to: hm(to.max(from + 1)),
            zone: WindowZone::Explicit(z),
        };
        (w, z)
    })
}

#[derive(Debug, Clone)]
struct Setup {
    window: Option<SendWindow>,
    zones: ResolvedZones,
    channel: Channel,
    holidays: Holidays,
}

fn setup() -> impl Strategy<Value = Setup> {
    (
        prop::option::weighted(0.8, send_window()),
        prop::bool::ANY,
        prop::collection::vec(zone(), 1..4),
        prop::collection::vec(0u32..365, 0..30),
    )
        .prop_map(|(win, sms, sms_zones, holiday_days)| {
            let (window, wz) = match win {
                Some((w, z)) => (Some(w), Some(z)),
                None => (None, None),
            };
            let channel = if sms { Channel::Sms } else { Channel::Email };
            let base = NaiveDate::from_ymd_opt(2026, 1, 1).unwrap();
            let dates: Vec<String> = holiday_days
                .iter()
                .map(|d| (base + Span::days(*d as i64)).to_string())
                .collect();
            Setup {
                window,
                zones: ResolvedZones {
                    arithmetic: wz.unwrap_or(Zone::Utc),
                    window: wz,
                    sms: if sms { sms_zones } else { vec![] },
                    place: None,
                    no_number: false,
                },
                channel,
                holidays: Holidays::parse(&dates).unwrap(),
            }
        })
}

impl Setup {
    fn next(&self, t: DateTime<Utc>) -> Result<DateTime<Utc>, nudge::timing::TimingError> {
        next_opening(
            t,
            self.window.as_ref(),
            &self.zones,
            self.channel,
            &self.holidays,
        )
    }
    fn open(&self, t: DateTime<Utc>) -> bool {
        is_open(
            t,
            self.window.as_ref(),
            &self.zones,
            self.channel,
            &self.holidays,
        )
    }
    /// The first instant in `[t, end)` open by the definition, checking `t` and the quarter-hour
    /// grid.
    fn first_open_sampled(&self, t: DateTime<Utc>, end: DateTime<Utc>) -> Option<DateTime<Utc>> {
        if t < end && open_by_definition(self, t) {
            return Some(t);
        }
        let ms = t.timestamp_millis();
        let mut g = ms - ms.rem_euclid(QUARTER_MS) + QUARTER_MS;
        while g < end.timestamp_millis() {
            let at = Utc.timestamp_millis_opt(g).unwrap();
            if open_by_definition(self, at) {
                return Some(at);
            }
            g += QUARTER_MS;
        }
        None
    }
}

/// docs/timing.md, "Send windows" read directly: open when, for the window and every SMS zone, some local day around
/// `t` (listed and not a holiday, for the send window) has `from <= t < to`, each bound turned
/// into an instant by docs/timing.md, "Daylight-saving changes".
fn open_by_definition(s: &Setup, t: DateTime<Utc>) -> bool {
    let inside =
        |zone: &Zone, from: NaiveTime, to: NaiveTime, day_ok: &dyn Fn(NaiveDate) -> bool| {
            let today = zone.to_local(t).date();
            [today - Span::days(1), today, today + Span::days(1)]
                .into_iter()
                .any(|d| {
                    day_ok(d)
                        && zone.to_instant(d.and_time(from)) <= t
                        && t < zone.to_instant(d.and_time(to))
                })
        };
    let send_ok = match &s.window {
        None => true,
        Some(w) => inside(&s.zones.window.unwrap(), w.from, w.to, &|d: NaiveDate| {
            w.days[d.weekday().num_days_from_monday() as usize] && !s.holidays.contains(d)
        }),
    };
    let eight = NaiveTime::from_hms_opt(8, 0, 0).unwrap();
    let nine_pm = NaiveTime::from_hms_opt(21, 0, 0).unwrap();
    let sms_ok = match s.channel {
        Channel::Sms => {
            !s.zones.sms.is_empty()
                && s.zones
                    .sms
                    .iter()
                    .all(|z| inside(z, eight, nine_pm, &|_| true))
        }
        _ => true,
    };
    send_ok && sms_ok
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn next_opening_is_the_earliest_open_instant(s in setup(), t in instant()) {
        match s.next(t) {
            Ok(o) => {
                prop_assert!(o >= t);
                prop_assert!(s.open(o), "answer {o} is not open");
                prop_assert!(open_by_definition(&s, o), "answer {o} is not open by the definition");
                prop_assert!(o <= t + Span::days(31));
                prop_assert_eq!(s.first_open_sampled(t, o), None, "open before the answer {}", o);
                if o > t {
                    prop_assert!(!open_by_definition(&s, o - Span::milliseconds(1)));
                }
            }
            Err(e) => {
                prop_assert!(matches!(e.code, Code::NoOpening | Code::ZoneUnknown), "{e}");
                let open = s.first_open_sampled(t, t + Span::days(31));
                prop_assert_eq!(open, None, "refused with {} but open at {:?}", e.code, open);
            }
        }
    }

    #[test]
    fn is_open_follows_the_definition(s in setup(), t in instant()) {
        prop_assert_eq!(s.open(t), open_by_definition(&s, t));
    }

    #[test]
    fn next_opening_is_idempotent_and_monotone(s in setup(), t in instant(), delta in 0i64..3 * 86_400_000) {
        let t2 = t + Span::milliseconds(delta);
        if let Ok(o) = s.next(t) {
            prop_assert_eq!(s.next(o), Ok(o));
            if let Ok(o2) = s.next(t2) {
                prop_assert!(o <= o2, "t {t} -> {o}, later t {t2} -> {o2}");
            }
            // Anything before the answer opens at the answer too.
            if o > t {
                let mid = t + (o - t) / 2;
                prop_assert_eq!(s.next(mid), Ok(o));
            }
        }
    }

    #[test]
    fn schedule_is_open_and_within_jitter_of_the_opening(
        s in setup(), entry in instant(), jitter_ms in 0u64..4 * 3_600_000, seed in any::<u64>()
    ) {
        let jitter = Duration::from_millis(jitter_ms);
        let run = |seed| schedule(entry, s.window.as_ref(), &s.zones, s.channel, &s.holidays, Some(&jitter), seed);
        match s.next(entry) {
            Ok(t0) => {
                let r = run(seed).expect("t0 exists, so scheduling succeeds");
                prop_assert!(s.open(r));
                prop_assert!(r >= t0);
                // The drawn instant is at most t0 + jitter and next_opening is monotone; when
                // nothing opens after the drawn instant, the step keeps t0.
                match s.next(t0 + Span::milliseconds(jitter_ms as i64)) {
                    Ok(latest) => prop_assert!(r <= latest, "{r} after {latest}"),
                    Err(_) => prop_assert!(r == t0 || r <= t0 + Span::milliseconds(jitter_ms as i64)),
                }
                prop_assert_eq!(run(seed), Ok(r));
                if jitter_ms == 0 {
                    prop_assert_eq!(r, t0);
                }
            }
            Err(e) => prop_assert_eq!(run(seed).unwrap_err().code, e.code),
        }
    }
}
