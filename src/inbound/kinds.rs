//! The kinds of inbound signal and the events each raises (docs/signals.md, "Kinds of signal and the events they raise").
//!
//! Every way a signal reaches nudge — a webhook, `ReportSignal`, `PostEvent`, a completed task —
//! ends as one [`SignalKind`]. Its [`raises`](SignalKind::raises) are what the engine routes
//! (docs/signals.md, "Routing"); an opt-out raises nothing and exits instead.

use crate::code::Code;
use crate::engine::{Signal, SignalFacts};
use crate::flow::events::Event;
use crate::inbound::classify::BounceType;
use crate::routing::Inbox;
use serde::{Deserialize, Serialize};
use std::fmt;

/// The channels that have a built-in `reply:<channel>` event.
pub const REPLY_CHANNELS: [&str; 3] = ["email", "sms", "linkedin"];
/// The channels a contact can opt out of (the contact store's channels).
pub const OPT_OUT_CHANNELS: [&str; 4] = ["email", "sms", "call", "linkedin"];

/// What kind of thing happened to the contact.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SignalKind {
    /// A reply on `channel` (`email`, `sms`, `linkedin`): an inbound email in a nudge thread, an
    /// inbound SMS, a reported reply, a `linkedin_message` task completed with `replied`.
    Reply {
        /// `email`, `sms` or `linkedin`: which `reply:<channel>` it raises besides `reply`.
        channel: String,
    },
    /// A connected call (a dialer, or a `call` task with a connected outcome). It also counts as
    /// a reply.
    CallConnected,
    /// A `linkedin_connect` task completed with `accepted`.
    ConnectionAccepted,
    /// A meeting on the sender's calendar with the contact, or one reported.
    MeetingBooked,
    /// A custom event posted by key (the key contains a `.`).
    Event {
        /// The custom event key, e.g. `payment.received`: the event it raises.
        key: String,
    },
    /// An unsubscribe or SMS `STOP`: exits every enrollment, blocks the channel.
    OptOut {
        /// The channel the contact leaves: one of [`OPT_OUT_CHANNELS`].
        channel: String,
    },
    /// An automatic answer to nudge's email (docs/signals.md, "Inbox signals"): raises `auto_reply`, never `reply`.
    AutoReply,
    /// An out-of-office notice: raises `out_of_office` and `auto_reply`.
    OutOfOffice {
        /// The first day back, when the text says.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        return_date: Option<chrono::NaiveDate>,
        /// Why no date is used, for the journey.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        note: Option<String>,
    },
    /// A delivery failure of nudge's email: hard and soft raise `bounced`, a delay nothing.
    Bounce {
        /// Hard (exits, blocks the address), soft, or delayed (journal-only).
        bounce: BounceType,
    },
    /// A meeting on the sender's calendar with the contact was cancelled.
    MeetingCancelled,
    /// The recipient marked nudge's email as spam (a provider's complaint event): exits every
    /// enrollment with `COMPLAINED` and blocks email to the address, like a hard bounce.
    Complaint,
    /// SMS `START`, `UNSTOP`, `YES`: ends the opt-out of `channel` (nothing is re-enrolled).
    OptIn {
        /// The channel opted back into.
        channel: String,
    },
    /// SMS `HELP`, `INFO`: journal-only.
    Help {
        /// The channel it came on.
        channel: String,
    },
}

/// Why a signal could not be built: the problem code, the offending text and how to fix it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {message}")]
pub struct KindError {
    /// `BAD_SCHEMA` for a bad channel, `BAD_EVENT` for a bad event key.
    pub code: Code,
    /// The text that was refused.
    pub text: String,
    /// What is wrong and how to fix it.
    pub message: String,
}

impl SignalKind {
    /// A reply on `channel`; refused unless it is one of [`REPLY_CHANNELS`].
    pub fn reply(channel: &str) -> Result<SignalKind, KindError> {
        if REPLY_CHANNELS.contains(&channel) {
            return Ok(SignalKind::Reply {
                channel: channel.to_string(),
            });
        }
        let hint = if channel == "call" {
            "; a connected call is the kind `call_connected` (it raises `call_connected` and `reply`)"
        } else {
            ""
        };
        Err(KindError {
            code: Code::BadSchema,
            text: channel.to_string(),
            message: format!(
                "{} is not a reply channel: use `email`, `sms` or `linkedin`{hint}",
                crate::quote::quote(channel)
            ),
        })
    }

