//! Amazon SES notifications through SNS. SNS posts a JSON envelope (as `text/plain`) signed
//! with RSA: `SignatureVersion` 1 is SHA1withRSA, 2 is SHA256withRSA, over `Key\nValue\n` of a
//! fixed list of keys; the certificate is at `SigningCertURL`, which must be
//! `https://sns.<region>.amazonaws.com/….pem`. Fetching and caching it is the edge's; checking
//! the URL, the certificate's validity and the signature is here. The SES message inside
//! (`Message`, a JSON string) is one of two schemas: `notificationType` (identity
//! notifications) or `eventType` (configuration-set events). AWS documents the envelope and its
//! signature at docs.aws.amazon.com/sns/latest/dg/sns-verify-signature-of-message.html, the SES
//! messages at docs.aws.amazon.com/ses/latest/dg/notification-examples.html.

use super::{forged, malformed, EmailEvent, EmailNotice, Notice, Reading, Refusal};
use crate::inbound::classify::BounceType;
use crate::inbound::mail;
use base64::Engine;
use chrono::{DateTime, Utc};
use serde_json::Value;

/// SNS gives up on an HTTP/S endpoint after at most 3,600 s of retries (a hard limit of its
/// delivery policies): a notification signed longer ago than that (and a clock's skew) is not
/// a retry, it is a replay.
pub const MAX_AGE_SECS: i64 = 3_600 + 300;
/// How far ahead of the clock a `Timestamp` may be (a clock's skew).
pub const MAX_AHEAD_SECS: i64 = 300;
/// The largest certificate accepted from `SigningCertURL`.
pub const MAX_CERT_BYTES: usize = 16 * 1024;

/// What an SNS message is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessageType {
    /// A topic's message: for SES, a notification.
    Notification,
    /// Asks the endpoint to confirm a subscription by visiting `SubscribeURL`.
    SubscriptionConfirmation,
    /// Says the subscription ended. Visiting its URL would subscribe again: never done.
    UnsubscribeConfirmation,
}

/// An SNS envelope, every field as sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Envelope {
    /// `Type`.
    pub kind: MessageType,
    /// `MessageId`: the same on SNS's retries.
    pub message_id: String,
    /// `TopicArn`.
    pub topic_arn: String,
    /// `Message`: for a notification, the SES JSON as a string.
    pub message: String,
    /// `Subject` (notifications only, optional).
    pub subject: Option<String>,
    /// `Timestamp`, as sent (it is signed as text).
    pub timestamp: String,
    /// `SignatureVersion`: `1` (SHA1) or `2` (SHA256).
    pub signature_version: String,
    /// `Signature`, base64.
    pub signature: String,
    /// `SigningCertURL` (`SigningCertUrl` when Lambda delivered it).
    pub signing_cert_url: String,
    /// `SubscribeURL` (confirmations).
    pub subscribe_url: Option<String>,
    /// `Token` (confirmations).
    pub token: Option<String>,
}

