//! SendGrid: the Inbound Parse webhook posts inbound mail as multipart/form-data, unsigned (the
//! account's basic-auth credentials in the URL authenticate it); the Event Webhook posts a JSON
//! array of events, signed with ECDSA P-256 over `timestamp ‖ raw body`
//! (`X-Twilio-Email-Event-Webhook-Signature`, `…-Timestamp`). SendGrid's pages, in the
//! sendgrid/docs repository under `content/docs/for-developers/`:
//! `parsing-email/setting-up-the-inbound-parse-webhook.md`, `tracking-events/event.md` and
//! `tracking-events/getting-started-event-webhook-security-features.md`.

use super::form::Form;
use super::{check_fresh, forged, malformed, EmailEvent, EmailNotice, Notice, Reading, Refusal};
use crate::inbound::classify::BounceType;
use crate::inbound::mail::{self, Mail};
use base64::Engine;
use chrono::{DateTime, Utc};
use serde_json::Value;

/// The Event Webhook's signature header.
pub const SIGNATURE_HEADER: &str = "x-twilio-email-event-webhook-signature";
/// The Event Webhook's timestamp header.
pub const TIMESTAMP_HEADER: &str = "x-twilio-email-event-webhook-timestamp";
/// How far the signed timestamp may be from the clock (SendGrid documents none; five minutes,
/// as for every other timestamped signature here).
pub const TOLERANCE_SECS: i64 = 300;

/// The events the Event Webhook sends; those nudge does not act on answer 2xx.
pub const EVENTS: [&str; 11] = [
    "processed",
    "dropped",
    "delivered",
    "deferred",
    "bounce",
    "open",
    "click",
    "spamreport",
    "unsubscribe",
    "group_unsubscribe",
    "group_resubscribe",
];

/// The Event Webhook's verification key: an uncompressed P-256 point, from the base64 DER
/// `SubjectPublicKeyInfo` SendGrid shows (with or without a PEM armour).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerificationKey {
    /// The key as SendGrid shows it (base64 DER, no armour): what is stored.
    pub base64: String,
    /// The point (65 bytes, `04 ‖ x ‖ y`): what ring verifies with.
    pub point: Vec<u8>,
}

impl VerificationKey {
    /// Reads the key; the refusal never quotes it.
    pub fn parse(text: &str) -> Result<VerificationKey, String> {
        let fix = "give the Event Webhook's verification key as SendGrid shows it (Mail \
                   Settings → Signed Event Webhook: base64 that starts `MFkw`)";
        let body: String = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.starts_with("-----"))
            .collect();
        let der = base64::engine::general_purpose::STANDARD
            .decode(body.as_bytes())
            .map_err(|_| format!("the key is not base64: {fix}"))?;
        use x509_parser::prelude::FromDer;
        let (rest, spki) = x509_parser::x509::SubjectPublicKeyInfo::from_der(&der)
            .map_err(|_| format!("the key is not a DER public key: {fix}"))?;
        if !rest.is_empty() {
            return Err(format!("the key has bytes after its end: {fix}"));
        }
        let p256 = x509_parser::oid_registry::OID_EC_P256;
        let curve_ok = spki
            .algorithm
            .parameters
            .as_ref()
            .and_then(|p| p.as_oid().ok())
            .is_some_and(|oid| oid == p256);
        let point = spki.subject_public_key.data.to_vec();
        if spki.algorithm.algorithm != x509_parser::oid_registry::OID_KEY_TYPE_EC_PUBLIC_KEY
            || !curve_ok
            || point.len() != 65
            || point[0] != 4
        {
            return Err(format!(
                "the key is not an ECDSA P-256 public key (SendGrid signs with P-256): {fix}"
            ));
        }
        Ok(VerificationKey {
            base64: body,
            point,
        })
    }
}

/// Checks the Event Webhook's signature over `timestamp ‖ body` at `now`.
pub fn verify(
    key: &VerificationKey,
    signature: Option<&str>,
    timestamp: Option<&str>,
    body: &[u8],
    now: DateTime<Utc>,
) -> Result<(), Refusal> {
    let (Some(signature), Some(timestamp)) = (signature, timestamp) else {
        return Err(forged(
            "missing signature: SendGrid's signed Event Webhook sends \
             `X-Twilio-Email-Event-Webhook-Signature` and `X-Twilio-Email-Event-Webhook-Timestamp`; \
             turn on Signed Event Webhook Requests in SendGrid's Mail Settings",
        ));
    };
    let signature = base64::engine::general_purpose::STANDARD
        .decode(signature.trim())
        .map_err(|_| forged("the SendGrid signature is not base64"))?;
    let message = [timestamp.as_bytes(), body].concat();
    let verifier = ring::signature::UnparsedPublicKey::new(
        &ring::signature::ECDSA_P256_SHA256_ASN1,
        &key.point,
    );
    verifier.verify(&message, &signature).map_err(|_| {
        forged(
            "the SendGrid signature does not match: the key set with `nudge provider-secret set \
             sendgrid-events` must be this Event Webhook's verification key, and the body must \
             arrive byte for byte as SendGrid sent it",
        )
    })?;
    let t: i64 = timestamp
        .trim()
        .parse()
        .map_err(|_| forged("the SendGrid timestamp is not unix seconds"))?;
    check_fresh("the SendGrid timestamp", t, now, TOLERANCE_SECS)
}