    /// A custom event; the key must be a custom event key (contains a `.`, docs/signals.md, "Kinds of signal and the events they raise"), so a
    /// misspelt built-in event is never posted as a custom one.
    pub fn event(key: &str) -> Result<SignalKind, KindError> {
        let refuse = |message: String| KindError {
            code: Code::BadEvent,
            text: key.to_string(),
            message,
        };
        match Event::parse(key) {
            Ok(Event::Custom(key)) => Ok(SignalKind::Event { key }),
            Ok(built_in) => Err(refuse(format!(
                "`{built_in}` is a built-in event, raised by nudge itself; post a custom key that \
                 contains a `.` (like `payment.received`), or report a `{built_in}` signal with \
                 ReportSignal"
            ))),
            Err(hint) => Err(refuse(hint)),
        }
    }

    /// An opt-out of `channel`; refused unless it is one of [`OPT_OUT_CHANNELS`].
    pub fn opt_out(channel: &str) -> Result<SignalKind, KindError> {
        if OPT_OUT_CHANNELS.contains(&channel) {
            Ok(SignalKind::OptOut {
                channel: channel.to_string(),
            })
        } else {
            Err(KindError {
                code: Code::BadSchema,
                text: channel.to_string(),
                message: format!(
                    "{} is not a channel one can opt out of: use `email`, `sms`, `call` \
                     or `linkedin`",
                    crate::quote::quote(channel)
                ),
            })
        }
    }

