//! Calendar patterns: no panic, no hang; a next match is strictly later and matches.
#![no_main]
use chrono::{TimeZone, Utc};
use libfuzzer_sys::fuzz_target;
use nudge::timing::{CalendarPattern, Zone};

const ZONES: [&str; 5] = ["UTC", "Europe/Prague", "Australia/Lord_Howe", "America/New_York", "+05:45"];

fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else { return };
    let Ok(text) = std::str::from_utf8(rest) else { return };
    let zone = Zone::parse(ZONES[first as usize % ZONES.len()]).unwrap();
    let now = Utc.timestamp_opt(1_774_000_000 + first as i64 * 97_003, 0).unwrap();
    if let Ok(p) = CalendarPattern::parse(text) {
        if let Some(next) = p.next_after(now, &zone) {
            assert!(next > now);
        }
        let _ = p.last_at_or_before(now, &zone);
    }
});
