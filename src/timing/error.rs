//! The one error type of the timing core: a problem code, the offending text, where in it, and a
//! hint that says how to fix it.

use crate::code::Code;
use std::fmt;

/// A refusal from the timing core. Every parser and resolver returns this, so adapters can map
/// it to a gRPC field violation, a JSON Lines answer or a validator problem without guessing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimingError {
    /// The problem code (`BAD_DURATION`, `BAD_TZ`, …; docs/flows.md, "Validation codes").
    pub code: Code,
    /// The whole text that was refused, as given.
    pub text: String,
    /// Byte offset into `text` of the offending part, when there is one.
    pub position: Option<usize>,
    /// What went wrong and how to fix it, e.g. "`M` is not a unit: use `mo` for months or `m`
    /// for minutes".
    pub hint: String,
}

impl TimingError {
    /// A refusal with `code` of `text` (at byte `position`, if known), saying how to fix it.
    pub fn new(
        code: Code,
        text: impl Into<String>,
        position: Option<usize>,
        hint: impl Into<String>,
    ) -> Self {
        TimingError {
            code,
            text: text.into(),
            position,
            hint: hint.into(),
        }
    }
}

impl TimingError {
    /// What a person reads beside the code: the text (quoted, at most 200 characters of it),
    /// where in it, and the hint; the hint alone when nothing was written (a missing zone) or
    /// when the hint quotes the whole text itself (`` `CET` is an abbreviation… ``).
    pub fn message(&self) -> String {
        let text = crate::quote::quote_debug(&self.text);
        let hint_quotes_it = self.hint.contains(&format!("`{}`", self.text));
        match (self.text.is_empty(), self.position) {
            (true, _) => self.hint.clone(),
            (false, None) if hint_quotes_it => self.hint.clone(),
            (false, Some(p)) => format!("{text} at position {p}: {}", self.hint),
            (false, None) => format!("{text}: {}", self.hint),
        }
    }
}

/// `CODE: message`, for a log line or a CLI answer that has no separate place for the code.
impl fmt::Display for TimingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message())
    }
}

impl std::error::Error for TimingError {}
