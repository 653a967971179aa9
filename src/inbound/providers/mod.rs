//! Providers' own webhooks, the pure part (docs/providers.md): each provider's request — checked on its
//! raw bytes, in constant time — read into [`Notice`]s, what nudge acts on in its own terms.
//! No I/O here: the edge reads the body and the account's secret ([`crate::api::http::webhooks`]),
//! the service acts on the notices ([`crate::service::providers`]).
//!
//! - [`Provider`]: whose secret an account holds, and how each secret is written.
//! - [`form`]: a request body as fields (URL-encoded, or multipart as the edge read it).
//! - [`mailgun`]: Routes `forward()` (inbound mail) and event webhooks; HMAC of timestamp‖token.
//! - [`sendgrid`]: Inbound Parse (parsed fields or raw MIME, charsets honoured; basic auth) and
//!   the signed Event Webhook (ECDSA P-256 over timestamp‖body).
//! - [`postmark`]: inbound JSON and Bounce / SpamComplaint / SubscriptionChange (basic auth).
//! - [`ses`]: Amazon SES notifications through SNS (RSA signatures v1 and v2, the certificate's
//!   URL checked).
//! - [`twilio`]: message status callbacks and Voice call status callbacks.
//! - [`calendar`]: Calendly v2 (`Calendly-Webhook-Signature`) and Cal.com
//!   (`X-Cal-Signature-256`) bookings.
//! - [`basic`]: HTTP Basic credentials compared in constant time.

#![warn(missing_docs)]

pub mod basic;
pub mod calendar;
pub mod form;
pub mod mailgun;
pub mod postmark;
pub mod sendgrid;
pub mod ses;
pub mod twilio;

use super::classify::BounceType;
use super::mail::Mail;
use chrono::{DateTime, Utc};
use std::fmt;

/// A provider whose webhooks an account can receive, by the secret it checks them with. The
/// spelling ([`Provider::as_str`]) is the CLI's, the API's and the stored one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Provider {
    /// Mailgun's HTTP webhook signing key (Routes `forward()` and event webhooks).
    Mailgun,
    /// The `user:password` SendGrid's Inbound Parse URL carries.
    Sendgrid,
    /// SendGrid's Event Webhook verification key (base64 DER, as SendGrid shows it).
    SendgridEvents,
    /// The `user:password` Postmark's webhook URLs carry.
    Postmark,
    /// The SNS topics (ARNs, one a line) whose SES notifications the account takes.
    Ses,
    /// Calendly's webhook signing key.
    Calendly,
    /// Cal.com's webhook secret.
    Calcom,
    /// Twilio's auth token (SMS, message status and Voice webhooks).
    Twilio,
}

/// The longest secret accepted (a SendGrid key is 124 characters; a list of topics grows).
pub const MAX_SECRET_CHARS: usize = 16 * 1024;

impl Provider {
    /// Every provider, in the order listings show them.
    pub const ALL: [Provider; 8] = [
        Provider::Mailgun,
        Provider::Sendgrid,
        Provider::SendgridEvents,
        Provider::Postmark,
        Provider::Ses,
        Provider::Calendly,
        Provider::Calcom,
        Provider::Twilio,
    ];