impl Envelope {
    /// Reads the envelope; the refusal names the missing or bad field.
    pub fn parse(body: &[u8]) -> Result<Envelope, Refusal> {
        let v: Value = serde_json::from_slice(body)
            .map_err(|e| malformed(format!("the body is not SNS's JSON: {e}")))?;
        if !v.is_object() {
            return Err(malformed("the body is not an SNS message (a JSON object)"));
        }
        let text = |names: &[&str]| {
            names
                .iter()
                .find_map(|n| v.get(*n).and_then(Value::as_str))
                .map(str::to_string)
        };
        let need = |names: &[&str]| {
            text(names).ok_or_else(|| {
                malformed(format!(
                    "the SNS message has no `{}`; is this endpoint subscribed to an SNS topic \
                     (with raw message delivery off)?",
                    names[0]
                ))
            })
        };
        let kind = match need(&["Type"])?.as_str() {
            "Notification" => MessageType::Notification,
            "SubscriptionConfirmation" => MessageType::SubscriptionConfirmation,
            "UnsubscribeConfirmation" => MessageType::UnsubscribeConfirmation,
            other => {
                return Err(malformed(format!(
                    "`Type` {} is not an SNS message type (Notification, \
                     SubscriptionConfirmation, UnsubscribeConfirmation)",
                    crate::quote::quote(other)
                )))
            }
        };
        let envelope = Envelope {
            kind,
            message_id: need(&["MessageId"])?,
            topic_arn: need(&["TopicArn"])?,
            message: need(&["Message"])?,
            subject: text(&["Subject"]),
            timestamp: need(&["Timestamp"])?,
            signature_version: need(&["SignatureVersion"])?,
            signature: need(&["Signature"])?,
            signing_cert_url: need(&["SigningCertURL", "SigningCertUrl"])?,
            subscribe_url: text(&["SubscribeURL", "SubscribeUrl"]),
            token: text(&["Token"]),
        };
        if kind != MessageType::Notification && envelope.subscribe_url.is_none() {
            return Err(malformed("the confirmation has no `SubscribeURL`"));
        }
        Ok(envelope)
    }

    /// The bytes SNS signed: `Key\nValue\n` for each key present, in this order (the AWS
    /// validators' list; a notification has no `SubscribeURL` or `Token`, a confirmation no
    /// `Subject`).
    pub fn string_to_sign(&self) -> String {
        let mut out = String::new();
        let mut add = |k: &str, v: Option<&str>| {
            if let Some(v) = v {
                out.push_str(k);
                out.push('\n');
                out.push_str(v);
                out.push('\n');
            }
        };
        let notification = self.kind == MessageType::Notification;
        add("Message", Some(&self.message));
        add("MessageId", Some(&self.message_id));
        if notification {
            add("Subject", self.subject.as_deref());
        } else {
            add("SubscribeURL", self.subscribe_url.as_deref());
        }
        add("Timestamp", Some(&self.timestamp));
        if !notification {
            add("Token", self.token.as_deref());
        }
        add("TopicArn", Some(&self.topic_arn));
        add("Type", Some(self.type_name()));
        out
    }

    fn type_name(&self) -> &'static str {
        match self.kind {
            MessageType::Notification => "Notification",
            MessageType::SubscriptionConfirmation => "SubscriptionConfirmation",
            MessageType::UnsubscribeConfirmation => "UnsubscribeConfirmation",
        }
    }

    /// Checks the signature with the certificate `cert` (PEM or DER) fetched from
    /// `SigningCertURL`, the certificate's validity at `now`, and the message's age.
    pub fn verify(&self, cert: &[u8], now: DateTime<Utc>) -> Result<(), Refusal> {
        let der = match x509_parser::pem::parse_x509_pem(cert) {
            Ok((_, pem)) => pem.contents,
            Err(_) => cert.to_vec(),
        };
        use x509_parser::prelude::FromDer;
        let (_, cert) =
            x509_parser::certificate::X509Certificate::from_der(&der).map_err(|_| {
                forged("the certificate at `SigningCertURL` is not an X.509 certificate")
            })?;
        let validity = cert.validity();
        let (from, to) = (
            validity.not_before.timestamp(),
            validity.not_after.timestamp(),
        );
        if now.timestamp() < from || now.timestamp() > to {
            return Err(forged(format!(
                "the SNS signing certificate is not valid now (valid from {} to {})",
                DateTime::<Utc>::from_timestamp(from, 0)
                    .unwrap_or_default()
                    .to_rfc3339(),
                DateTime::<Utc>::from_timestamp(to, 0)
                    .unwrap_or_default()
                    .to_rfc3339(),
            )));
        }
        let algorithm: &dyn ring::signature::VerificationAlgorithm =
            match self.signature_version.as_str() {
                "1" => &ring::signature::RSA_PKCS1_2048_8192_SHA1_FOR_LEGACY_USE_ONLY,
                "2" => &ring::signature::RSA_PKCS1_2048_8192_SHA256,
                other => {
                    return Err(forged(format!(
                        "`SignatureVersion` {} is not one SNS uses (1 or 2)",
                        crate::quote::quote(other)
                    )))
                }
            };
        let signature = base64::engine::general_purpose::STANDARD
            .decode(self.signature.trim())
            .map_err(|_| forged("the SNS `Signature` is not base64"))?;
        let key = cert.public_key().subject_public_key.data.as_ref();
        ring::signature::UnparsedPublicKey::new(algorithm, key)
            .verify(self.string_to_sign().as_bytes(), &signature)
            .map_err(|_| forged("the SNS signature does not match the message"))?;
        let at = DateTime::parse_from_rfc3339(&self.timestamp)
            .map_err(|_| forged("the SNS `Timestamp` is not RFC 3339"))?;
        let age = now.timestamp() - at.timestamp();
        if age > MAX_AGE_SECS || -age > MAX_AHEAD_SECS {
            return Err(forged(format!(
                "stale signature: the SNS message was signed {age} s ago; SNS retries for at \
                 most an hour, so this is a replay (or a clock that is off)"
            )));
        }
        Ok(())
    }
}

