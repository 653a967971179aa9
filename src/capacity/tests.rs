use super::*;
use chrono::TimeZone;
use proptest::prelude::*;

fn t(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
}

fn caps(doc: serde_json::Value) -> Caps {
    Caps::parse(&doc).unwrap()
}

fn book(doc: serde_json::Value, tz: &str) -> Book {
    Book::new(caps(doc), Zone::parse(tz).unwrap())
}

fn send(b: &mut Book, channel: Channel, at: DateTime<Utc>, domain: Option<&str>) {
    let gap = b.caps.of(channel).map_or(0, |c| c.gap_after(0)) as i64;
    b.reserve(Entry {
        channel,
        at,
        domain: domain.map(str::to_string),
        gap_until: at + chrono::Duration::milliseconds(gap),
    });
}

#[test]
fn rolling_day_frees_exactly_24h_after_the_first_send() {
    // 50/day: 50 sends from 09:00 one minute apart; the 51st fits exactly 24 h after the first.
    let mut b = book(serde_json::json!({"email": {"daily": 50}}), "UTC");
    let first = t("2026-12-07T09:00:00Z");
    for i in 0..50 {
        send(
            &mut b,
            Channel::Email,
            first + chrono::Duration::minutes(i),
            None,
        );
    }
    let now = first + chrono::Duration::hours(2);
    assert_eq!(
        b.blocked(Channel::Email, None, now),
        Some(CapReason::CapDaily)
    );
    assert_eq!(
        b.earliest_fit(Channel::Email, None, now),
        (
            first + chrono::Duration::hours(24),
            Some(CapReason::CapDaily)
        )
    );
    // The window edge: 1 ms before is still inside (u − 24 h, u].
    let edge = first + chrono::Duration::hours(24);
    assert_eq!(
        b.blocked(
            Channel::Email,
            None,
            edge - chrono::Duration::milliseconds(1)
        ),
        Some(CapReason::CapDaily)
    );
    assert_eq!(b.blocked(Channel::Email, None, edge), None);
    // Other channels are not limited by email's cap.
    assert_eq!(b.blocked(Channel::Sms, None, now), None);
}