    /// The spelling of the CLI, the API and the database.
    pub fn as_str(self) -> &'static str {
        match self {
            Provider::Mailgun => "mailgun",
            Provider::Sendgrid => "sendgrid",
            Provider::SendgridEvents => "sendgrid-events",
            Provider::Postmark => "postmark",
            Provider::Ses => "ses",
            Provider::Calendly => "calendly",
            Provider::Calcom => "calcom",
            Provider::Twilio => "twilio",
        }
    }

    /// The provider spelled `text` (any case); the refusal lists them all.
    pub fn parse(text: &str) -> Result<Provider, String> {
        let wanted = text.trim().to_ascii_lowercase();
        Provider::ALL
            .into_iter()
            .find(|p| p.as_str() == wanted)
            .ok_or_else(|| {
                format!(
                    "{} is not a provider: use one of {}",
                    crate::quote::quote(text),
                    Provider::ALL.map(Provider::as_str).join(", ")
                )
            })
    }

    /// What the secret is, for help texts and refusals.
    pub fn what(self) -> &'static str {
        match self {
            Provider::Mailgun => "the HTTP webhook signing key (Mailgun: Sending → Webhooks)",
            Provider::Sendgrid => {
                "the `user:password` of the basic-auth credentials in the Inbound Parse URL"
            }
            Provider::SendgridEvents => {
                "the Event Webhook's verification key (base64 DER, `MFkw…`, from Mail Settings \
                 → Signed Event Webhook)"
            }
            Provider::Postmark => {
                "the `user:password` of the basic-auth credentials in the webhook URLs"
            }
            Provider::Ses => "the SNS topic ARNs to take notifications from, one a line",
            Provider::Calendly => "the webhook subscription's signing key",
            Provider::Calcom => "the webhook's secret",
            Provider::Twilio => "the account's auth token (Twilio console)",
        }
    }

    /// Checks a secret as it is set and returns the form stored: surrounding space trimmed, a
    /// PEM armour removed from a SendGrid key, blank lines dropped from a topic list. The
    /// refusal says what is wrong and never quotes the secret.
    pub fn check_secret(self, text: &str) -> Result<String, String> {
        let text = text.trim();
        if text.is_empty() {
            return Err(format!("the secret is empty: give {}", self.what()));
        }
        if text.chars().count() > MAX_SECRET_CHARS {
            return Err(format!(
                "the secret is longer than {MAX_SECRET_CHARS} characters: give {}",
                self.what()
            ));
        }
        match self {
            Provider::Sendgrid | Provider::Postmark => {
                basic::Credentials::parse(text).map(|_| text.to_string())
            }
            Provider::SendgridEvents => sendgrid::VerificationKey::parse(text).map(|k| k.base64),
            Provider::Ses => ses::parse_topics(text).map(|topics| topics.join("\n")),
            Provider::Mailgun | Provider::Calendly | Provider::Calcom | Provider::Twilio => {
                if text.chars().any(|c| c.is_whitespace() || c.is_control()) {
                    return Err(format!(
                        "the secret holds a space or a control character: give {} alone, \
                         on one line",
                        self.what()
                    ));
                }
                Ok(text.to_string())
            }
        }
    }
}

impl fmt::Display for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a provider's request was refused: the status class the edge answers with, and a
/// message that names what is wrong and how to fix it. Nothing is stored on any of them.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// 401: a missing, forged or stale signature, or wrong credentials.
    #[error("{0}")]
    Unauthenticated(String),
    /// 401 too: a signature (or a Mailgun token) used before; the first request's effects
    /// stand. (A provider's retry of an event it already delivered is not this: it is the same
    /// provider id, answered as a duplicate with 2xx.)
    #[error("{0}")]
    Replayed(String),
    /// 415: a body of a content type the provider does not send there.
    #[error("{0}")]
    ContentType(String),
    /// 422: a body that does not parse, or lacks a field nudge needs.
    #[error("{0}")]
    Malformed(String),
}

/// Refuses as [`Refusal::Malformed`].
pub(crate) fn malformed(message: impl Into<String>) -> Refusal {
    Refusal::Malformed(message.into())
}

/// Refuses as [`Refusal::Unauthenticated`].
pub(crate) fn forged(message: impl Into<String>) -> Refusal {
    Refusal::Unauthenticated(message.into())
}

/// A verified request, read: what it reports, and the signature to refuse if it is sent again
/// (a Mailgun token, a Calendly signature; `None` where the provider's ids deduplicate).
#[derive(Debug, Clone, PartialEq)]
pub struct Reading {
    /// What the request reports, in order (a SendGrid batch holds many).
    pub notices: Vec<Notice>,
    /// The replay key to remember (`mailgun:<token>`), stored with what the request stores.
    pub replay: Option<String>,
}

impl Reading {
    /// One notice, no replay key.
    pub fn one(notice: Notice) -> Reading {
        Reading {
            notices: vec![notice],
            replay: None,
        }
    }
}

/// What a provider's request reports, in nudge's terms.
#[derive(Debug, Clone, PartialEq)]
pub enum Notice {
    /// An inbound email (a reply, an auto-reply, a DSN, …), classified and routed exactly as
    /// `POST /webhooks/email` does it.
    Mail(Box<Mail>),
    /// A delivery event of an email a sender of nudge's sent.
    Email(EmailNotice),
    /// A Twilio message status callback.
    Sms(SmsNotice),
    /// A Twilio Voice call status callback.
    Call(CallNotice),
    /// A booking made, moved or cancelled.
    Meeting(MeetingNotice),
    /// Something nudge does not act on (an open, a click, a delivery, a processed mail): the
    /// answer is 2xx so the provider does not retry, and nothing is stored.
    Ignored(String),
}

