//! The stable problem codes of SPEC §1, shared by the timing core, the flow validator, the engine
//! and every adapter, so a code has one spelling in Rust, proto, SQL and docs.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A stable problem code (SPEC §1 "Validation"). Serialized in `SCREAMING_SNAKE_CASE`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
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
    UntilNotAllowed,
    WaitExceedsLimit,
    BadWindow,
    NeverMatches,
    BadPhone,
    ZoneUnknown,
    NoOpening,
    Unreachable,
}

impl Code {
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
            Code::UntilNotAllowed => "UNTIL_NOT_ALLOWED",
            Code::WaitExceedsLimit => "WAIT_EXCEEDS_LIMIT",
            Code::BadWindow => "BAD_WINDOW",
            Code::NeverMatches => "NEVER_MATCHES",
            Code::BadPhone => "BAD_PHONE",
            Code::ZoneUnknown => "ZONE_UNKNOWN",
            Code::NoOpening => "NO_OPENING",
            Code::Unreachable => "UNREACHABLE",
        }
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
