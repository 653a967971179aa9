//! Phone parsing and the prefix-to-zone lookup: no panic, no hang, and an accepted number's
//! E.164 form is accepted again with the same zones.
#![no_main]
use libfuzzer_sys::fuzz_target;
use nudge::timing::phone_zones;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(p) = phone_zones(text) {
        let again = phone_zones(&p.e164).expect("an E.164 answer parses again");
        assert_eq!(again.e164, p.e164);
        assert_eq!(again.zones, p.zones);
    }
});