/// An Event Webhook body (verified first): one notice per event, in order.
pub fn events(body: &[u8]) -> Result<Reading, Refusal> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| malformed(format!("the body is not JSON: {e}")))?;
    let items = value
        .as_array()
        .ok_or_else(|| malformed("the Event Webhook posts a JSON array of events"))?;
    let mut notices = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let text = |name: &str| item.get(name).and_then(Value::as_str).map(str::to_string);
        let at = |what: String| malformed(format!("event {i}: {what}"));
        let event = text("event").ok_or_else(|| at("no `event`".into()))?;
        if !EVENTS.contains(&event.as_str()) {
            return Err(at(format!(
                "`event` {} is not a SendGrid event (one of {})",
                crate::quote::quote(&event),
                EVENTS.join(", ")
            )));
        }
        let kind = match event.as_str() {
            // `type` tells a bounce (permanent) from a block (temporary).
            "bounce" => match text("type").as_deref() {
                Some("blocked") => EmailEvent::Bounce(BounceType::Soft),
                _ => EmailEvent::Bounce(BounceType::Hard),
            },
            // Dropped: not sent at all (a suppressed, bounced, invalid or spam-reporting
            // address), and SendGrid will not try again: permanent. Deferred: still being
            // retried (one event per attempt), so journal-only, not a soft bounce each time.
            "dropped" => EmailEvent::Bounce(BounceType::Hard),
            "deferred" => EmailEvent::Bounce(BounceType::Delayed),
            "spamreport" => EmailEvent::Complaint,
            "unsubscribe" | "group_unsubscribe" => EmailEvent::Unsubscribe,
            other => {
                notices.push(Notice::Ignored(format!(
                    "a SendGrid `{other}` event, which nudge does not act on"
                )));
                continue;
            }
        };
        let recipient =
            text("email").ok_or_else(|| at(format!("the `{event}` event has no `email`")))?;
        let sg_event_id = text("sg_event_id")
            .ok_or_else(|| at(format!("the `{event}` event has no `sg_event_id`")))?;
        // `sg_message_id` is `<X-Message-Id>.<filter…>`: the part before the first `.` is the
        // id mail/send answered, what the CRM acked the dispatch with.
        let provider_message_id = text("sg_message_id")
            .map(|m| m.split('.').next().unwrap_or("").to_string())
            .filter(|m| !m.is_empty());
        let detail = [text("status"), text("reason"), text("response")]
            .into_iter()
            .flatten()
            .filter(|s| !s.trim().is_empty())
            .collect::<Vec<_>>();
        notices.push(Notice::Email(EmailNotice {
            event: kind,
            recipient,
            message_id: text("smtp-id"),
            provider_message_id,
            provider_id: format!("sendgrid:{sg_event_id}"),
            detail: (!detail.is_empty()).then(|| detail.join(" ")),
        }));
    }
    Ok(Reading {
        notices,
        replay: None,
    })
}

/// An Inbound Parse post (authenticated first) as one inbound [`Mail`]: the raw `email` field
/// when "Send Raw" is on, else the parsed fields, each decoded from the charset `charsets`
/// names for it.
pub fn inbound(form: &Form) -> Result<Reading, Refusal> {
    if let Some(raw) = form.field("email") {
        let mail = mail::parse_raw(&raw.bytes).map_err(|e| malformed(format!("`email`: {e}")))?;
        return Ok(Reading::one(Notice::Mail(Box::new(mail))));
    }
    let charsets: serde_json::Map<String, Value> = match form.text("charsets") {
        Some(json) => serde_json::from_str(&json)
            .map_err(|e| malformed(format!("`charsets` is not a JSON object: {e}")))?,
        None => Default::default(),
    };
    let decoded = |name: &str| -> Option<String> {
        let field = form.field(name)?;
        let charset = charsets.get(name).and_then(Value::as_str);
        Some(decode(&field.bytes, charset))
    };
    let headers_text = decoded("headers").ok_or_else(|| {
        malformed(
            "the Inbound Parse post has neither `headers` nor `email`: SendGrid sends one of \
             them (check the Inbound Parse URL points here)",
        )
    })?;
    let header_block = format!("{}\r\n\r\n", headers_text.trim_end());
    let headers = mail::parse_raw(header_block.as_bytes())
        .map(|m| m.headers)
        .unwrap_or_default();
    let mut mail = Mail::from_parts(
        headers,
        decoded("from"),
        decoded("to"),
        decoded("subject"),
        decoded("text"),
    );
    for part in form.fields.iter().filter(|f| f.filename.is_some()) {
        if let Some(ct) = &part.content_type {
            mail.add_part(ct, &part.bytes);
        }
    }
    super::form::refuse_nul(&Form {
        fields: ["from", "to", "subject"]
            .iter()
            .filter_map(|n| decoded(n).map(|v| (n, v)))
            .map(|(n, v)| super::form::Field {
                name: n.to_string(),
                filename: None,
                content_type: None,
                bytes: v.into_bytes(),
            })
            .collect(),
    })?;
    Ok(Reading::one(Notice::Mail(Box::new(mail))))
}