    /// The kind's name as stored and shown (`reply`, `call_connected`, `event`, `opt_out`, …).
    pub fn name(&self) -> &'static str {
        match self {
            SignalKind::Reply { .. } => "reply",
            SignalKind::CallConnected => "call_connected",
            SignalKind::ConnectionAccepted => "connection_accepted",
            SignalKind::MeetingBooked => "meeting_booked",
            SignalKind::Event { .. } => "event",
            SignalKind::OptOut { .. } => "opt_out",
            SignalKind::AutoReply => "auto_reply",
            SignalKind::OutOfOffice { .. } => "out_of_office",
            SignalKind::Bounce { .. } => "bounce",
            SignalKind::MeetingCancelled => "meeting_cancelled",
            SignalKind::Complaint => "complaint",
            SignalKind::OptIn { .. } => "opt_in",
            SignalKind::Help { .. } => "help",
        }
    }

    /// The channel of a reply or an opt-out (a connected call is on `call`).
    pub fn channel(&self) -> Option<&str> {
        match self {
            SignalKind::Reply { channel }
            | SignalKind::OptOut { channel }
            | SignalKind::OptIn { channel }
            | SignalKind::Help { channel } => Some(channel),
            SignalKind::CallConnected => Some("call"),
            SignalKind::AutoReply
            | SignalKind::OutOfOffice { .. }
            | SignalKind::Bounce { .. }
            | SignalKind::Complaint => Some("email"),
            _ => None,
        }
    }

    /// The events it raises (docs/signals.md, "Kinds of signal and the events they raise"), the specific one first where there are two.
    pub fn raises(&self) -> Vec<String> {
        match self {
            SignalKind::Reply { channel } => vec!["reply".into(), format!("reply:{channel}")],
            SignalKind::CallConnected => vec!["call_connected".into(), "reply".into()],
            SignalKind::ConnectionAccepted => vec!["connection_accepted".into()],
            SignalKind::MeetingBooked => vec!["meeting_booked".into()],
            SignalKind::Event { key } => vec![key.clone()],
            SignalKind::OptOut { .. } => Vec::new(),
            SignalKind::AutoReply => vec!["auto_reply".into()],
            SignalKind::OutOfOffice { .. } => vec!["out_of_office".into(), "auto_reply".into()],
            SignalKind::Bounce {
                bounce: BounceType::Hard | BounceType::Soft,
            } => vec!["bounced".into()],
            SignalKind::Bounce {
                bounce: BounceType::Delayed,
            } => Vec::new(),
            SignalKind::MeetingCancelled => vec!["meeting_cancelled".into()],
            SignalKind::OptIn { .. } | SignalKind::Help { .. } | SignalKind::Complaint => {
                Vec::new()
            }
        }
    }

    /// The events it raises when a reply's words were classified as `intent`: `intent:<x>`
    /// first, then [`raises`](SignalKind::raises). Only a reply has an intent; any other kind
    /// raises what it always does.
    pub fn raises_with(&self, intent: Option<crate::inbound::intent::Intent>) -> Vec<String> {
        let mut raises = self.raises();
        if let (SignalKind::Reply { .. }, Some(intent)) = (self, intent) {
            raises.insert(0, intent.event().to_string());
        }
        raises
    }

    /// The signal a reply is once its words are read: an unsubscribe in words is an opt-out of
    /// the channel it came on (every enrollment exits, the channel is blocked), unless the
    /// account lets the flow decide (`event`). Any other signal, or intent, is unchanged.
    pub fn settle(
        self,
        reading: Option<&crate::inbound::intent::ReplyIntent>,
        policy: crate::inbound::intent::ReplyUnsubscribe,
    ) -> SignalKind {
        use crate::inbound::intent::{Intent, ReplyUnsubscribe};
        match (self, reading.map(|r| r.intent), policy) {
            (
                SignalKind::Reply { channel },
                Some(Intent::Unsubscribe),
                ReplyUnsubscribe::OptOut,
            ) => SignalKind::OptOut { channel },
            (kind, _, _) => kind,
        }
    }

    /// What an inbox signal is for routing (docs/signals.md, "Inbox signals"); `None` for an ordinary signal.
    pub fn inbox(&self) -> Option<Inbox> {
        match self {
            SignalKind::AutoReply => Some(Inbox::AutoReply),
            SignalKind::OutOfOffice { return_date, note } => Some(Inbox::OutOfOffice {
                return_date: *return_date,
                note: note.clone(),
            }),
            SignalKind::Bounce { bounce } => Some(match bounce {
                BounceType::Hard => Inbox::HardBounce,
                BounceType::Soft => Inbox::SoftBounce,
                BounceType::Delayed => Inbox::Noted {
                    what: "a delayed delivery (still being retried)".into(),
                },
            }),
            SignalKind::Complaint => Some(Inbox::Complaint),
            SignalKind::OptIn { channel } => Some(Inbox::OptIn {
                channel: channel.clone(),
            }),
            SignalKind::Help { channel } => Some(Inbox::Noted {
                what: format!("a {channel} HELP/INFO request"),
            }),
            _ => None,
        }
    }

    /// The signal an inbound email of class `class` is (docs/signals.md, "Inbox signals").
    pub fn of_mail(class: &crate::inbound::classify::MailClass) -> SignalKind {
        use crate::inbound::classify::MailClass;
        use crate::inbound::return_date::ReturnDate;
        match class {
            MailClass::Reply => SignalKind::Reply {
                channel: "email".into(),
            },
            MailClass::AutoReply => SignalKind::AutoReply,
            MailClass::OutOfOffice(found) => {
                let (return_date, note) = match found {
                    ReturnDate::On(d) => (Some(*d), None),
                    ReturnDate::Unusable(why) => (None, Some(why.clone())),
                    ReturnDate::NotStated => (None, None),
                };
                SignalKind::OutOfOffice { return_date, note }
            }
            MailClass::Bounce { bounce, .. } => SignalKind::Bounce { bounce: *bounce },
            MailClass::Unsubscribe => SignalKind::OptOut {
                channel: "email".into(),
            },
        }
    }

    /// True for a signal that changes the contact before it is routed (an opt-out, a hard
    /// bounce, an opt-in): it takes the one-signal path, like an opt-out always has.
    pub fn marks_contact(&self) -> bool {
        matches!(
            self,
            SignalKind::OptOut { .. }
                | SignalKind::OptIn { .. }
                | SignalKind::Complaint
                | SignalKind::Bounce {
                    bounce: BounceType::Hard
                }
        )
    }

    /// The opt-out channel, when it is one.
    pub fn opt_out_channel(&self) -> Option<&str> {
        match self {
            SignalKind::OptOut { channel } => Some(channel),
            _ => None,
        }
    }

    /// The engine's input for a stored signal `id` with `payload` (`null` becomes `{}`: a null
    /// never means anything but a timeout, seed 001).
    pub fn to_engine(&self, id: &str, payload: serde_json::Value) -> Signal {
        Signal {
            id: id.to_string(),
            raises: self.raises(),
            opt_out: self.opt_out_channel().map(str::to_string),
            payload: non_null(payload),
            inbox: self.inbox(),
            facts: self.facts(None),
        }
    }

    /// What `signal.*` reads of it: a reply's or a connected call's channel, and what a
    /// reply's words said (`reading`, when they were classified).
    pub fn facts(&self, reading: Option<&crate::inbound::intent::ReplyIntent>) -> SignalFacts {
        match self {
            SignalKind::Reply { channel } => SignalFacts::of_reply(channel, reading),
            SignalKind::CallConnected => SignalFacts {
                channel: Some("call".into()),
                ..SignalFacts::default()
            },
            _ => SignalFacts::default(),
        }
    }
}

impl fmt::Display for SignalKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SignalKind::Reply { channel } => write!(f, "reply ({channel})"),
            SignalKind::Event { key } => write!(f, "event {key}"),
            SignalKind::OptOut { channel } => write!(f, "opt-out ({channel})"),
            other => f.write_str(other.name()),
        }
    }
}

