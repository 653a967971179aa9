//! Duration parsing and arithmetic: no panic, no hang, on any text (first byte picks a zone and
//! a start instant, the rest is the duration).
#![no_main]
use chrono::{TimeZone, Utc};
use libfuzzer_sys::fuzz_target;
use nudge::timing::{Duration, Holidays, Zone};

const ZONES: [&str; 5] = ["UTC", "Europe/Prague", "Australia/Lord_Howe", "America/New_York", "-03:30"];

fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else { return };
    let Ok(text) = std::str::from_utf8(rest) else { return };
    let zone = Zone::parse(ZONES[first as usize % ZONES.len()]).unwrap();
    let now = Utc.timestamp_opt(1_774_000_000 + first as i64 * 97_003, 0).unwrap();
    let holidays = Holidays::parse(&["2026-12-24", "2026-12-25", "2027-01-01"]).unwrap();
    if let Ok(d) = Duration::parse(text) {
        let at = d.add_to(now, &zone, &holidays);
        assert!(at >= now, "{text:?} went back in time");
        let _ = d.max_span(&holidays);
        assert_eq!(Duration::parse(&d.to_string()), Ok(d));
    }
    // The same text as a JSON value (a number when it is one).
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(text) {
        let _ = Duration::from_json(&v);
    }
});
