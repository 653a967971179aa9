//! One `nudge timing` line: JSON, the window object, holidays, contact and every question kind
//! go through the same parsers as flows do. No panic, no hang, always one JSON answer.
#![no_main]
use libfuzzer_sys::fuzz_target;
use nudge::timing::question::answer_line;

fuzz_target!(|data: &[u8]| {
    let Ok(line) = std::str::from_utf8(data) else { return };
    let (answer, _ok) = answer_line(line);
    serde_json::from_str::<serde_json::Value>(&answer).expect("every answer is one JSON value");
});
