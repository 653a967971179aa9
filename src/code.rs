//! The stable problem codes of docs/flows.md, shared by the timing core, the flow validator, the engine
//! and every adapter, so a code has one spelling in Rust, proto, SQL and docs.
//!
//! Besides the validator's codes it holds the few an enrollment can fail with at run time
//! (`EXPR_MISSING`, `LOOP_GUARD`, `UNSUPPORTED_STEP`, `FLOW_UNAVAILABLE`), so a journey's `failed` entry never
//! carries a spelling that exists only as a string literal somewhere.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A stable problem code (docs/flows.md, "Validation codes"). Serialized in `SCREAMING_SNAKE_CASE`, which is
/// exactly [`Code::as_str`] (a unit test holds them together).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Code {
    BadSchema,
    UnknownTarget,
    BadEvent,
    Cycle,
    BadDuration,
    BadUntil,
    BadTz,
    BadPattern,
    ForAndUntil,
    QuotedNumber,
    InterpolationRefused,
    ExprType,
    /// A timing slot's `$:` expression read a path with no value when its step was entered (a
    /// `signal.resume_on` the reply did not name, an input field not given): the step fails.
    /// Never a validation code, and never a request error: the enrollment fails with it, and the
    /// fix is in the flow (test the path with `exists` in a branch first).
    ExprMissing,
    UntilNotAllowed,
    WaitExceedsLimit,
    BadWindow,
    NeverMatches,
    BadPhone,
    ZoneUnknown,
    NoOpening,
    Unreachable,
    /// A path of more than [`crate::flow::LOOP_GUARD`] steps with none that lets time pass: one
    /// transition could not finish, so the flow is refused.
    TransitionTooLong,
    /// The engine entered more than [`crate::engine::interpret::LOOP_GUARD`] steps in one call.
    LoopGuard,
    /// A step type this version does not run reached the interpreter.
    UnsupportedStep,
    /// The planner could not load or parse the flow version an enrollment runs.
    FlowUnavailable,
    ContactHolidays,
    /// A step's `variants` or `experiment` is not one nudge can run: one variant, a duplicate
    /// or badly formed name, a weight that is not positive, a `params` key the variant may not
    /// set, steps sharing an experiment with different variant names.
    BadVariants,
    /// Moving enrollments to another version: their current step has no place in it (neither
    /// mapped nor present).
    UnmappedStep,
    /// Moving enrollments to another version: their current step would become a step of
    /// another type (a run is never re-entered, so its type cannot change).
    TypeChanged,
}

impl Code {
    /// Every code, in declaration order: what the spelling test walks.
    pub const ALL: [Code; 29] = [
        Code::BadSchema,
        Code::UnknownTarget,
        Code::BadEvent,
        Code::Cycle,
        Code::BadDuration,
        Code::BadUntil,
        Code::BadTz,
        Code::BadPattern,
        Code::ForAndUntil,
        Code::QuotedNumber,
        Code::InterpolationRefused,
        Code::ExprType,
        Code::ExprMissing,
        Code::UntilNotAllowed,
        Code::WaitExceedsLimit,
        Code::BadWindow,
        Code::NeverMatches,
        Code::BadPhone,
        Code::ZoneUnknown,
        Code::NoOpening,
        Code::Unreachable,
        Code::TransitionTooLong,
        Code::LoopGuard,
        Code::UnsupportedStep,
        Code::FlowUnavailable,
        Code::ContactHolidays,
        Code::BadVariants,
        Code::UnmappedStep,
        Code::TypeChanged,
    ];

    /// The wire spelling, e.g. `BAD_TZ`.
    pub fn as_str(self) -> &'static str {
        match self {
            Code::BadSchema => "BAD_SCHEMA",
            Code::UnknownTarget => "UNKNOWN_TARGET",
            Code::BadEvent => "BAD_EVENT",
            Code::Cycle => "CYCLE",
            Code::BadDuration => "BAD_DURATION",
            Code::BadUntil => "BAD_UNTIL",
            Code::BadTz => "BAD_TZ",
            Code::BadPattern => "BAD_PATTERN",
            Code::ForAndUntil => "FOR_AND_UNTIL",
            Code::QuotedNumber => "QUOTED_NUMBER",
            Code::InterpolationRefused => "INTERPOLATION_REFUSED",
            Code::ExprType => "EXPR_TYPE",
            Code::ExprMissing => "EXPR_MISSING",
            Code::UntilNotAllowed => "UNTIL_NOT_ALLOWED",
            Code::WaitExceedsLimit => "WAIT_EXCEEDS_LIMIT",
            Code::BadWindow => "BAD_WINDOW",
            Code::NeverMatches => "NEVER_MATCHES",
            Code::BadPhone => "BAD_PHONE",
            Code::ZoneUnknown => "ZONE_UNKNOWN",
            Code::NoOpening => "NO_OPENING",
            Code::Unreachable => "UNREACHABLE",
            Code::TransitionTooLong => "TRANSITION_TOO_LONG",
            Code::LoopGuard => "LOOP_GUARD",
            Code::UnsupportedStep => "UNSUPPORTED_STEP",
            Code::FlowUnavailable => "FLOW_UNAVAILABLE",
            Code::ContactHolidays => "CONTACT_HOLIDAYS",
            Code::BadVariants => "BAD_VARIANTS",
            Code::UnmappedStep => "UNMAPPED_STEP",
            Code::TypeChanged => "TYPE_CHANGED",
        }
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A code equals its wire spelling, so a check such as `code == "ZONE_UNKNOWN"` reads the same
/// whether `code` is a [`Code`] or the text of one.
impl PartialEq<str> for Code {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Code {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serde_spelling_is_as_str() {
        for code in Code::ALL {
            let json = serde_json::to_value(code).unwrap();
            assert_eq!(json, serde_json::Value::from(code.as_str()), "{code:?}");
            assert_eq!(serde_json::from_value::<Code>(json).unwrap(), code);
            assert_eq!(code.to_string(), code.as_str());
            assert!(code == code.as_str());
        }
        let mut spellings: Vec<&str> = Code::ALL.iter().map(|c| c.as_str()).collect();
        spellings.sort_unstable();
        spellings.dedup();
        assert_eq!(spellings.len(), Code::ALL.len(), "one spelling per code");
    }

    #[test]
    fn all_lists_every_code() {
        // No wildcard: a new variant stops this compiling, the reminder to add it to `ALL` (and
        // so to the spelling test above).
        let listed = |code: Code| match code {
            Code::BadSchema
            | Code::UnknownTarget
            | Code::BadEvent
            | Code::Cycle
            | Code::BadDuration
            | Code::BadUntil
            | Code::BadTz
            | Code::BadPattern
            | Code::ForAndUntil
            | Code::QuotedNumber
            | Code::InterpolationRefused
            | Code::ExprType
            | Code::ExprMissing
            | Code::UntilNotAllowed
            | Code::WaitExceedsLimit
            | Code::BadWindow
            | Code::NeverMatches
            | Code::BadPhone
            | Code::ZoneUnknown
            | Code::NoOpening
            | Code::Unreachable
            | Code::TransitionTooLong
            | Code::LoopGuard
            | Code::UnsupportedStep
            | Code::FlowUnavailable
            | Code::ContactHolidays
            | Code::BadVariants
            | Code::UnmappedStep
            | Code::TypeChanged => code,
        };
        assert!(Code::ALL.into_iter().map(listed).eq(Code::ALL));
    }
}
