//! Mailgun: Routes `forward()` posts inbound mail as a form (multipart when it has
//! attachments); event webhooks post JSON. Both are signed the same way: `signature` = hex
//! HMAC-SHA256(signing key, `timestamp` ‖ `token`). The body is not covered, so the token is
//! single use (remembered, [`Reading::replay`]) and the timestamp must be within
//! [`TOLERANCE_SECS`] of the clock. Mailgun's pages, under
//! documentation.mailgun.com/docs/mailgun/user-manual/: `receive-forward-store/receive-http`
//! (inbound), `webhooks/webhook-payloads` (events) and `webhooks/securing-webhooks` (signing).

use super::form::Form;
use super::{
    check_fresh, forged, hmac_sha256_matches, malformed, EmailEvent, EmailNotice, Notice, Reading,
    Refusal,
};
use crate::inbound::classify::BounceType;
use crate::inbound::mail::{self, Mail};
use chrono::{DateTime, Utc};
use serde_json::Value;

/// How far a signature's timestamp may be from the clock, either way (Mailgun advises
/// leniency: deliveries can lag).
pub const TOLERANCE_SECS: i64 = 300;

/// The events Mailgun's webhooks send; those nudge does not act on answer 2xx.
pub const EVENTS: [&str; 12] = [
    "accepted",
    "rejected",
    "delivered",
    "failed",
    "opened",
    "clicked",
    "unsubscribed",
    "complained",
    "stored",
    "list_member_uploaded",
    "list_member_upload_error",
    "list_uploaded",
];

/// Checks a `(timestamp, token, signature)` triple at `now`; returns the replay key.
pub fn verify(
    key: &str,
    timestamp: &str,
    token: &str,
    signature: &str,
    now: DateTime<Utc>,
) -> Result<String, Refusal> {
    if !hmac_sha256_matches(
        key.as_bytes(),
        &[timestamp.as_bytes(), token.as_bytes()],
        signature,
    ) {
        return Err(forged(
            "the Mailgun signature does not match: the key set with `nudge provider-secret set \
             mailgun` must be the HTTP webhook signing key (Mailgun: Sending → Webhooks), not \
             the API key",
        ));
    }
    // After the MAC, so an unsigned timestamp never earns a "stale" answer.
    let t: i64 = timestamp
        .trim()
        .parse()
        .map_err(|_| forged("the Mailgun `timestamp` is not unix seconds"))?;
    check_fresh("the Mailgun `timestamp`", t, now, TOLERANCE_SECS)?;
    Ok(format!("mailgun:{token}"))
}

/// A Routes `forward()` post: verified, then read as one inbound [`Mail`].
pub fn inbound(form: &Form, key: &str, now: DateTime<Utc>) -> Result<Reading, Refusal> {
    let field = |name: &str| form.required(name, "Mailgun's forward()");
    let replay = verify(
        key,
        &field("timestamp")?,
        &field("token")?,
        &field("signature")?,
        now,
    )?;
    super::form::refuse_nul(form)?;
    let mail = if let Some(raw) = form.field("body-mime") {
        // A route whose URL ends in `mime`: the message as received.
        mail::parse_raw(&raw.bytes).map_err(|e| malformed(format!("`body-mime`: {e}")))?
    } else {
        parsed_mail(form)?
    };
    Ok(Reading {
        notices: vec![Notice::Mail(Box::new(mail))],
        replay: Some(replay),
    })
}

