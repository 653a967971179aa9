//! Benchmarks of the timing core's hot paths: what the planner computes each time a step is
//! entered. Run with `cargo bench --bench timing`; figures are in docs/benchmarks.md.

use chrono::{DateTime, NaiveTime, Utc};
use criterion::{black_box, criterion_group, criterion_main, Criterion};
use nudge::timing::holidays::Holidays;
use nudge::timing::phone::phone_zones;
use nudge::timing::question::answer_line;
use nudge::timing::window::{
    next_opening, resolve_zones, Channel, Recipient, SendWindow, WindowZone,
};
use nudge::timing::{CalendarPattern, Duration, Zone};

fn instant(text: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(text)
        .expect("a valid instant")
        .with_timezone(&Utc)
}

fn durations(c: &mut Criterion) {
    let prague = Zone::parse("Europe/Prague").expect("zone");
    let holidays = Holidays::parse(&["2026-12-24", "2026-12-25"]).expect("holidays");
    let friday = instant("2026-12-18T15:00:00Z");
    c.bench_function("duration: parse + resolve 2bd in Europe/Prague", |b| {
        b.iter(|| {
            let d = Duration::parse(black_box("2bd")).expect("duration");
            d.add_to(black_box(friday), &prague, &holidays)
        })
    });
    // The same step with a country calendar (the shipped `holidays` data, decoded on
    // first use and kept) instead of listed dates, and with the contact's calendar resolved.
    let us = Holidays::parse(&["US"]).expect("the US calendar");
    let new_york = Zone::parse("America/New_York").expect("zone");
    let before_thanksgiving = instant("2026-11-25T15:00:00Z");
    c.bench_function("duration: parse + resolve 2bd with the US calendar", |b| {
        b.iter(|| {
            let d = Duration::parse(black_box("2bd")).expect("duration");
            d.add_to(black_box(before_thanksgiving), &new_york, &us)
        })
    });
    let contact = Holidays::parse(&["contact"]).expect("the contact calendar");
    c.bench_function(
        "duration: resolve the contact's calendar (DE) + 2bd in Europe/Prague",
        |b| {
            b.iter(|| {
                let (h, _) = contact.for_contact(black_box(Some("DE")));
                let d = Duration::parse(black_box("2bd")).expect("duration");
                d.add_to(black_box(friday), &prague, &h)
            })
        },
    );
    let jan31 = instant("2026-01-31T10:00:00Z");
    c.bench_function(
        "duration: parse + resolve 1mo15d2h30m in Europe/Prague",
        |b| {
            b.iter(|| {
                let d = Duration::parse(black_box("1mo15d2h30m")).expect("duration");
                d.add_to(black_box(jan31), &prague, &Holidays::none())
            })
        },
    );
}

fn windows(c: &mut Criterion) {
    let window = SendWindow {
        days: [true, true, true, true, true, false, false],
        from: NaiveTime::from_hms_opt(9, 0, 0).expect("time"),
        to: NaiveTime::from_hms_opt(17, 0, 0).expect("time"),
        zone: WindowZone::Explicit(Zone::parse("America/New_York").expect("zone")),
    };
    let recipient = Recipient {
        tz: Some(Zone::parse("Europe/London").expect("zone")),
        phone: None,
    };
    let sender = Zone::parse("Europe/Prague").expect("zone");
    let holidays = Holidays::parse(&["2026-12-24", "2026-12-25"]).expect("holidays");
    // Friday evening in New York: the opening is Monday, when London is still inside 08–21.
    let now = instant("2026-12-18T23:00:00Z");
    c.bench_function(
        "window: next opening, New York window + SMS in London",
        |b| {
            b.iter(|| {
                let zones =
                    resolve_zones(Some(&window), &recipient, &sender, Channel::Sms).expect("zones");
                next_opening(
                    black_box(now),
                    Some(&window),
                    &zones,
                    Channel::Sms,
                    &holidays,
                )
                .expect("an opening")
            })
        },
    );
}

fn patterns(c: &mut Criterion) {
    let zone = Zone::parse("America/New_York").expect("zone");
    let now = instant("2026-03-01T10:00:00Z");
    c.bench_function("calendar: parse + next match of mon..fri 08:30", |b| {
        b.iter(|| {
            let p = CalendarPattern::parse(black_box("mon..fri 08:30")).expect("pattern");
            p.next_after(black_box(now), &zone)
        })
    });
    let monthly = CalendarPattern::parse("*-*-01 08:00").expect("pattern");
    c.bench_function("calendar: next match of *-*-01 08:00 (parsed once)", |b| {
        b.iter(|| monthly.next_after(black_box(now), &zone))
    });
}

fn phones(c: &mut Criterion) {
    c.bench_function("phone: +61412345678 -> E.164 + candidate zones", |b| {
        b.iter(|| phone_zones(black_box("+61412345678")).expect("phone"))
    });
}

/// The whole golden file through the `nudge timing` question path: a throughput figure for the
/// JSON Lines interface (parsing the request and formatting the answer included).
fn golden_file(c: &mut Criterion) {
    let lines: Vec<&str> = include_str!("../fixtures/timing/golden.jsonl")
        .lines()
        .collect();
    let requests: Vec<String> = lines
        .iter()
        .map(|l| {
            let case: serde_json::Value = serde_json::from_str(l).expect("golden line");
            case["request"].to_string()
        })
        .collect();
    c.bench_function("question: every golden request through answer_line", |b| {
        b.iter(|| {
            requests
                .iter()
                .filter(|r| answer_line(black_box(r)).1)
                .count()
        })
    });
}

criterion_group!(benches, durations, windows, patterns, phones, golden_file);
criterion_main!(benches);
