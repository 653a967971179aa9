//! `until` parsing and resolution: no panic, no hang.
#![no_main]
use chrono::{TimeZone, Utc};
use libfuzzer_sys::fuzz_target;
use nudge::timing::{Holidays, Until, Zone};

const ZONES: [&str; 5] = ["UTC", "Europe/Prague", "Australia/Lord_Howe", "Pacific/Apia", "+14:00"];

fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else { return };
    let Ok(text) = std::str::from_utf8(rest) else { return };
    let zone = Zone::parse(ZONES[first as usize % ZONES.len()]).unwrap();
    let now = Utc.timestamp_opt(1_774_000_000 + first as i64 * 97_003, 0).unwrap();
    let holidays = Holidays::parse(&["2026-12-24", "2026-12-25"]).unwrap();
    if let Ok(u) = Until::parse(text) {
        let _ = u.resolve(now, &zone, &holidays);
    }
});