/// `SigningCertURL` and `SubscribeURL` must be HTTPS on SNS's own regional host: anything
/// else is a forgery pointing nudge at a certificate (or a request) of its choosing.
pub fn check_sns_url(url: &str, what: &str) -> Result<url::Url, Refusal> {
    let parsed = url::Url::parse(url).map_err(|_| forged(format!("`{what}` is not a URL")))?;
    let host = parsed.host_str().unwrap_or("");
    let regional = host
        .strip_prefix("sns.")
        .and_then(|h| {
            h.strip_suffix(".amazonaws.com.cn")
                .or_else(|| h.strip_suffix(".amazonaws.com"))
        })
        .is_some_and(|region| {
            region.len() >= 3
                && region
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-')
        });
    if parsed.scheme() != "https"
        || !regional
        || parsed.port().is_some_and(|p| p != 443)
        || !parsed.username().is_empty()
        || parsed.password().is_some()
    {
        return Err(forged(format!(
            "`{what}` {} is not on https://sns.<region>.amazonaws.com: only SNS's own host is \
             trusted",
            crate::quote::quote(url)
        )));
    }
    if what == "SigningCertURL" && !parsed.path().ends_with(".pem") {
        return Err(forged("`SigningCertURL` does not name a .pem certificate"));
    }
    Ok(parsed)
}

/// An account's `ses` secret: the topic ARNs it takes notifications from, one a line.
pub fn parse_topics(text: &str) -> Result<Vec<String>, String> {
    let mut topics = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let parts: Vec<&str> = line.split(':').collect();
        let ok = parts.len() == 6
            && parts[0] == "arn"
            && parts[1].starts_with("aws")
            && parts[2] == "sns"
            && !parts[3].is_empty()
            && parts[4].len() == 12
            && parts[4].chars().all(|c| c.is_ascii_digit())
            && !parts[5].is_empty();
        if !ok {
            return Err(format!(
                "line {} is not an SNS topic ARN: write one `arn:aws:sns:REGION:ACCOUNT:TOPIC` a \
                 line",
                i + 1
            ));
        }
        topics.push(line.to_string());
    }
    if topics.is_empty() {
        return Err("no topic: write one `arn:aws:sns:REGION:ACCOUNT:TOPIC` a line".into());
    }
    Ok(topics)
}

