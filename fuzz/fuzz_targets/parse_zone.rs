//! `tz` slots: no panic on any text; an accepted zone converts both ways.
#![no_main]
use chrono::{TimeZone, Utc};
use libfuzzer_sys::fuzz_target;
use nudge::timing::Zone;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(zone) = Zone::parse(text) {
        let now = Utc.timestamp_opt(1_774_000_000, 0).unwrap();
        let local = zone.to_local(now);
        let _ = zone.to_instant(local);
        assert_eq!(Zone::parse(&zone.name()), Ok(zone));
    }
});
