//! Postmark: inbound mail and delivery events as JSON, unsigned; the basic-auth credentials the
//! account put in the webhook URL authenticate them. The event hook takes every `RecordType`:
//! `Bounce`, `SpamComplaint` and `SubscriptionChange` are acted on, `Delivery`, `Open` and
//! `Click` answer 2xx and store nothing. Postmark's pages, under
//! postmarkapp.com/developer/webhooks/: `inbound-webhook`, `subscription-change-webhook` and
//! `webhooks-overview` ("Protecting your webhook").

use super::{malformed, EmailEvent, EmailNotice, Notice, Reading, Refusal};
use crate::inbound::classify::BounceType;
use crate::inbound::mail::Mail;
use serde_json::Value;

/// The record types Postmark's webhooks post.
pub const RECORD_TYPES: [&str; 6] = [
    "Bounce",
    "SpamComplaint",
    "SubscriptionChange",
    "Delivery",
    "Open",
    "Click",
];

/// Bounce `Type`s that are permanent (the address does not take mail); every other type is a
/// temporary failure or not a failure of the address at all.
/// `Blocked` (an ISP's block, mostly of the sender's reputation) is temporary unless Postmark
/// deactivated the address (`Inactive`).
const HARD: [&str; 4] = [
    "HardBounce",
    "BadEmailAddress",
    "ManuallyDeactivated",
    "DMARCPolicy",
];

/// Bounce `Type`s that are no delivery failure of the recipient's (an auto-responder's answer,
/// a changed address, a challenge): journal-only.
const NOTED: [&str; 5] = [
    "AutoResponder",
    "AddressChange",
    "Subscribe",
    "OpenRelayTest",
    "ChallengeVerification",
];

fn json(body: &[u8]) -> Result<Value, Refusal> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| malformed(format!("the body is not JSON: {e}")))?;
    if !value.is_object() {
        return Err(malformed("Postmark posts a JSON object"));
    }
    Ok(value)
}

fn text(v: &Value, name: &str) -> Option<String> {
    match v.get(name)? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// An inbound webhook body as one inbound [`Mail`]: the headers from `Headers[{Name, Value}]`,
/// the text from `TextBody`.
pub fn inbound(body: &[u8]) -> Result<Reading, Refusal> {
    let v = json(body)?;
    if let Some(record) = text(&v, "RecordType") {
        return Err(malformed(format!(
            "a `{}` record is a delivery event: point Postmark's bounce, spam and subscription \
             webhooks at /webhooks/email/postmark/events, not the inbound one",
            crate::quote::quote(&record)
        )));
    }
    let mut headers: Vec<(String, String)> = match v.get("Headers") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|h| Some((text(h, "Name")?, text(h, "Value")?)))
            .collect(),
        Some(_) => return Err(malformed("`Headers` is not a list of {Name, Value}")),
    };
    for (name, field) in [("Subject", "Subject"), ("Date", "Date"), ("From", "From")] {
        if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case(name)) {
            if let Some(value) = text(&v, field) {
                headers.push((name.to_string(), value));
            }
        }
    }
    let from = v
        .pointer("/FromFull/Email")
        .and_then(Value::as_str)
        .map(str::to_string)
        .or_else(|| text(&v, "From"));
    if from.is_none() {
        return Err(malformed(
            "the body has no `From` (nor `FromFull.Email`): Postmark's inbound webhook always \
             sends the sender",
        ));
    }
    let mail = Mail::from_parts(
        headers,
        from,
        text(&v, "OriginalRecipient").or_else(|| text(&v, "To")),
        text(&v, "Subject"),
        text(&v, "TextBody").or_else(|| text(&v, "StrippedTextReply")),
    );
    Ok(Reading::one(Notice::Mail(Box::new(mail))))
}