/// The fields of a parsed-mode post as a [`Mail`]: the headers from `message-headers` (a JSON
/// list of `[name, value]`, in order), else from the top-level header fields; the text from
/// `body-plain`; report parts from the attachments.
fn parsed_mail(form: &Form) -> Result<Mail, Refusal> {
    let headers: Vec<(String, String)> = match form.text("message-headers") {
        Some(json) => {
            let pairs: Vec<(String, String)> = serde_json::from_str(&json).map_err(|e| {
                malformed(format!(
                    "`message-headers` is not a JSON list of [name, value] pairs: {e}"
                ))
            })?;
            pairs
        }
        None => form
            .fields
            .iter()
            .filter(|f| {
                f.filename.is_none() && f.name.starts_with(|c: char| c.is_ascii_uppercase())
            })
            .map(|f| {
                (
                    f.name.clone(),
                    String::from_utf8_lossy(&f.bytes).into_owned(),
                )
            })
            .collect(),
    };
    let mut mail = Mail::from_parts(
        headers,
        form.text("from").or_else(|| form.text("sender")),
        form.text("recipient").or_else(|| form.text("To")),
        form.text("subject"),
        form.text("body-plain"),
    );
    for part in form.fields.iter().filter(|f| f.filename.is_some()) {
        if let Some(ct) = &part.content_type {
            mail.add_part(ct, &part.bytes);
        }
    }
    Ok(mail)
}

