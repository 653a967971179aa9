//! The flow validator on arbitrary JSON: no panic, no hang, and a flow is built only when there
//! is no error.
#![no_main]
use libfuzzer_sys::fuzz_target;
use nudge::flow::{validate, Severity, ValidateOptions};

fuzz_target!(|data: &[u8]| {
    let Ok(json) = serde_json::from_slice::<serde_json::Value>(data) else { return };
    let v = validate(&json, &ValidateOptions::default());
    let has_error = v.problems.iter().any(|p| p.severity == Severity::Error);
    assert_eq!(v.flow.is_some(), !has_error);
});