/// What happened to an email after it was sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EmailEvent {
    /// It bounced: permanently (exits like a hard bounce) or temporarily (a soft bounce; three
    /// in 7 days count as hard).
    Bounce(BounceType),
    /// The recipient marked it as spam: exits and blocks email, like a hard bounce.
    Complaint,
    /// The recipient unsubscribed through the provider: an email opt-out.
    Unsubscribe,
}

/// An email delivery event, with what finds the contact it is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmailNotice {
    /// What happened.
    pub event: EmailEvent,
    /// The recipient's address, as the provider reports it.
    pub recipient: String,
    /// The `Message-ID` the email was sent with, when the provider reports it (nudge's own,
    /// `<en_….N@nudge>`, finds the dispatch exactly).
    pub message_id: Option<String>,
    /// The provider's id of the sent message (what `AckDispatch` recorded as
    /// `provider_message_id`).
    pub provider_message_id: Option<String>,
    /// The provider's id of this event, unique per event: the signal's provider id.
    pub provider_id: String,
    /// The provider's words (an SMTP status, a reason), for the journey.
    pub detail: Option<String>,
}

/// A message status nudge acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SmsStatus {
    /// `undelivered`: the carrier could not deliver it.
    Undelivered,
    /// `failed`: it could not be sent.
    Failed,
}

impl SmsStatus {
    /// Twilio's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            SmsStatus::Undelivered => "undelivered",
            SmsStatus::Failed => "failed",
        }
    }
}

/// Twilio's error code for a message to a number that replied STOP: the recipient opted out.
pub const TWILIO_OPTED_OUT: u32 = 21610;

/// A message status callback nudge acts on: a delivery failure, or an opt-out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SmsNotice {
    /// `MessageSid`: what `AckDispatch` recorded as `provider_message_id`.
    pub message_sid: String,
    /// The status reported.
    pub status: SmsStatus,
    /// `ErrorCode`, when given (30003: unreachable handset; 21610: opted out).
    pub error_code: Option<u32>,
    /// `ErrorMessage`, when given.
    pub error_message: Option<String>,
    /// The recipient's number (E.164).
    pub to: Option<String>,
}

/// A call's final status, as Twilio's Voice status callback reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallStatus {
    /// Answered and ended.
    Completed,
    /// Rang out.
    NoAnswer,
    /// The line was busy.
    Busy,
    /// Could not be placed.
    Failed,
    /// Hung up by the caller before it was answered.
    Canceled,
}

/// Who answered, when answering-machine detection ran (`AnsweredBy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnsweredBy {
    /// A person.
    Human,
    /// A voicemail or answering machine (`machine_start`, `machine_end_*`).
    Machine,
    /// A fax machine.
    Fax,
    /// Detection could not tell.
    Unknown,
}

/// A Voice call status callback in a final state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallNotice {
    /// `CallSid`.
    pub call_sid: String,
    /// The final status.
    pub status: CallStatus,
    /// `CallDuration` in seconds (on `completed`).
    pub duration_secs: Option<u64>,
    /// `AnsweredBy`, when detection ran.
    pub answered_by: Option<AnsweredBy>,
    /// The contact's number: `To` of an outbound call, `From` of an inbound one (E.164).
    pub contact_phone: String,
}

/// The task outcome a finished call gives (docs/providers.md, "Twilio Voice: call status"): the spellings `CompleteTask` takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallOutcome {
    /// Completed by a person, lasting at least the account's `call_connected_threshold`.
    Connected,
    /// Completed, but shorter than the threshold.
    ShortCall,
    /// Answered by a machine.
    Voicemail,
    /// Rang out (or canceled before an answer).
    NoAnswer,
    /// Busy.
    Busy,
    /// Could not be placed (or answered by a fax).
    Failed,
}