#[test]
fn table_of_caps() {
    struct Case {
        name: &'static str,
        caps: serde_json::Value,
        tz: &'static str,
        sends: Vec<(&'static str, Option<&'static str>)>,
        at: &'static str,
        domain: Option<&'static str>,
        want: (&'static str, Option<CapReason>),
    }
    let cases = vec![
        Case {
            name: "weekly: the 4th of 3/week waits for the first to leave the 7 days",
            caps: serde_json::json!({"email": {"weekly": 3}}),
            tz: "UTC",
            sends: vec![
                ("2026-12-01T10:00:00Z", None),
                ("2026-12-02T10:00:00Z", None),
                ("2026-12-03T10:00:00Z", None),
            ],
            at: "2026-12-04T10:00:00Z",
            domain: None,
            want: ("2026-12-08T10:00:00Z", Some(CapReason::CapWeekly)),
        },
        Case {
            name: "weekly beats daily when both bind",
            caps: serde_json::json!({"email": {"daily": 1, "weekly": 1}}),
            tz: "UTC",
            sends: vec![("2026-12-01T10:00:00Z", None)],
            at: "2026-12-01T11:00:00Z",
            domain: None,
            want: ("2026-12-08T10:00:00Z", Some(CapReason::CapWeekly)),
        },
        Case {
            name: "gap: min_gap 2m after the last send",
            caps: serde_json::json!({"sms": {"min_gap": "2m"}}),
            tz: "UTC",
            sends: vec![("2026-12-01T10:00:00Z", None)],
            at: "2026-12-01T10:01:00Z",
            domain: None,
            want: ("2026-12-01T10:02:00Z", Some(CapReason::CapGap)),
        },
        Case {
            name: "domain: case-insensitive, a third to the domain waits",
            caps: serde_json::json!({"email": {"domain_daily": 2}}),
            tz: "UTC",
            sends: vec![
                ("2026-12-01T10:00:00Z", Some("acme.com")),
                ("2026-12-01T11:00:00Z", Some("acme.com")),
                ("2026-12-01T11:30:00Z", Some("other.com")),
            ],
            at: "2026-12-01T12:00:00Z",
            domain: Some("acme.com"),
            want: ("2026-12-02T10:00:00Z", Some(CapReason::CapDomain)),
        },
        Case {
            name: "domain: another domain fits",
            caps: serde_json::json!({"email": {"domain_daily": 2}}),
            tz: "UTC",
            sends: vec![
                ("2026-12-01T10:00:00Z", Some("acme.com")),
                ("2026-12-01T11:00:00Z", Some("acme.com")),
            ],
            at: "2026-12-01T12:00:00Z",
            domain: Some("other.com"),
            want: ("2026-12-01T12:00:00Z", None),
        },
        Case {
            name: "ramp day 0 (start 2) full: fits at the next local midnight when day 1 allows 3",
            caps: serde_json::json!({"email": {"daily": 50, "ramp": {"start": 2, "step": 1, "every": "1d", "from": "2026-12-01"}}}),
            tz: "Europe/Prague",
            sends: vec![
                ("2026-12-01T08:00:00Z", None),
                ("2026-12-01T09:00:00Z", None),
            ],
            at: "2026-12-01T10:00:00Z",
            domain: None,
            // 2026-12-02 00:00 in Prague (UTC+1).
            want: ("2026-12-01T23:00:00Z", Some(CapReason::CapDaily)),
        },
        Case {
            name: "ramp capped by daily: day 5 would allow 7, daily 2 holds",
            caps: serde_json::json!({"email": {"daily": 2, "ramp": {"start": 2, "step": 1, "every": "1d", "from": "2026-12-01"}}}),
            tz: "UTC",
            sends: vec![
                ("2026-12-06T08:00:00Z", None),
                ("2026-12-06T09:00:00Z", None),
            ],
            at: "2026-12-06T10:00:00Z",
            domain: None,
            want: ("2026-12-07T08:00:00Z", Some(CapReason::CapDaily)),
        },
        Case {
            name: "DST: a ramp day across the fall-back change is 25 h (New York, 2026-11-01)",
            caps: serde_json::json!({"call": {"ramp": {"start": 1, "step": 1, "every": "1d", "from": "2026-10-31"}}}),
            tz: "America/New_York",
            // Day 1 (Nov 1, EDT→EST) allows 2; both used.
            sends: vec![
                ("2026-11-01T05:00:00Z", None),
                ("2026-11-01T06:00:00Z", None),
            ],
            at: "2026-11-01T12:00:00Z",
            domain: None,
            // Day 2 begins at Nov 2 00:00 EST = 05:00Z, 25 h after day 1 began (04:00Z).
            want: ("2026-11-02T05:00:00Z", Some(CapReason::CapDaily)),
        },
        Case {
            name: "DST: rolling 24 h is elapsed time across spring-forward (2027-03-14 New York)",
            caps: serde_json::json!({"email": {"daily": 1}}),
            tz: "America/New_York",
            sends: vec![("2027-03-13T15:00:00Z", None)],
            at: "2027-03-14T12:00:00Z",
            domain: None,
            want: ("2027-03-14T15:00:00Z", Some(CapReason::CapDaily)),
        },
    ];
    for c in cases {
        let mut b = book(c.caps, c.tz);
        for (at, domain) in &c.sends {
            let channel = *Channel::ALL
                .iter()
                .find(|ch| b.caps.of(**ch).is_some())
                .unwrap();
            send(&mut b, channel, t(at), *domain);
        }
        let channel = *Channel::ALL
            .iter()
            .find(|ch| b.caps.of(**ch).is_some())
            .unwrap();
        let got = b.earliest_fit(channel, c.domain, t(c.at));
        assert_eq!(got, (t(c.want.0), c.want.1), "{}", c.name);
    }
}

#[test]
fn ramp_cap_per_day() {
    let c = caps(
        serde_json::json!({"email": {"daily": 20, "ramp": {"start": 10, "step": 5, "every": "1d", "from": "2026-12-01"}}}),
    );
    let e = c.email.unwrap();
    let z = Zone::parse("Europe/Prague").unwrap();
    for (at, want) in [
        ("2026-11-30T12:00:00Z", 10), // before `from`: day 0's cap
        ("2026-12-01T12:00:00Z", 10),
        ("2026-12-01T22:59:59Z", 10),
        ("2026-12-01T23:00:00Z", 15), // Prague midnight
        ("2026-12-03T12:00:00Z", 20),
        ("2026-12-30T12:00:00Z", 20), // daily holds
    ] {
        assert_eq!(e.daily_at(t(at), &z), Some(want), "{at}");
    }
    let hourly = caps(
        serde_json::json!({"sms": {"ramp": {"start": 1, "step": 2, "every": "12h", "from": "2026-12-01"}}}),
    );
    let s = hourly.sms.unwrap();
    let utc = Zone::parse("UTC").unwrap();
    assert_eq!(s.daily_at(t("2026-12-01T11:59:59Z"), &utc), Some(1));
    assert_eq!(s.daily_at(t("2026-12-01T12:00:00Z"), &utc), Some(3));
}

#[test]
fn gap_jitter_is_seeded_and_bounded() {
    let c = caps(serde_json::json!({"email": {"min_gap": "2m", "gap_jitter": "3m"}}));
    let e = c.email.unwrap();
    let draws: Vec<u64> = (0..200).map(|s| e.gap_after(s)).collect();
    assert!(draws.iter().all(|d| (120_000..=300_000).contains(d)));
    assert_eq!(e.gap_after(7), e.gap_after(7));
    assert!(
        draws.iter().any(|d| *d != draws[0]),
        "the jitter varies by seed"
    );
}

#[test]
fn bad_caps_are_refused_with_the_field() {
    let cases = [
        (serde_json::json!({"email": {"daily": 0}}), "/email/daily"),
        (
            serde_json::json!({"email": {"weekly": -3}}),
            "/email/weekly",
        ),
        (
            serde_json::json!({"email": {"min_gap": "1d"}}),
            "/email/min_gap",
        ),
        (
            serde_json::json!({"email": {"gap_jitter": "2bd"}}),
            "/email/gap_jitter",
        ),
        (
            serde_json::json!({"email": {"ramp": {"start": 5, "step": 1, "every": "30m", "from": "2026-12-01"}}}),
            "/email/ramp/every",
        ),
        (
            serde_json::json!({"email": {"ramp": {"start": 0, "step": 1, "every": "1d", "from": "2026-12-01"}}}),
            "/email/ramp/start",
        ),
        (
            serde_json::json!({"email": {"ramp": {"start": 5, "every": "1d"}}}),
            "/email/ramp/from",
        ),
        (
            serde_json::json!({"sms": {"domain_daily": 5}}),
            "/sms/domain_daily",
        ),
        (serde_json::json!({"fax": {"daily": 5}}), "/fax"),
        (serde_json::json!({"email": {"dayly": 5}}), "/email/dayly"),
        (
            serde_json::json!({"email": {"daily": "50"}}),
            "/email/daily",
        ),
    ];
    for (doc, path) in cases {
        let problems = Caps::parse(&doc).expect_err(&doc.to_string());
        assert!(
            problems.iter().any(|p| p.path == path),
            "{doc}: {problems:?}"
        );
    }
    let ok = Caps::parse(&serde_json::json!({
        "email": { "daily": 50, "min_gap": "2m", "gap_jitter": "3m", "domain_daily": 5,
                   "ramp": { "start": 10, "step": 5, "every": "1d", "from": "2026-12-01" } },
        "sms":   { "daily": 200, "min_gap": "10s" },
        "call":  { "daily": 80 },
        "linkedin": { "daily": 20, "weekly": 100 } }));
    assert!(ok.is_ok(), "docs/capacity.md's example: {ok:?}");
}

// ----- property: against a brute-force reference ----------------------------------------------

const HOUR: i64 = 3_600_000;

/// The reference: every instant is on an hour grid, so a rolling window only changes at grid
/// points. Counts sends in every 24 h / 7 d window ending at each grid hour that would contain
/// one more send at `at`, by the definition (docs/capacity.md), with no candidate reasoning.
fn reference_fits(
    c: &ChannelCaps,
    zone: &Zone,
    sends: &[(i64, u8, i64)],
    at: i64,
    domain: u8,
) -> bool {
    let window_ok = |len: i64, cap: &dyn Fn(i64) -> Option<u64>, only: Option<u8>| {
        let mut u = at;
        while u < at + len {
            if let Some(cap) = cap(u) {
                let n = sends
                    .iter()
                    .filter(|(s, d, _)| *s > u - len && *s <= u && only.is_none_or(|o| o == *d))
                    .count() as u64;
                if n + 1 > cap {
                    return false;
                }
            }
            u += HOUR;
        }
        true
    };
    let ms = |u: i64| Utc.timestamp_millis_opt(u).unwrap();
    if let Some(w) = c.weekly {
        if !window_ok(7 * 24 * HOUR, &|_| Some(u64::from(w)), None) {
            return false;
        }
    }
    if !window_ok(24 * HOUR, &|u| c.daily_at(ms(u), zone), None) {
        return false;
    }
    if let Some(d) = c.domain_daily {
        if !window_ok(24 * HOUR, &|_| Some(u64::from(d)), Some(domain)) {
            return false;
        }
    }
    sends.iter().all(|(s, _, gap_until)| {
        if *s <= at {
            at >= *gap_until
        } else {
            *s >= at + c.min_gap_ms as i64
        }
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// For random campaigns: every send goes at the earliest grid hour the reference allows,
    /// and afterwards no rolling window exceeds its cap.
    #[test]
    fn greedy_matches_the_reference(
        daily in proptest::option::of(1u32..5),
        weekly in proptest::option::of(3u32..12),
        gap_h in 0i64..4,
        domain_daily in proptest::option::of(1u32..3),
        ramp in proptest::option::of((1u32..3, 0u32..2)),
        requests in proptest::collection::vec((0i64..240, 0u8..3), 1..25),
    ) {
        let mut doc = serde_json::Map::new();
        if let Some(d) = daily { doc.insert("daily".into(), d.into()); }
        if let Some(w) = weekly { doc.insert("weekly".into(), w.into()); }
        if gap_h > 0 { doc.insert("min_gap".into(), format!("{gap_h}h").into()); }
        if let Some(d) = domain_daily { doc.insert("domain_daily".into(), d.into()); }
        if let Some((start, step)) = ramp {
            doc.insert("ramp".into(), serde_json::json!({"start": start, "step": step, "every": "1d", "from": "2026-12-02"}));
        }
        let mut b = book(serde_json::json!({"email": doc}), "UTC");
        let c = b.caps.email.clone().unwrap();
        let zone = b.zone;
        let base = t("2026-12-01T00:00:00Z").timestamp_millis();
        let mut sends: Vec<(i64, u8, i64)> = Vec::new();
        let mut requests = requests;
        requests.sort();
        for (hour, domain) in requests {
            let at = base + hour * HOUR;
            let name = ["a.com", "b.com", "c.com"][domain as usize];
            let (fit, _) = b.earliest_fit(Channel::Email, Some(name), Utc.timestamp_millis_opt(at).unwrap());
            let fit = fit.timestamp_millis();
            // The reference's earliest grid hour at or after `at`.
            let mut want = at;
            while !reference_fits(&c, &zone, &sends, want, domain) {
                want += HOUR;
                prop_assert!(want < at + 120 * 24 * HOUR, "the reference found no fit");
            }
            prop_assert_eq!(fit, want);
            let gap_until = fit + c.min_gap_ms as i64;
            sends.push((fit, domain, gap_until));
            b.reserve(Entry { channel: Channel::Email, at: Utc.timestamp_millis_opt(fit).unwrap(), domain: Some(name.into()), gap_until: Utc.timestamp_millis_opt(gap_until).unwrap() });
        }
        // No rolling window ever exceeds its cap.
        for (u, _, _) in &sends {
            let in_window = |len: i64| sends.iter().filter(|(s, _, _)| *s > u - len && s <= u).count() as u64;
            if let Some(cap) = c.daily_at(Utc.timestamp_millis_opt(*u).unwrap(), &zone) {
                prop_assert!(in_window(24 * HOUR) <= cap);
            }
            if let Some(w) = c.weekly {
                prop_assert!(in_window(7 * 24 * HOUR) <= u64::from(w));
            }
        }
    }
}