/// `{}` for a JSON `null`, the value itself otherwise.
pub fn non_null(payload: serde_json::Value) -> serde_json::Value {
    if payload.is_null() {
        serde_json::json!({})
    } else {
        payload
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn k(kind: Result<SignalKind, KindError>) -> SignalKind {
        kind.unwrap()
    }

    /// Every row of docs/signals.md, "Kinds of signal and the events they raise": (what happened, its kind, the events it raises, opt-out channel).
    #[test]
    fn each_signal_raises_exactly_the_spec_events() {
        let rows: Vec<(&str, SignalKind, &[&str], Option<&str>)> = vec![
            (
                "inbound email in a nudge thread",
                k(SignalKind::reply("email")),
                &["reply", "reply:email"],
                None,
            ),
            (
                "inbound SMS from the contact's number",
                k(SignalKind::reply("sms")),
                &["reply", "reply:sms"],
                None,
            ),
            (
                "linkedin_message task completed with replied",
                k(SignalKind::reply("linkedin")),
                &["reply", "reply:linkedin"],
                None,
            ),
            (
                "a call connected",
                SignalKind::CallConnected,
                &["call_connected", "reply"],
                None,
            ),
            (
                "linkedin_connect accepted",
                SignalKind::ConnectionAccepted,
                &["connection_accepted"],
                None,
            ),
            (
                "calendar event / reported meeting",
                SignalKind::MeetingBooked,
                &["meeting_booked"],
                None,
            ),
            (
                "custom event",
                k(SignalKind::event("payment.received")),
                &["payment.received"],
                None,
            ),
            ("SMS STOP", k(SignalKind::opt_out("sms")), &[], Some("sms")),
            (
                "email unsubscribe",
                k(SignalKind::opt_out("email")),
                &[],
                Some("email"),
            ),
        ];
        for (what, kind, raises, opt_out) in rows {
            let signal = kind.to_engine("sg_1", serde_json::Value::Null);
            assert_eq!(signal.raises, *raises, "{what}");
            assert_eq!(signal.opt_out.as_deref(), opt_out, "{what}");
            assert_eq!(signal.id, "sg_1");
            assert_eq!(signal.payload, json!({}), "{what}: null becomes {{}}");
            // Every raised event is a valid flow event name.
            for event in &signal.raises {
                assert!(Event::parse(event).is_ok(), "{what}: {event}");
            }
        }
    }

    #[test]
    fn the_payload_of_a_custom_event_is_kept() {
        let s = k(SignalKind::event("payment.42")).to_engine("sg_2", json!({"amount": 5}));
        assert_eq!(s.payload, json!({"amount": 5}));
    }

    #[test]
    fn refusals_name_the_text_and_how_to_fix_it() {
        let cases: Vec<(Result<SignalKind, KindError>, Code, &str)> = vec![
            (
                SignalKind::reply("fax"),
                Code::BadSchema,
                "`email`, `sms` or `linkedin`",
            ),
            (SignalKind::reply("call"), Code::BadSchema, "call_connected"),
            (SignalKind::event("reply"), Code::BadEvent, "built-in event"),
            (
                SignalKind::event("payment"),
                Code::BadEvent,
                "contains a `.`",
            ),
            (
                SignalKind::event("replied"),
                Code::BadEvent,
                "Did you mean `reply`",
            ),
            (SignalKind::event("pay..x"), Code::BadEvent, "no empty part"),
            (
                SignalKind::event("pay ment.x"),
                Code::BadEvent,
                "only letters",
            ),
            (
                SignalKind::opt_out("pigeon"),
                Code::BadSchema,
                "`email`, `sms`, `call`",
            ),
        ];
        for (result, code, hint) in cases {
            let e = result.unwrap_err();
            assert_eq!(e.code, code, "{e}");
            assert!(e.message.contains(hint), "{} lacks {hint}", e.message);
            assert!(e.message.contains(&format!("`{}`", e.text)) || e.text.contains(' '));
        }
    }

    #[test]
    fn names_and_channels() {
        assert_eq!(k(SignalKind::reply("sms")).name(), "reply");
        assert_eq!(k(SignalKind::reply("sms")).channel(), Some("sms"));
        assert_eq!(SignalKind::CallConnected.channel(), Some("call"));
        assert_eq!(SignalKind::MeetingBooked.channel(), None);
        assert_eq!(k(SignalKind::opt_out("sms")).name(), "opt_out");
        let json = serde_json::to_value(k(SignalKind::event("a.b"))).unwrap();
        assert_eq!(json, json!({"kind": "event", "key": "a.b"}));
    }
}