/// Bytes in the charset named (mail-parser's charset tables); UTF-8, replacing what is not,
/// when none is named or the name is unknown.
fn decode(bytes: &[u8], charset: Option<&str>) -> String {
    match charset.and_then(|c| mail_parser::decoders::charsets::map::charset_decoder(c.as_bytes()))
    {
        Some(decoder) => decoder(bytes),
        None => String::from_utf8_lossy(bytes).into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // sendgrid-python's test/unit/test_eventwebhook.py, byte for byte (the CRLF is signed too).
    const PUBLIC_KEY: &str = "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE83T4O/n84iotIvIW4mdBgQ/7dAfSmpqIM8kF9mN1flpVKS3GRqe62gw+2fNNRaINXvVpiglSI8eNEc6wEA3F+g==";
    const SIGNATURE: &str = "MEUCIGHQVtGj+Y3LkG9fLcxf3qfI10QysgDWmMOVmxG0u6ZUAiEAyBiXDWzM+uOe5W0JuG+luQAbPIqHh89M15TluLtEZtM=";
    const TIMESTAMP: &str = "1600112502";
    const PAYLOAD: &str = "[{\"email\":\"hello@world.com\",\"event\":\"dropped\",\"reason\":\"Bounced Address\",\"sg_event_id\":\"ZHJvcC0xMDk5NDkxOS1MUnpYbF9OSFN0T0doUTRrb2ZTbV9BLTA\",\"sg_message_id\":\"LRzXl_NHStOGhQ4kofSm_A.filterdrecv-p3mdw1-756b745b58-kmzbl-18-5F5FC76C-9.0\",\"smtp-id\":\"<LRzXl_NHStOGhQ4kofSm_A@ismtpd0039p1iad1.sendgrid.net>\",\"timestamp\":1600112492}]\r\n";

    fn at(secs: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(secs, 0).unwrap()
    }

    #[test]
    fn sendgrids_own_vector_verifies() {
        let key = VerificationKey::parse(PUBLIC_KEY).unwrap();
        let now = at(1_600_112_502 + 60);
        verify(
            &key,
            Some(SIGNATURE),
            Some(TIMESTAMP),
            PAYLOAD.as_bytes(),
            now,
        )
        .unwrap();
        // Byte-exact: without the trailing CRLF it fails.
        let trimmed = PAYLOAD.trim_end().as_bytes();
        assert!(verify(&key, Some(SIGNATURE), Some(TIMESTAMP), trimmed, now).is_err());
        assert!(verify(
            &key,
            Some(SIGNATURE),
            Some("1600112503"),
            PAYLOAD.as_bytes(),
            now
        )
        .is_err());
        assert!(verify(&key, None, Some(TIMESTAMP), PAYLOAD.as_bytes(), now).is_err());
        let stale = verify(
            &key,
            Some(SIGNATURE),
            Some(TIMESTAMP),
            PAYLOAD.as_bytes(),
            at(1_600_112_502 + 301),
        );
        assert!(stale.unwrap_err().to_string().contains("stale"));
        let r = events(PAYLOAD.as_bytes()).unwrap();
        let Notice::Email(e) = &r.notices[0] else {
            panic!("{r:?}")
        };
        assert_eq!(e.event, EmailEvent::Bounce(BounceType::Hard));
        assert_eq!(e.recipient, "hello@world.com");
        assert_eq!(
            e.provider_id,
            "sendgrid:ZHJvcC0xMDk5NDkxOS1MUnpYbF9OSFN0T0doUTRrb2ZTbV9BLTA"
        );
        assert_eq!(
            e.provider_message_id.as_deref(),
            Some("LRzXl_NHStOGhQ4kofSm_A")
        );
    }

    #[test]
    fn the_docs_sample_maps_each_event() {
        // sendgrid/docs event.md's sample, plus events nudge does not act on.
        let body = r#"[
 {"email":"example@test.com","timestamp":1513299569,"smtp-id":"<14c5d75ce93.dfd.64b469@ismtpd-555>","event":"bounce","category":"cat facts","sg_event_id":"6g4ZI7SA-xmRDv57GoPIPw==","sg_message_id":"14c5d75ce93.dfd.64b469.filter0001.16648.5515E0B88.0","reason":"500 unknown recipient","status":"5.0.0","type":"bounce"},
 {"email":"example@test.com","timestamp":1513299569,"smtp-id":"<14c5d75ce93.dfd.64b469@ismtpd-555>","event":"dropped","category":"cat facts","sg_event_id":"zmzJhfJgAfUSOW80yEbPyw==","sg_message_id":"14c5d75ce93.dfd.64b469.filter0001.16648.5515E0B88.0","reason":"Bounced Address","status":"5.0.0"},
 {"email":"example@test.com","timestamp":1513299569,"smtp-id":"<14c5d75ce93.dfd.64b469@ismtpd-555>","event":"spamreport","category":"cat facts","sg_event_id":"37nvH5QBz858KGVYCM4uOA==","sg_message_id":"14c5d75ce93.dfd.64b469.filter0001.16648.5515E0B88.0"},
 {"email":"example@test.com","timestamp":1513299569,"smtp-id":"<14c5d75ce93.dfd.64b469@ismtpd-555>","event":"unsubscribe","category":"cat facts","sg_event_id":"zz_BjPgU_5pS-J8vlfB1sg==","sg_message_id":"14c5d75ce93.dfd.64b469.filter0001.16648.5515E0B88.0"},
 {"email":"example@test.com","timestamp":1513299569,"event":"open","sg_event_id":"o1"},
 {"email":"example@test.com","timestamp":1513299569,"event":"bounce","type":"blocked","sg_event_id":"b2"}
]"#;
        let r = events(body.as_bytes()).unwrap();
        let kinds: Vec<Option<EmailEvent>> = r
            .notices
            .iter()
            .map(|n| match n {
                Notice::Email(e) => Some(e.event),
                _ => None,
            })
            .collect();
        assert_eq!(
            kinds,
            [
                Some(EmailEvent::Bounce(BounceType::Hard)),
                Some(EmailEvent::Bounce(BounceType::Hard)),
                Some(EmailEvent::Complaint),
                Some(EmailEvent::Unsubscribe),
                None,
                Some(EmailEvent::Bounce(BounceType::Soft)),
            ]
        );
        for bad in [
            r#"{"event":"bounce"}"#,
            r#"[{"event":"boom","email":"a@b"}]"#,
            r#"[{"event":"bounce","email":"a@b"}]"#,
            "[",
        ] {
            assert!(
                matches!(events(bad.as_bytes()), Err(Refusal::Malformed(_))),
                "{bad}"
            );
        }
    }

    #[test]
    fn inbound_parse_honours_charsets() {
        // anymail's test_inbound_charsets, captured from a real SendGrid request.
        let field = |name: &str, bytes: &[u8]| super::super::form::Field {
            name: name.into(),
            filename: None,
            content_type: None,
            bytes: bytes.to_vec(),
        };
        let form = Form {
            fields: vec![
                field("headers", b"MIME-Version: 1.0\nFrom: Sender <sender@example.com>\nMessage-ID: <in-1@example.com>\nIn-Reply-To: <en_9.1@nudge>\nSubject: x\n"),
                field("charsets", br#"{"to":"UTF-8","cc":"UTF-8","html":"iso-8859-1","subject":"cp850","from":"UTF-8","text":"windows-1252"}"#),
                field("subject", b"Como usted pidi\xa2"),
                field("text", b"Test the ESP\x92s inbound charset handling\x85"),
                field("html", b"<p>\xbfEsto se ve como esperabas?</p>"),
                field("from", b"Sender <sender@example.com>"),
            ],
        };
        let r = inbound(&form).unwrap();
        let Notice::Mail(mail) = &r.notices[0] else {
            panic!()
        };
        assert_eq!(mail.subject.as_deref(), Some("Como usted pidió"));
        assert_eq!(
            mail.text.as_deref(),
            Some("Test the ESP’s inbound charset handling…")
        );
        assert_eq!(mail.thread_candidates(), ["<en_9.1@nudge>"]);
        assert_eq!(mail.header("Message-ID"), Some("<in-1@example.com>"));
        assert!(matches!(
            inbound(&Form::default()),
            Err(Refusal::Malformed(_))
        ));
    }
}
