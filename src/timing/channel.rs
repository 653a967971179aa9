//! The channels outreach and tasks go out on. One type for the whole crate: the timing core
//! reads it for the SMS window, the engine writes it on dispatches, a contact opts out of it,
//! and the API parses it at the edge.

use crate::code::Code;
use crate::timing::error::TimingError;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// The channel of an outreach step or task, and what a contact can opt out of. Only SMS has
/// the SMS window (docs/timing.md, "Send windows"). Spelled in lower case everywhere: proto, SQL, JSON, docs.
///
/// The variants are declared in alphabetical order on purpose: the derived `Ord` then sorts
/// like the spellings, which is the order a contact's opt-outs are stored and shown in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Channel {
    /// A phone call: the `call` task.
    Call,
    /// Email: the `email` step.
    Email,
    /// LinkedIn: the `linkedin_connect` and `linkedin_message` tasks.
    Linkedin,
    /// SMS: the `sms` step, the only channel with the SMS window.
    Sms,
}

impl Channel {
    /// Every channel, in `Ord` (alphabetical) order.
    pub const ALL: [Channel; 4] = [
        Channel::Call,
        Channel::Email,
        Channel::Linkedin,
        Channel::Sms,
    ];

    /// Whether quiet hours (08:00–21:00 in every candidate zone, and the policy's place rules)
    /// apply: SMS and calls, since telephone solicitation rules cover both (docs/timing.md, "Holiday calendars and quiet hours").
    pub fn has_quiet_hours(self) -> bool {
        matches!(self, Channel::Sms | Channel::Call)
    }

    /// The wire spelling (`email`, …); the same as its serde spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Channel::Call => "call",
            Channel::Email => "email",
            Channel::Linkedin => "linkedin",
            Channel::Sms => "sms",
        }
    }
}

impl fmt::Display for Channel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Exactly the wire spelling, lower case: a stored or posted `SMS` is refused, not guessed.
impl FromStr for Channel {
    type Err = TimingError;

    fn from_str(text: &str) -> Result<Channel, TimingError> {
        Channel::ALL
            .into_iter()
            .find(|c| c.as_str() == text)
            .ok_or_else(|| {
                TimingError::new(
                    Code::BadSchema,
                    text,
                    None,
                    "a channel is one of `email`, `sms`, `call`, `linkedin`",
                )
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_round_trip() {
        for c in Channel::ALL {
            let json = serde_json::to_value(c).unwrap();
            assert_eq!(json, serde_json::Value::from(c.as_str()), "{c:?}");
            assert_eq!(serde_json::from_value::<Channel>(json).unwrap(), c);
            assert_eq!(c.as_str().parse::<Channel>().unwrap(), c);
            assert_eq!(c.to_string(), c.as_str());
        }
        let e = "SMS".parse::<Channel>().unwrap_err();
        assert_eq!((e.code, e.text.as_str()), (Code::BadSchema, "SMS"));
        assert!("fax".parse::<Channel>().is_err());
    }

    #[test]
    fn order_is_the_spellings_order() {
        let mut sorted = Channel::ALL;
        sorted.sort_by_key(|c| c.as_str());
        assert_eq!(sorted, Channel::ALL);
    }
}