/// An event webhook's JSON body: verified, then read as at most one notice.
pub fn events(body: &[u8], key: &str, now: DateTime<Utc>) -> Result<Reading, Refusal> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| malformed(format!("the body is not JSON: {e}")))?;
    let text = |v: &Value, path: &str| -> Option<String> {
        let v = v.pointer(path)?;
        match v {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        }
    };
    let signed = |name: &str| {
        text(&value, &format!("/signature/{name}")).ok_or_else(|| {
            malformed(format!(
                "no `signature.{name}`: Mailgun's event webhooks post \
                 {{\"signature\": {{\"timestamp\", \"token\", \"signature\"}}, \"event-data\": {{…}}}}"
            ))
        })
    };
    let replay = verify(
        key,
        &signed("timestamp")?,
        &signed("token")?,
        &signed("signature")?,
        now,
    )?;
    let data = value
        .get("event-data")
        .filter(|d| d.is_object())
        .ok_or_else(|| malformed("no `event-data` object"))?;
    let event = text(data, "/event").ok_or_else(|| malformed("no `event-data.event`"))?;
    if !EVENTS.contains(&event.as_str()) {
        return Err(malformed(format!(
            "`event-data.event` {} is not a Mailgun event (one of {})",
            crate::quote::quote(&event),
            EVENTS.join(", ")
        )));
    }
    let kind = match event.as_str() {
        "failed" => match text(data, "/severity").as_deref() {
            Some("permanent") => EmailEvent::Bounce(BounceType::Hard),
            Some("temporary") => EmailEvent::Bounce(BounceType::Soft),
            other => {
                return Err(malformed(format!(
                    "a `failed` event's `severity` is `permanent` or `temporary`, not {}",
                    other.map_or("missing".into(), crate::quote::quote)
                )))
            }
        },
        "complained" => EmailEvent::Complaint,
        "unsubscribed" => EmailEvent::Unsubscribe,
        other => {
            return Ok(Reading::one(Notice::Ignored(format!(
                "a Mailgun `{other}` event, which nudge does not act on"
            ))))
        }
    };
    let recipient = text(data, "/recipient")
        .ok_or_else(|| malformed(format!("the `{event}` event has no `event-data.recipient`")))?;
    // `event-data.id` is unique within a day only: with the event's own timestamp it is unique,
    // and the same on Mailgun's retries of it.
    let id = text(data, "/id").unwrap_or_default();
    let at = text(data, "/timestamp").unwrap_or_default();
    let provider_id = if id.is_empty() {
        format!("mailgun:{replay}")
    } else {
        format!("mailgun:{id}:{at}")
    };
    let message_id = text(data, "/message/headers/message-id").map(|m| {
        let m = m.trim().to_string();
        if m.starts_with('<') {
            m
        } else {
            format!("<{m}>")
        }
    });
    let detail = [
        text(data, "/delivery-status/code"),
        text(data, "/delivery-status/message")
            .or_else(|| text(data, "/delivery-status/description")),
        text(data, "/reason"),
    ]
    .into_iter()
    .flatten()
    .filter(|s| !s.trim().is_empty())
    .collect::<Vec<_>>();
    Ok(Reading {
        notices: vec![Notice::Email(EmailNotice {
            event: kind,
            recipient,
            // Mailgun's own id of a sent message is the Message-ID it gave it.
            provider_message_id: message_id.clone(),
            message_id,
            provider_id,
            detail: (!detail.is_empty()).then(|| detail.join(" ")),
        })],
        replay: Some(replay),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inbound::providers::hmac_sha256_hex;

    const KEY: &str = "TEST_WEBHOOK_SIGNING_KEY";

    fn at(secs: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(secs, 0).unwrap()
    }

    #[test]
    fn the_computed_vector_verifies_within_five_minutes() {
        let (ts, token) = (
            "1534108637",
            "651869375b9df3c98fc15c4889b102119add1235c38fc92824",
        );
        let sig = "2a75affe24846ead9e37e614a5e7643a04abf4d5b49b34d224ede9af23a00ccc";
        assert_eq!(
            verify(KEY, ts, token, sig, at(1534108637 + 299)).unwrap(),
            format!("mailgun:{token}")
        );
        let stale = verify(KEY, ts, token, sig, at(1534108637 + 301)).unwrap_err();
        assert!(stale.to_string().contains("stale"), "{stale}");
        assert!(verify("other", ts, token, sig, at(1534108637)).is_err());
        assert!(verify(KEY, "1534108638", token, sig, at(1534108637)).is_err());
    }

    fn signed_event(data: serde_json::Value, t: i64) -> Vec<u8> {
        let token = format!("tok{t}");
        let sig = hmac_sha256_hex(
            KEY.as_bytes(),
            &[t.to_string().as_bytes(), token.as_bytes()],
        );
        serde_json::to_vec(&serde_json::json!({
            "signature": {"timestamp": t.to_string(), "token": token, "signature": sig},
            "event-data": data,
        }))
        .unwrap()
    }

    #[test]
    fn events_map_to_notices() {
        let now = 1_534_110_422;
        let failed = |severity: &str| {
            serde_json::json!({"event": "failed", "severity": severity, "reason": "bounce",
                "recipient": "invalid@example.com", "id": "e1", "timestamp": 1534110422.389832,
                "message": {"headers": {"message-id": "20180812214658.1.0DF563D0B3597700@example.org"}},
                "delivery-status": {"code": 550, "message": "5.1.1 no such user"}})
        };
        let r = events(&signed_event(failed("permanent"), now), KEY, at(now)).unwrap();
        let Notice::Email(e) = &r.notices[0] else {
            panic!("{r:?}")
        };
        assert_eq!(e.event, EmailEvent::Bounce(BounceType::Hard));
        assert_eq!(e.recipient, "invalid@example.com");
        assert_eq!(
            e.message_id.as_deref(),
            Some("<20180812214658.1.0DF563D0B3597700@example.org>")
        );
        assert_eq!(e.provider_id, "mailgun:e1:1534110422.389832");
        assert_eq!(e.detail.as_deref(), Some("550 5.1.1 no such user bounce"));
        let r = events(&signed_event(failed("temporary"), now), KEY, at(now)).unwrap();
        assert!(
            matches!(&r.notices[0], Notice::Email(e) if e.event == EmailEvent::Bounce(BounceType::Soft))
        );
        for (event, want) in [
            ("complained", EmailEvent::Complaint),
            ("unsubscribed", EmailEvent::Unsubscribe),
        ] {
            let data = serde_json::json!({"event": event, "recipient": "r@example.com", "id": "x"});
            let r = events(&signed_event(data, now), KEY, at(now)).unwrap();
            assert!(
                matches!(&r.notices[0], Notice::Email(e) if e.event == want),
                "{event}"
            );
        }
        for event in ["opened", "clicked", "delivered", "accepted"] {
            let data = serde_json::json!({"event": event, "recipient": "r@example.com"});
            let r = events(&signed_event(data, now), KEY, at(now)).unwrap();
            assert!(matches!(r.notices[0], Notice::Ignored(_)), "{event}");
        }
        let unknown = serde_json::json!({"event": "exploded", "recipient": "r@example.com"});
        let e = events(&signed_event(unknown, now), KEY, at(now)).unwrap_err();
        assert!(
            matches!(&e, Refusal::Malformed(m) if m.contains("`exploded`")),
            "{e}"
        );
        let no_severity = serde_json::json!({"event": "failed", "recipient": "r@example.com"});
        assert!(events(&signed_event(no_severity, now), KEY, at(now)).is_err());
        assert!(matches!(
            events(b"{", KEY, at(now)),
            Err(Refusal::Malformed(_))
        ));
        assert!(matches!(
            events(b"{}", KEY, at(now)),
            Err(Refusal::Malformed(_))
        ));
    }

    #[test]
    fn a_forwarded_reply_and_a_forwarded_dsn() {
        let t = 1_412_239_366;
        let token = "4166ec05b27b5d3c024252ad43df47865128c8fcde47dfea6b";
        let sig = hmac_sha256_hex(
            KEY.as_bytes(),
            &[t.to_string().as_bytes(), token.as_bytes()],
        );
        let body = serde_urlencoded::to_string([
            ("recipient", "alice@example.org"),
            ("sender", "bob@example.org"),
            ("from", "Bob <bob@example.org>"),
            ("subject", "Re: Sample POST request"),
            ("Message-Id", "<517ACC75.5010709@example.org>"),
            ("In-Reply-To", "<en_1.2@nudge>"),
            ("body-plain", "Hi Alice,\n\nThis is Bob."),
            ("timestamp", &t.to_string()),
            ("token", token),
            ("signature", &sig),
        ])
        .unwrap();
        let form = Form::urlencoded(body.as_bytes()).unwrap();
        let r = inbound(&form, KEY, at(t)).unwrap();
        assert_eq!(r.replay.as_deref(), Some(&*format!("mailgun:{token}")));
        let Notice::Mail(mail) = &r.notices[0] else {
            panic!()
        };
        assert_eq!(mail.thread_candidates(), ["<en_1.2@nudge>"]);
        assert_eq!(
            mail.header("message-id"),
            Some("<517ACC75.5010709@example.org>")
        );
        assert!(mail.dsn.is_none());
        // A DSN forwarded in parsed mode, its headers in `message-headers`.
        let headers = serde_json::json!([
            [
                "From",
                "Mail Delivery Subsystem <mailer-daemon@googlemail.com>"
            ],
            [
                "Content-Type",
                "multipart/report; report-type=delivery-status; boundary=\"b\""
            ],
            ["In-Reply-To", "<en_1.2@nudge>"]
        ])
        .to_string();
        let body = serde_urlencoded::to_string([
            ("message-headers", headers.as_str()),
            (
                "body-plain",
                "** Address not found **\n\nAction: failed\nStatus: 5.1.1\n",
            ),
            ("timestamp", &t.to_string()),
            ("token", token),
            ("signature", &sig),
        ])
        .unwrap();
        let form = Form::urlencoded(body.as_bytes()).unwrap();
        let r = inbound(&form, KEY, at(t)).unwrap();
        let Notice::Mail(mail) = &r.notices[0] else {
            panic!()
        };
        let class = crate::inbound::classify::classify(mail, at(t).date_naive());
        assert_eq!(class.name(), "bounce_hard");
        // No signature fields: malformed, naming the field.
        let form = Form::urlencoded(b"from=x").unwrap();
        assert!(
            matches!(inbound(&form, KEY, at(t)), Err(Refusal::Malformed(m)) if m.contains("`timestamp`"))
        );
    }
}