impl CallOutcome {
    /// The outcome's name, as `CompleteTask` and the journey spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            CallOutcome::Connected => "connected",
            CallOutcome::ShortCall => "short_call",
            CallOutcome::Voicemail => "voicemail",
            CallOutcome::NoAnswer => "no_answer",
            CallOutcome::Busy => "busy",
            CallOutcome::Failed => "failed",
        }
    }
}

impl CallNotice {
    /// The outcome of this call, with `threshold_secs` the shortest connected call.
    pub fn outcome(&self, threshold_secs: u64) -> CallOutcome {
        match self.status {
            CallStatus::NoAnswer | CallStatus::Canceled => CallOutcome::NoAnswer,
            CallStatus::Busy => CallOutcome::Busy,
            CallStatus::Failed => CallOutcome::Failed,
            CallStatus::Completed => match self.answered_by {
                Some(AnsweredBy::Machine) => CallOutcome::Voicemail,
                Some(AnsweredBy::Fax) => CallOutcome::Failed,
                _ if self.duration_secs.unwrap_or(0) >= threshold_secs => CallOutcome::Connected,
                _ => CallOutcome::ShortCall,
            },
        }
    }
}

/// What happened to a booking.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MeetingChange {
    /// Booked: raises `meeting_booked`.
    Booked,
    /// Moved to another time: the stored booking is updated, nothing new is raised (nothing
    /// that already ran moves). `from` is the booking it replaces, when the provider names one.
    Rescheduled {
        /// The earlier booking's id.
        from: Option<String>,
    },
    /// Cancelled: raises `meeting_cancelled`.
    Cancelled,
}

/// A booking on a calendar provider.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MeetingNotice {
    /// `calendly` or `calcom`: the provider id's prefix.
    pub provider: Provider,
    /// The provider's stable id of the booking (Calendly's invitee URI, Cal.com's `uid`).
    pub booking: String,
    /// What happened.
    pub change: MeetingChange,
    /// The hosts' addresses: one must be a sender's calendar address.
    pub hosts: Vec<String>,
    /// The attendees' addresses: those who are contacts get the signal.
    pub attendees: Vec<String>,
    /// When it starts.
    pub start: Option<DateTime<Utc>>,
    /// Its title, for the journey.
    pub title: Option<String>,
}

/// A timestamp (unix seconds, as text) checked against `now` within `tolerance_secs` either
/// way; the refusal names `what` signed it.
pub(crate) fn check_fresh(
    what: &str,
    t: i64,
    now: DateTime<Utc>,
    tolerance_secs: i64,
) -> Result<(), Refusal> {
    let age = now.timestamp() - t;
    if age.abs() > tolerance_secs {
        return Err(forged(format!(
            "stale signature: {what} is {age} s away from this server's clock (at most \
             {tolerance_secs} s is accepted); a replayed or delayed request, or a clock that is \
             off"
        )));
    }
    Ok(())
}

/// Compares two byte strings of the same length (digests) without an early exit, so the time
/// taken does not tell how much of them matched.
pub(crate) fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Hex HMAC-SHA256 of `parts` concatenated, keyed with `key`: what Mailgun, Calendly and
/// Cal.com sign with.
pub fn hmac_sha256_hex(key: &[u8], parts: &[&[u8]]) -> String {
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, key);
    let mut ctx = ring::hmac::Context::with_key(&key);
    for p in parts {
        ctx.update(p);
    }
    hex::encode(ctx.sign().as_ref())
}