/// A verified notification's SES message as notices: one per recipient of a bounce or a
/// complaint; the mail itself for a `Received` one; nothing acted on for the rest.
pub fn notices(envelope: &Envelope) -> Result<Reading, Refusal> {
    let Ok(message) = serde_json::from_str::<Value>(&envelope.message) else {
        // SES's setup message ("Successfully validated SNS topic for Amazon SES event
        // publishing.") is a sentence, not JSON.
        return Ok(Reading::one(Notice::Ignored(
            "an SNS notification whose message is not an SES notification".into(),
        )));
    };
    let kind = message
        .get("notificationType")
        .or_else(|| message.get("eventType"))
        .and_then(Value::as_str)
        .ok_or_else(|| {
            malformed("the SES message has neither `notificationType` nor `eventType`")
        })?;
    let mail_ids = |m: &Value| {
        let message_id = m
            .pointer("/mail/commonHeaders/messageId")
            .and_then(Value::as_str)
            .map(|id| {
                if id.starts_with('<') {
                    id.to_string()
                } else {
                    format!("<{id}>")
                }
            });
        let ses_id = m
            .pointer("/mail/messageId")
            .and_then(Value::as_str)
            .map(str::to_string);
        (message_id, ses_id)
    };
    let (message_id, ses_id) = mail_ids(&message);
    let each = |list: &str,
                field: &str,
                event: &dyn Fn(&Value) -> EmailEvent,
                detail: &dyn Fn(&Value) -> Option<String>| {
        let recipients = message
            .pointer(list)
            .and_then(Value::as_array)
            .ok_or_else(|| malformed(format!("the SES `{kind}` has no `{}` list", &list[1..])))?;
        let mut out = Vec::new();
        for r in recipients {
            let address = r.get(field).and_then(Value::as_str).ok_or_else(|| {
                malformed(format!("an entry of `{}` has no `{field}`", &list[1..]))
            })?;
            out.push(Notice::Email(EmailNotice {
                event: event(r),
                recipient: address.to_string(),
                message_id: message_id.clone(),
                provider_message_id: ses_id.clone(),
                provider_id: format!(
                    "ses:{}:{}",
                    envelope.message_id,
                    address.to_ascii_lowercase()
                ),
                detail: detail(r),
            }));
        }
        Ok::<_, Refusal>(out)
    };
    let notices = match kind {
        "Bounce" => {
            let bounce_type = message
                .pointer("/bounce/bounceType")
                .and_then(Value::as_str)
                .unwrap_or("");
            let bounce = match bounce_type.to_ascii_lowercase().as_str() {
                "permanent" => BounceType::Hard,
                "transient" | "undetermined" => BounceType::Soft,
                _ => {
                    return Err(malformed(format!(
                        "`bounce.bounceType` {} is not Permanent, Transient or Undetermined",
                        crate::quote::quote(bounce_type)
                    )))
                }
            };
            each(
                "/bounce/bouncedRecipients",
                "emailAddress",
                &|_| EmailEvent::Bounce(bounce),
                &|r| {
                    let parts: Vec<&str> = ["status", "diagnosticCode"]
                        .iter()
                        .filter_map(|k| r.get(*k).and_then(Value::as_str))
                        .collect();
                    (!parts.is_empty()).then(|| parts.join(" "))
                },
            )?
        }
        "Complaint" => each(
            "/complaint/complainedRecipients",
            "emailAddress",
            &|_| EmailEvent::Complaint,
            &|_| {
                message
                    .pointer("/complaint/complaintFeedbackType")
                    .and_then(Value::as_str)
                    .map(str::to_string)
            },
        )?,
        "Received" => {
            let content = message
                .get("content")
                .and_then(Value::as_str)
                .ok_or_else(|| {
                    malformed(
                        "the SES `Received` notification has no `content`: set the receipt \
                         rule's SNS action to include the message",
                    )
                })?;
            let encoding = message
                .pointer("/receipt/action/encoding")
                .and_then(Value::as_str)
                .unwrap_or("UTF8");
            let raw = if encoding.eq_ignore_ascii_case("BASE64") {
                base64::engine::general_purpose::STANDARD
                    .decode(content.trim())
                    .map_err(|_| malformed("the `Received` content is not base64"))?
            } else {
                content.as_bytes().to_vec()
            };
            let mail = mail::parse_raw(&raw).map_err(|e| malformed(format!("`content`: {e}")))?;
            vec![Notice::Mail(Box::new(mail))]
        }
        "Delivery"
        | "Send"
        | "Reject"
        | "Open"
        | "Click"
        | "Rendering Failure"
        | "DeliveryDelay"
        | "Subscription"
        | "AmazonSnsSubscriptionSucceeded" => {
            vec![Notice::Ignored(format!(
                "an SES `{kind}` notification, which nudge does not act on"
            ))]
        }
        other => {
            return Err(malformed(format!(
                "{} is not an SES notification type",
                crate::quote::quote(other)
            )))
        }
    };
    Ok(Reading {
        notices,
        replay: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The certificate of aws-php-sns-message-validator's functional tests
    /// (tests/FunctionalValidationsTest.php): valid 2021-09-07 to 2022-08-17.
    pub const AWS_TEST_CERT: &str =
        include_str!("../../../fixtures/providers/ses/aws-test-cert.pem");

    const V2: &str = r#"{"Type":"Notification","MessageId":"17dea24b-55c2-540b-8362-f916557af765",
 "TopicArn":"arn:aws:sns:us-east-2:295079676684:publish-and-verify-62674b1d-4295-426b-88e7-5fb75652a04e",
 "Message":"Hello world","Timestamp":"2022-07-28T21:24:08.324Z","SignatureVersion":"2",
 "Signature":"CXVqp9PfZAL+4JHS3Zxo1PFbQsvnOjvmYhtIf17TWpwc+iIVas8kZ8GopuzVzVMdatE7rCl/O4P91Zp05Dwz8lk8dLhfp8gSu3Njlzxlyrmzo9x3va3Jb7zFnedgS2GKnZWHGBdwTXho+TosNUE+3e10OMSlwN5XGDwX7+R3WL+rn+AXmFAqp3alg27sYa55h1dLE9cGszGPjScPdtF3BmZsUDMx9wSdNKsCk+vSvE8yBjnCmUl7laSFj3LzPVrlSwgNYCF3kYnNAkah7NplK4SFhJYLwS0HCVCQJKa8rVbQLf9cBTu60U402mrgy0bN8xWoyimzbYbrOMJjalqkUg==",
 "SigningCertURL":"https://sns.us-east-2.amazonaws.com/SimpleNotificationService-7ff5318490ec183fbaddaa2a969abfda.pem"}"#;

    const V1: &str = r#"{"Type":"Notification","MessageId":"11405cc3-9ac7-56d5-b45d-079e8f7a8edf",
 "TopicArn":"arn:aws:sns:us-east-2:295079676684:publish-and-verify-6e11fed2-fcdf-4c52-9dc4-36ef43f37f84",
 "Subject":"Hello world","Message":"Hello world","Timestamp":"2022-07-28T22:53:49.654Z","SignatureVersion":"1",
 "Signature":"AItkS26d8yvnIKJevdirIPW7eM/yKbZy3/CF2EreCHmXWB3etWaV5Fb7SYpGABMpugpDZzNyGY1wCVWaopDoQ+7Q/kI2TpDu8bw1eExbi8U3kduvc/2m2fIrI4gDEY8/v3nzoLcr8pPodqMzrX6SzQou4klfaqbNK+rFmH0LVf2Q1VyOROODoSXmo4jg2Yu12jfxccBl96Drr/ihq4MJ4OcrWh6UzXXlVYjJHx2Ui4anNwNEb+Z4C2CAF1DjQUbhDtaoajDBPY+4d9C1OwbqwQpXsd6tyVcI9nFyEsVK8lfnAV+/3GZQcdXHbIUYBRGcBa4X5TlWJku5nDH2ERtHHw==",
 "SigningCertURL":"https://sns.us-east-2.amazonaws.com/SimpleNotificationService-7ff5318490ec183fbaddaa2a969abfda.pem"}"#;

    fn at(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text)
            .unwrap()
            .with_timezone(&Utc)
    }

    #[test]
    fn awss_own_vectors_verify() {
        let v2 = Envelope::parse(V2.as_bytes()).unwrap();
        assert_eq!(
            v2.string_to_sign(),
            "Message\nHello world\nMessageId\n17dea24b-55c2-540b-8362-f916557af765\nTimestamp\n\
             2022-07-28T21:24:08.324Z\nTopicArn\narn:aws:sns:us-east-2:295079676684:publish-and-verify-\
             62674b1d-4295-426b-88e7-5fb75652a04e\nType\nNotification\n"
        );
        v2.verify(AWS_TEST_CERT.as_bytes(), at("2022-07-28T21:25:00Z"))
            .unwrap();
        let v1 = Envelope::parse(V1.as_bytes()).unwrap();
        v1.verify(AWS_TEST_CERT.as_bytes(), at("2022-07-28T22:54:00Z"))
            .unwrap();
        // Altered: another message under the same signature.
        let mut forged = v1.clone();
        forged.message = "Hello World".into();
        assert!(forged
            .verify(AWS_TEST_CERT.as_bytes(), at("2022-07-28T22:54:00Z"))
            .is_err());
        // Version 1's signature read as version 2 fails too.
        let mut other = v1.clone();
        other.signature_version = "2".into();
        assert!(other
            .verify(AWS_TEST_CERT.as_bytes(), at("2022-07-28T22:54:00Z"))
            .is_err());
        // Stale: over an hour after it was signed.
        let e = v1
            .verify(AWS_TEST_CERT.as_bytes(), at("2022-07-29T00:00:00Z"))
            .unwrap_err();
        assert!(e.to_string().contains("stale"), "{e}");
        // The certificate's own validity: expired in 2022-08-17.
        let e = v1
            .verify(AWS_TEST_CERT.as_bytes(), at("2022-08-18T00:00:00Z"))
            .unwrap_err();
        assert!(e.to_string().contains("not valid now"), "{e}");
    }

    #[test]
    fn only_snss_own_host_is_trusted() {
        let ok = "https://sns.us-east-2.amazonaws.com/SimpleNotificationService-x.pem";
        assert!(check_sns_url(ok, "SigningCertURL").is_ok());
        assert!(check_sns_url(
            "https://sns.cn-north-1.amazonaws.com.cn/a.pem",
            "SigningCertURL"
        )
        .is_ok());
        for bad in [
            "http://sns.us-east-2.amazonaws.com/a.pem",
            "https://sns.us-east-2.amazonaws.com.evil.com/a.pem",
            "https://evil.com/sns.us-east-2.amazonaws.com/a.pem",
            "https://sns.amazonaws.com/a.pem",
            "https://s3.us-east-2.amazonaws.com/a.pem",
            "https://sns.us-east-2.amazonaws.com:8443/a.pem",
            "https://u:p@sns.us-east-2.amazonaws.com/a.pem",
            "https://sns.us-east-2.amazonaws.com/a.txt",
            "not a url",
        ] {
            assert!(check_sns_url(bad, "SigningCertURL").is_err(), "{bad}");
        }
    }

    #[test]
    fn ses_messages_as_notices() {
        let bounce = r#"{"notificationType":"Bounce",
 "bounce":{"bounceType":"Permanent","bounceSubType":"General","reportingMTA":"dns; email.example.com",
  "bouncedRecipients":[{"emailAddress":"jane@example.com","status":"5.1.1","action":"failed","diagnosticCode":"smtp; 550 5.1.1 <jane@example.com>... User unknown"}],
  "timestamp":"2016-01-27T14:59:44.101Z","feedbackId":"00000138111222aa-44455566-cccc-cccc-cccc-ddddaaaa068a-000000","remoteMtaIp":"127.0.2.0"},
 "mail":{"timestamp":"2016-01-27T14:59:38.237Z","source":"john@example.com","sourceArn":"arn:aws:ses:us-west-2:888888888888:identity/example.com",
  "sendingAccountId":"123456789012","messageId":"00000138111222aa-33322211-cccc-cccc-cccc-ddddaaaa0680-000000",
  "destination":["jane@example.com","mary@example.com","richard@example.com"],"headersTruncated":false,
  "commonHeaders":{"from":["John Doe <john@example.com>"],"messageId":"custom-message-ID","subject":"Hello"}}}"#;
        let envelope = |message: &str| Envelope {
            kind: MessageType::Notification,
            message_id: "m-1".into(),
            topic_arn: "arn:aws:sns:us-east-2:123456789012:ses".into(),
            message: message.into(),
            subject: None,
            timestamp: "2016-01-27T14:59:45.000Z".into(),
            signature_version: "1".into(),
            signature: String::new(),
            signing_cert_url: String::new(),
            subscribe_url: None,
            token: None,
        };
        let r = notices(&envelope(bounce)).unwrap();
        let Notice::Email(e) = &r.notices[0] else {
            panic!()
        };
        assert_eq!(e.event, EmailEvent::Bounce(BounceType::Hard));
        assert_eq!(e.recipient, "jane@example.com");
        assert_eq!(e.message_id.as_deref(), Some("<custom-message-ID>"));
        assert_eq!(e.provider_id, "ses:m-1:jane@example.com");
        let soft = bounce.replace("Permanent", "Transient");
        assert!(
            matches!(&notices(&envelope(&soft)).unwrap().notices[0], Notice::Email(e) if e.event == EmailEvent::Bounce(BounceType::Soft))
        );
        let complaint = r#"{"notificationType":"Complaint","complaint":{"userAgent":"AnyCompany Feedback Loop (V0.01)",
 "complainedRecipients":[{"emailAddress":"richard@example.com"}],"complaintFeedbackType":"abuse"},
 "mail":{"messageId":"000001378603177f-7a5433e7-8edb-42ae-af10-f0181f34d6ee-000000","destination":["jane@example.com","mary@example.com","richard@example.com"]}}"#;
        let r = notices(&envelope(complaint)).unwrap();
        assert!(
            matches!(&r.notices[0], Notice::Email(e) if e.event == EmailEvent::Complaint && e.recipient == "richard@example.com")
        );
        let delivery = r#"{"eventType":"Delivery","mail":{"messageId":"x"}}"#;
        assert!(matches!(
            notices(&envelope(delivery)).unwrap().notices[0],
            Notice::Ignored(_)
        ));
        let setup = "Successfully validated SNS topic for Amazon SES event publishing.";
        assert!(matches!(
            notices(&envelope(setup)).unwrap().notices[0],
            Notice::Ignored(_)
        ));
        let received = serde_json::json!({"notificationType": "Received",
            "receipt": {"action": {"type": "SNS", "encoding": "UTF8"}},
            "content": "From: ann@example.com\r\nIn-Reply-To: <en_1.4@nudge>\r\nSubject: Re: hi\r\n\r\nYes!"}).to_string();
        let r = notices(&envelope(&received)).unwrap();
        let Notice::Mail(m) = &r.notices[0] else {
            panic!()
        };
        assert_eq!(m.thread_candidates(), ["<en_1.4@nudge>"]);
        for bad in [
            r#"{"x":1}"#,
            r#"{"notificationType":"Bounce"}"#,
            r#"{"notificationType":"Boom"}"#,
        ] {
            assert!(
                matches!(notices(&envelope(bad)), Err(Refusal::Malformed(_))),
                "{bad}"
            );
        }
    }

    #[test]
    fn envelopes_and_topics() {
        assert!(
            matches!(Envelope::parse(b"{}"), Err(Refusal::Malformed(m)) if m.contains("`Type`"))
        );
        assert!(matches!(
            Envelope::parse(b"nope"),
            Err(Refusal::Malformed(_))
        ));
        assert!(parse_topics("arn:aws:sns:us-east-1:123456789012:t").is_ok());
        assert!(parse_topics("arn:aws:sns:us-east-1:1234:t").is_err());
        assert!(parse_topics("\n \n").is_err());
    }
}