/// A delivery-event webhook body as at most one notice.
pub fn events(body: &[u8]) -> Result<Reading, Refusal> {
    let v = json(body)?;
    let record = text(&v, "RecordType").ok_or_else(|| {
        malformed("no `RecordType`: an inbound message belongs on /webhooks/email/postmark")
    })?;
    if !RECORD_TYPES.contains(&record.as_str()) {
        return Err(malformed(format!(
            "`RecordType` {} is not a Postmark record type (one of {})",
            crate::quote::quote(&record),
            RECORD_TYPES.join(", ")
        )));
    }
    let (event, recipient, id) = match record.as_str() {
        "Bounce" | "SpamComplaint" => {
            let kind = text(&v, "Type").unwrap_or_default();
            let event = if record == "SpamComplaint" || kind == "SpamComplaint" {
                EmailEvent::Complaint
            } else if kind == "Unsubscribe" {
                // The recipient asked to be taken off (a reply to the unsubscribe address).
                EmailEvent::Unsubscribe
            } else if NOTED.contains(&kind.as_str()) {
                EmailEvent::Bounce(BounceType::Delayed)
            } else if HARD.contains(&kind.as_str()) || v.get("Inactive") == Some(&Value::Bool(true))
            {
                EmailEvent::Bounce(BounceType::Hard)
            } else {
                EmailEvent::Bounce(BounceType::Soft)
            };
            let recipient = text(&v, "Email")
                .ok_or_else(|| malformed(format!("the `{record}` record has no `Email`")))?;
            (event, recipient, text(&v, "ID"))
        }
        "SubscriptionChange" => {
            // Only a suppression is an opt-out; a reactivation changes nothing here.
            if v.get("SuppressSending") != Some(&Value::Bool(true)) {
                return Ok(Reading::one(Notice::Ignored(
                    "a Postmark SubscriptionChange that lifts a suppression".into(),
                )));
            }
            let event = match text(&v, "SuppressionReason").as_deref() {
                Some("HardBounce") => EmailEvent::Bounce(BounceType::Hard),
                Some("SpamComplaint") => EmailEvent::Complaint,
                _ => EmailEvent::Unsubscribe,
            };
            let recipient = text(&v, "Recipient")
                .ok_or_else(|| malformed("the SubscriptionChange record has no `Recipient`"))?;
            let id = [text(&v, "MessageID"), text(&v, "ChangedAt")]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join(":");
            let key = format!("sub:{recipient}:{id}");
            (event, recipient, Some(key))
        }
        other => {
            return Ok(Reading::one(Notice::Ignored(format!(
                "a Postmark `{other}` record, which nudge does not act on"
            ))))
        }
    };
    let message_id = text(&v, "MessageID");
    let provider_id = match id {
        Some(id) => format!("postmark:{id}"),
        None => format!(
            "postmark:{record}:{}:{recipient}",
            message_id.clone().unwrap_or_default()
        ),
    };
    let detail = [
        text(&v, "Type"),
        text(&v, "Details").or_else(|| text(&v, "Description")),
    ]
    .into_iter()
    .flatten()
    .filter(|s| !s.trim().is_empty())
    .collect::<Vec<_>>();
    Ok(Reading::one(Notice::Email(EmailNotice {
        event,
        recipient,
        message_id: None,
        // Postmark's `MessageID` is the id its send API answered: the acked provider id.
        provider_message_id: message_id,
        provider_id,
        detail: (!detail.is_empty()).then(|| detail.join(": ")),
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_anymail_bounce_sample() {
        let body = br#"{"RecordType":"Bounce","ID":901542550,"Type":"HardBounce","TypeCode":1,"ServerID":23,"Name":"Hard bounce",
 "MessageID":"2706ee8a-737c-4285-b032-ccd317af53ed",
 "Description":"The server was unable to deliver your message (ex: unknown user, mailbox not found).",
 "Details":"smtp;550 5.1.1 The email account that you tried to reach does not exist.",
 "Email":"bounce@example.com","From":"sender@example.com","BouncedAt":"2016-04-27T16:28:50.3963933-04:00",
 "DumpAvailable":true,"Inactive":true,"CanActivate":true,"Subject":"Postmark event test","Content":"..."}"#;
        let r = events(body).unwrap();
        let Notice::Email(e) = &r.notices[0] else {
            panic!()
        };
        assert_eq!(e.event, EmailEvent::Bounce(BounceType::Hard));
        assert_eq!(e.recipient, "bounce@example.com");
        assert_eq!(e.provider_id, "postmark:901542550");
        assert_eq!(
            e.provider_message_id.as_deref(),
            Some("2706ee8a-737c-4285-b032-ccd317af53ed")
        );
    }

    #[test]
    fn record_types() {
        let cases = [
            (
                r#"{"RecordType":"Bounce","ID":1,"Type":"SoftBounce","Email":"a@x.com","Inactive":false}"#,
                Some(EmailEvent::Bounce(BounceType::Soft)),
            ),
            (
                r#"{"RecordType":"Bounce","ID":2,"Type":"Transient","Email":"a@x.com"}"#,
                Some(EmailEvent::Bounce(BounceType::Soft)),
            ),
            (
                r#"{"RecordType":"Bounce","ID":3,"Type":"AutoResponder","Email":"a@x.com"}"#,
                Some(EmailEvent::Bounce(BounceType::Delayed)),
            ),
            (
                r#"{"RecordType":"SpamComplaint","ID":4,"Type":"SpamComplaint","TypeCode":512,"Email":"a@x.com"}"#,
                Some(EmailEvent::Complaint),
            ),
            (
                r#"{"RecordType":"SubscriptionChange","Recipient":"a@x.com","SuppressSending":true,"SuppressionReason":"ManualSuppression","ChangedAt":"2020-02-01T10:53:34Z"}"#,
                Some(EmailEvent::Unsubscribe),
            ),
            (
                r#"{"RecordType":"SubscriptionChange","Recipient":"a@x.com","SuppressSending":false}"#,
                None,
            ),
            (r#"{"RecordType":"Open","Recipient":"a@x.com"}"#, None),
            (r#"{"RecordType":"Delivery","Recipient":"a@x.com"}"#, None),
        ];
        for (body, want) in cases {
            let r = events(body.as_bytes()).unwrap();
            let got = match &r.notices[0] {
                Notice::Email(e) => Some(e.event),
                Notice::Ignored(_) => None,
                other => panic!("{other:?}"),
            };
            assert_eq!(got, want, "{body}");
        }
        for bad in [
            r#"{"RecordType":"Nope"}"#,
            r#"{"RecordType":"Bounce"}"#,
            "[]",
            "x",
            r#"{"From":"a"}"#,
        ] {
            assert!(
                matches!(events(bad.as_bytes()), Err(Refusal::Malformed(_))),
                "{bad}"
            );
        }
    }

    #[test]
    fn the_anymail_inbound_sample() {
        let body = br#"{"FromFull":{"Email":"from+test@example.org","Name":"Displayed From","MailboxHash":"test"},
 "ToFull":[{"Email":"test@inbound.example.com","Name":"Test Inbound","MailboxHash":""}],
 "OriginalRecipient":"test@inbound.example.com","ReplyTo":"from+test@milter.example.org","Subject":"Test subject",
 "MessageID":"22c74902-a0c1-4511-804f2-341342852c90","Date":"Wed, 11 Oct 2017 18:31:04 -0700",
 "TextBody":"Test body plain","HtmlBody":"<div>Test body html</div>","StrippedTextReply":"stripped plaintext body","Tag":"",
 "Headers":[{"Name":"Return-Path","Value":"<envelope-from@example.org>"},{"Name":"X-Spam-Status","Value":"No"},
  {"Name":"In-Reply-To","Value":"<en_5.3@nudge>"},{"Name":"Message-ID","Value":"<CAEPk3R+4Zr@mail.example.org>"}]}"#;
        let r = inbound(body).unwrap();
        let Notice::Mail(mail) = &r.notices[0] else {
            panic!()
        };
        assert_eq!(mail.from.as_deref(), Some("from+test@example.org"));
        assert_eq!(mail.subject.as_deref(), Some("Test subject"));
        assert_eq!(mail.thread_candidates(), ["<en_5.3@nudge>"]);
        assert!(mail.date.is_some());
        let misrouted = inbound(br#"{"RecordType":"Bounce","Email":"a@x.com"}"#).unwrap_err();
        assert!(misrouted
            .to_string()
            .contains("/webhooks/email/postmark/events"));
    }
}