/// Checks a hex HMAC-SHA256 `given` against `key` and `parts`, in constant time.
pub(crate) fn hmac_sha256_matches(key: &[u8], parts: &[&[u8]], given: &str) -> bool {
    let Ok(given) = hex::decode(given.trim()) else {
        return false;
    };
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, key);
    let message: Vec<u8> = parts.concat();
    ring::hmac::verify(&key, &message, &given).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn providers_round_trip_their_spelling() {
        for p in Provider::ALL {
            assert_eq!(Provider::parse(p.as_str()), Ok(p));
        }
        assert_eq!(
            Provider::parse(" SendGrid-Events "),
            Ok(Provider::SendgridEvents)
        );
        let e = Provider::parse("mailchimp").unwrap_err();
        assert!(
            e.contains("`mailchimp`") && e.contains("sendgrid-events"),
            "{e}"
        );
    }

    #[test]
    fn secrets_are_checked_by_what_each_provider_takes() {
        assert_eq!(
            Provider::Mailgun.check_secret(" key-1 \n").unwrap(),
            "key-1"
        );
        assert!(Provider::Mailgun
            .check_secret("")
            .unwrap_err()
            .contains("empty"));
        assert!(Provider::Calcom.check_secret("a b").is_err());
        assert_eq!(Provider::Postmark.check_secret("u:p:w").unwrap(), "u:p:w");
        assert!(Provider::Sendgrid.check_secret("nopassword").is_err());
        assert!(Provider::Sendgrid.check_secret(":pw").is_err());
        let topics =
            "arn:aws:sns:us-east-2:295079676684:a\n\n  arn:aws:sns:eu-west-1:123456789012:b ";
        assert_eq!(
            Provider::Ses.check_secret(topics).unwrap(),
            "arn:aws:sns:us-east-2:295079676684:a\narn:aws:sns:eu-west-1:123456789012:b"
        );
        assert!(Provider::Ses.check_secret("arn:aws:s3:::bucket").is_err());
        // SendGrid's own test key (sendgrid-python's tests).
        let key = "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE83T4O/n84iotIvIW4mdBgQ/7dAfSmpqIM8kF9mN1flpVKS3GRqe62gw+2fNNRaINXvVpiglSI8eNEc6wEA3F+g==";
        assert_eq!(Provider::SendgridEvents.check_secret(key).unwrap(), key);
        let pem = format!(
            "-----BEGIN PUBLIC KEY-----\n{}\n{}\n-----END PUBLIC KEY-----\n",
            &key[..64],
            &key[64..]
        );
        assert_eq!(Provider::SendgridEvents.check_secret(&pem).unwrap(), key);
        let e = Provider::SendgridEvents
            .check_secret("bm90IGEga2V5")
            .unwrap_err();
        assert!(
            !e.contains("bm90IGEga2V5"),
            "a refusal never quotes the secret: {e}"
        );
    }

    #[test]
    fn call_outcomes() {
        let call = |status, duration_secs, answered_by| CallNotice {
            call_sid: "CA1".into(),
            status,
            duration_secs,
            answered_by,
            contact_phone: "+15558675310".into(),
        };
        let cases = [
            (
                call(CallStatus::Completed, Some(31), None),
                CallOutcome::Connected,
            ),
            (
                call(CallStatus::Completed, Some(30), None),
                CallOutcome::Connected,
            ),
            (
                call(CallStatus::Completed, Some(29), None),
                CallOutcome::ShortCall,
            ),
            (
                call(CallStatus::Completed, None, None),
                CallOutcome::ShortCall,
            ),
            (
                call(CallStatus::Completed, Some(300), Some(AnsweredBy::Human)),
                CallOutcome::Connected,
            ),
            (
                call(CallStatus::Completed, Some(45), Some(AnsweredBy::Machine)),
                CallOutcome::Voicemail,
            ),
            (
                call(CallStatus::Completed, Some(45), Some(AnsweredBy::Fax)),
                CallOutcome::Failed,
            ),
            (
                call(CallStatus::NoAnswer, None, None),
                CallOutcome::NoAnswer,
            ),
            (
                call(CallStatus::Canceled, None, None),
                CallOutcome::NoAnswer,
            ),
            (call(CallStatus::Busy, None, None), CallOutcome::Busy),
            (call(CallStatus::Failed, None, None), CallOutcome::Failed),
        ];
        for (notice, want) in cases {
            assert_eq!(notice.outcome(30), want, "{notice:?}");
        }
    }

    #[test]
    fn hmac_matches_the_computed_vectors_of_webhooks_md() {
        // Mailgun: key TEST_WEBHOOK_SIGNING_KEY, timestamp‖token.
        assert_eq!(
            hmac_sha256_hex(
                b"TEST_WEBHOOK_SIGNING_KEY",
                &[
                    b"1534108637",
                    b"651869375b9df3c98fc15c4889b102119add1235c38fc92824"
                ]
            ),
            "2a75affe24846ead9e37e614a5e7643a04abf4d5b49b34d224ede9af23a00ccc"
        );
        assert!(hmac_sha256_matches(
            b"k",
            &[b"a", b"b"],
            &hmac_sha256_hex(b"k", &[b"ab"])
        ));
        assert!(!hmac_sha256_matches(b"k", &[b"a"], "zz"));
    }
}
