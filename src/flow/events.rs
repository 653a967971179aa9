//! Event names (docs/signals.md, "Kinds of signal and the events they raise"): what a `wait_for` lists, what `next` wires and what `exit_on` names.
//!
//! The built-in events are a closed set; a custom event (posted by key, docs/signals.md, "Custom events") always contains
//! a `.` (`payment.received`), so a misspelt built-in (`replied`) can never pass for a custom key.

use crate::inbound::intent::Intent;
use crate::quote::quote;
use std::fmt;

/// An event a signal can raise.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Event {
    /// Any reply, on any channel (a connected call counts, docs/signals.md, "Kinds of signal and the events they raise").
    Reply,
    /// A reply by email only.
    ReplyEmail,
    /// A reply by SMS only.
    ReplySms,
    /// A LinkedIn reply only (a `linkedin_message` task completed with `replied`).
    ReplyLinkedin,
    /// A `call` task completed with one of its `connected_outcomes`.
    CallConnected,
    /// A `linkedin_connect` task completed with `accepted`.
    ConnectionAccepted,
    /// A meeting with the contact on the sender's calendar, or one reported.
    MeetingBooked,
    /// An automatic answer (docs/signals.md, "Inbox signals"): never a `reply`.
    AutoReply,
    /// An out-of-office notice (it is an `auto_reply` too).
    OutOfOffice,
    /// A delivery failure of nudge's email (hard or soft).
    Bounced,
    /// A meeting on the sender's calendar with the contact was cancelled.
    MeetingCancelled,
    /// `intent:<name>`: a human reply whose words say `<name>` (it comes with `reply` and
    /// `reply:<channel>`, and wins over both when a `wait_for` lists them together).
    Intent(Intent),
    /// A custom event key (contains a `.`), posted with `PostEvent` / `POST /events/{key}`.
    Custom(String),
}

/// The prefix of the six intent events (`intent:interested`, …).
pub const INTENT_PREFIX: &str = "intent:";

/// The built-in event names, in the order docs list them.
pub const BUILT_IN: [&str; 11] = [
    "reply",
    "reply:email",
    "reply:sms",
    "reply:linkedin",
    "call_connected",
    "connection_accepted",
    "meeting_booked",
    "auto_reply",
    "out_of_office",
    "bounced",
    "meeting_cancelled",
];

impl Event {
    /// Parses an event name; the error is a hint that says how to fix it.
    pub fn parse(text: &str) -> Result<Event, String> {
        Ok(match text {
            "reply" => Event::Reply,
            "reply:email" => Event::ReplyEmail,
            "reply:sms" => Event::ReplySms,
            "reply:linkedin" => Event::ReplyLinkedin,
            "call_connected" => Event::CallConnected,
            "connection_accepted" => Event::ConnectionAccepted,
            "meeting_booked" => Event::MeetingBooked,
            "auto_reply" => Event::AutoReply,
            "out_of_office" => Event::OutOfOffice,
            "bounced" => Event::Bounced,
            "meeting_cancelled" => Event::MeetingCancelled,
            _ if text.starts_with(INTENT_PREFIX) => return parse_intent(text).map(Event::Intent),
            _ if text.contains('.') => return parse_custom(text).map(Event::Custom),
            _ => return Err(unknown_hint(text)),
        })
    }

    /// The name as written in flows and journeys.
    pub fn as_str(&self) -> &str {
        match self {
            Event::Reply => "reply",
            Event::ReplyEmail => "reply:email",
            Event::ReplySms => "reply:sms",
            Event::ReplyLinkedin => "reply:linkedin",
            Event::CallConnected => "call_connected",
            Event::ConnectionAccepted => "connection_accepted",
            Event::MeetingBooked => "meeting_booked",
            Event::AutoReply => "auto_reply",
            Event::OutOfOffice => "out_of_office",
            Event::Bounced => "bounced",
            Event::MeetingCancelled => "meeting_cancelled",
            Event::Intent(intent) => intent.event(),
            Event::Custom(key) => key,
        }
    }

    /// True when every signal that raises this event also raises one in `exit_on`, so the
    /// enrollment always exits before a `wait_for` could wake on it (docs/signals.md, "Routing": exits come
    /// before waking). `reply:<channel>` and `call_connected` always come with `reply`;
    /// `out_of_office` always comes with `auto_reply`; an intent comes with `reply` (only a
    /// human reply is classified).
    pub fn always_exits(&self, exit_on: &[Event]) -> bool {
        let with_reply = matches!(
            self,
            Event::ReplyEmail
                | Event::ReplySms
                | Event::ReplyLinkedin
                | Event::CallConnected
                | Event::Intent(_)
        );
        exit_on.contains(self)
            || (with_reply && exit_on.contains(&Event::Reply))
            || (*self == Event::OutOfOffice && exit_on.contains(&Event::AutoReply))
    }

    /// True for a custom key.
    pub fn is_custom(&self) -> bool {
        matches!(self, Event::Custom(_))
    }
}

impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `intent:<name>`, one of the six intents; a misspelt one says which exist.
fn parse_intent(text: &str) -> Result<Intent, String> {
    let name = &text[INTENT_PREFIX.len()..];
    if let Some(intent) = Intent::parse(name) {
        return Ok(intent);
    }
    let lower = name.to_ascii_lowercase();
    let suggestion = Intent::ALL
        .iter()
        .map(|i| (edit_distance(&lower, i.as_str()), i.event()))
        .filter(|(d, _)| *d <= 3)
        .min()
        .map(|(_, e)| format!(" Did you mean `{e}`?"))
        .unwrap_or_default();
    Err(format!(
        "{} is not an intent event.{suggestion} A reply's intent is one of {}",
        quote(text),
        Intent::ALL.map(|i| format!("`{}`", i.event())).join(", ")
    ))
}

/// A custom key: segments of `[A-Za-z0-9_-]` joined by single dots, so it is safe as a URL path
/// segment of `POST /events/{key}` and never collides with a built-in name.
fn parse_custom(text: &str) -> Result<String, String> {
    let ok_char = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    if let Some(bad) = text.chars().find(|&c| !ok_char(c) && c != '.') {
        return Err(format!(
            "{}: a custom event key may contain only letters, digits, `_`, `-` and dots, not {bad:?}",
            quote(text)
        ));
    }
    if text.split('.').any(str::is_empty) {
        return Err(format!(
            "{}: a custom event key is dot-separated words, with no empty part (like `payment.received`)",
            quote(text)
        ));
    }
    Ok(text.to_string())
}

fn unknown_hint(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let suggestion = BUILT_IN
        .iter()
        .map(|b| (edit_distance(&lower, b), b))
        .filter(|(d, b)| *d <= 3.max(b.len() / 3))
        .min()
        .map(|(_, b)| format!(" Did you mean `{b}`?"))
        .unwrap_or_default();
    format!(
        "{} is not an event.{suggestion} Built-in events are {}; a reply's intent is `intent:<name>` (like `intent:not_now`); a custom event key contains a `.` (like `payment.received`)",
        quote(text),
        BUILT_IN.map(|b| format!("`{b}`")).join(", ")
    )
}

/// Levenshtein distance, for "did you mean" hints.
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_ins_round_trip() {
        for name in BUILT_IN {
            let e = Event::parse(name).unwrap();
            assert_eq!(e.as_str(), name);
            assert!(!e.is_custom());
        }
    }

    #[test]
    fn names() {
        let cases: &[(&str, Option<Event>)] = &[
            ("reply", Some(Event::Reply)),
            (
                "payment.received",
                Some(Event::Custom("payment.received".into())),
            ),
            ("payment.42", Some(Event::Custom("payment.42".into()))),
            ("a.b-c_d.e", Some(Event::Custom("a.b-c_d.e".into()))),
            ("replied", None),
            ("Reply", None),
            ("reply:call", None),
            ("reply:", None),
            ("", None),
            ("payment.", None),
            (".payment", None),
            ("pay..ment", None),
            ("pay ment.x", None),
            ("payment/x.y", None),
            ("intent:not_now", Some(Event::Intent(Intent::NotNow))),
            (
                "intent:unsubscribe",
                Some(Event::Intent(Intent::Unsubscribe)),
            ),
            ("intent:other", Some(Event::Intent(Intent::Other))),
            ("intent:", None),
            ("intent:maybe", None),
            ("intent:Interested", None),
            ("intent:not_now.x", None),
        ];
        for (text, want) in cases {
            assert_eq!(Event::parse(text).ok(), *want, "{text:?}");
        }
    }

    #[test]
    fn unknown_suggests_the_built_in() {
        let hint = Event::parse("replied").unwrap_err();
        assert!(hint.contains("Did you mean `reply`?"), "{hint}");
        let hint = Event::parse("MEETING_BOOKED").unwrap_err();
        assert!(hint.contains("Did you mean `meeting_booked`?"), "{hint}");
        let hint = Event::parse("conection_accepted").unwrap_err();
        assert!(
            hint.contains("Did you mean `connection_accepted`?"),
            "{hint}"
        );
        let hint = Event::parse("banana").unwrap_err();
        assert!(!hint.contains("Did you mean"), "{hint}");
    }

    #[test]
    fn intents_round_trip_and_a_misspelt_one_is_named() {
        for intent in Intent::ALL {
            let e = Event::parse(intent.event()).unwrap();
            assert_eq!(e, Event::Intent(intent));
            assert_eq!(e.as_str(), intent.event());
        }
        let hint = Event::parse("intent:not_interessted").unwrap_err();
        assert!(
            hint.contains("Did you mean `intent:not_interested`?"),
            "{hint}"
        );
        let hint = Event::parse("intent:maybe").unwrap_err();
        assert!(hint.contains("`intent:wrong_person`"), "{hint}");
        let hint = Event::parse("intnt:no").unwrap_err();
        assert!(hint.contains("`intent:<name>`"), "{hint}");
    }

    #[test]
    fn an_intent_always_exits_where_reply_does() {
        let intent = Event::Intent(Intent::Interested);
        assert!(intent.always_exits(&[Event::Reply]));
        assert!(!intent.always_exits(&[Event::ReplyEmail]));
        assert!(intent.always_exits(std::slice::from_ref(&intent)));
        assert!(!intent.always_exits(&[Event::Intent(Intent::NotNow)]));
    }

    #[test]
    fn edit_distances() {
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("reply", "reply"), 0);
    }
}
