//! An inbound email, whichever way it arrived (SPEC §7, §10): the webhook's JSON (`headers`,
//! `from`, `to`, `subject`, `text`) or the raw MIME message (a `raw` field, or a body sent as
//! `Content-Type: message/rfc822`), parsed with the `mail-parser` crate so providers that
//! forward raw mail work. Pure: bytes in, a [`Mail`] out.
//!
//! A delivery status notification (RFC 3464, `multipart/report; report-type=delivery-status`)
//! keeps its per-recipient fields ([`Dsn`]) and the `Message-ID` of the returned message (the
//! one nudge sent), which is how a bounce finds its thread.

use chrono::{DateTime, TimeZone, Utc};
use mail_parser::{MessageParser, MimeHeaders, PartType};

/// The most text of a body kept for classification and return dates (64 KiB): responders put
/// their notice at the top, and the rest is the quoted original.
pub const MAX_TEXT: usize = 64 * 1024;

/// One inbound email.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Mail {
    /// Every header as (name, value), values unfolded, in order.
    pub headers: Vec<(String, String)>,
    /// The sender's address.
    pub from: Option<String>,
    /// The recipient(s), as written.
    pub to: Option<String>,
    /// The subject, decoded.
    pub subject: Option<String>,
    /// The plain text body (or the text of the HTML one), at most [`MAX_TEXT`] bytes.
    pub text: Option<String>,
    /// The `Date` header, when it parses: what a return date without a year counts from.
    pub date: Option<DateTime<Utc>>,
    /// The delivery status fields, when it is a DSN.
    pub dsn: Option<Dsn>,
    /// The `Message-ID` of the message a DSN returns (its `message/rfc822` or
    /// `text/rfc822-headers` part).
    pub returned_message_id: Option<String>,
}

/// The fields of a `message/delivery-status` part (RFC 3464 §2.3), per recipient.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Dsn {
    /// One entry per recipient block, in order.
    pub recipients: Vec<DsnRecipient>,
}

/// One per-recipient block of a DSN.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DsnRecipient {
    /// `Final-Recipient` without its address type (`rfc822;`).
    pub final_recipient: Option<String>,
    /// `Action`: `failed`, `delayed`, `delivered`, `relayed`, `expanded` (lower case).
    pub action: Option<String>,
    /// `Status`: `5.1.1`, `4.4.7`, … as written.
    pub status: Option<String>,
    /// `Diagnostic-Code` without its type (`smtp;`).
    pub diagnostic: Option<String>,
}

/// Why a raw message was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MailError {
    /// Nothing that reads as a header block.
    #[error("the raw message does not parse as MIME (RFC 5322): {0}")]
    NotMime(String),
}

impl Mail {
    /// A mail from the webhook's JSON fields (or a simulation's script entry). A `Subject`
    /// header stands in for a missing `subject`, and a `Date` header (RFC 5322) gives `date`.
    pub fn from_parts(
        headers: Vec<(String, String)>,
        from: Option<String>,
        to: Option<String>,
        subject: Option<String>,
        text: Option<String>,
    ) -> Mail {
        let mut mail = Mail {
            headers,
            from,
            to,
            subject,
            text: text.map(|t| cap(t, MAX_TEXT)),
            ..Mail::default()
        };
        if mail.subject.is_none() {
            mail.subject = mail.header("Subject").map(str::to_string);
        }
        mail.date = mail
            .header("Date")
            .and_then(|d| DateTime::parse_from_rfc2822(d.trim()).ok())
            .map(|d| d.with_timezone(&Utc));
        mail
    }

    /// A header's value, its name in any case (the first one).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The thread candidates' raw sources: `In-Reply-To` and `References` of the mail, then
    /// (for a DSN) the returned message's `Message-ID`.
    pub fn thread_candidates(&self) -> Vec<String> {
        let mut out =
            super::thread::candidates(self.header("In-Reply-To"), self.header("References"));
        if let Some(id) = &self.returned_message_id {
            for id in super::thread::message_ids(id) {
                if !out.contains(&id) {
                    out.push(id);
                }
            }
        }
        out
    }
}

/// Parses a raw MIME message. Never panics; an input with no header block is refused.
pub fn parse_raw(bytes: &[u8]) -> Result<Mail, MailError> {
    let has_header = bytes.split(|b| *b == b'\n').next().is_some_and(|line| {
        let line = String::from_utf8_lossy(line);
        line.split_once(':').is_some_and(|(name, _)| {
            !name.is_empty() && name.bytes().all(|b| b.is_ascii_graphic() && b != b':')
        })
    });
    if !has_header {
        return Err(MailError::NotMime(
            "its first line is not a header (`Name: value`); send the message as received, \
             headers first"
                .into(),
        ));
    }
    let message = MessageParser::default()
        .parse(bytes)
        .ok_or_else(|| MailError::NotMime("no header block found".into()))?;
    let headers: Vec<(String, String)> = message
        .headers_raw()
        .map(|(k, v)| (k.to_string(), unfold(v)))
        .collect();
    let from = message
        .from()
        .and_then(|a| a.first())
        .and_then(|a| a.address())
        .map(str::to_string);
    let to = message
        .to()
        .and_then(|a| a.first())
        .and_then(|a| a.address())
        .map(str::to_string);
    let subject = message.subject().map(str::to_string);
    let text = message
        .body_text(0)
        .map(|t| t.into_owned())
        .map(|t| cap(t, MAX_TEXT));
    let date = message.date().and_then(|d| {
        let ts = d.to_timestamp();
        (d.year > 1970)
            .then(|| Utc.timestamp_opt(ts, 0).single())
            .flatten()
    });
    let mut dsn = None;
    let mut returned_message_id = None;
    for part in &message.parts {
        let Some(ct) = part.content_type() else {
            continue;
        };
        let sub = ct.subtype().unwrap_or("").to_ascii_lowercase();
        let ty = ct.ctype().to_ascii_lowercase();
        if ty == "message" && (sub == "delivery-status" || sub == "global-delivery-status") {
            dsn = Some(parse_delivery_status(&String::from_utf8_lossy(
                part.contents(),
            )));
        } else if ty == "text" && sub == "rfc822-headers" {
            let raw = part.contents();
            if let Some(inner) = MessageParser::default().parse_headers(raw) {
                returned_message_id = inner.message_id().map(|m| format!("<{m}>"));
            }
        } else if let PartType::Message(inner) = &part.body {
            if returned_message_id.is_none() {
                returned_message_id = inner.message_id().map(|m| format!("<{m}>"));
            }
        }
    }
    // A report whose delivery-status part mail-parser kept as text (some relays label it
    // `text/plain`) is found by its fields when the top type says it is a report.
    let is_report = message.content_type().is_some_and(|ct| {
        ct.ctype().eq_ignore_ascii_case("multipart")
            && ct
                .subtype()
                .is_some_and(|s| s.eq_ignore_ascii_case("report"))
            && ct
                .attribute("report-type")
                .is_some_and(|r| r.to_ascii_lowercase().contains("delivery-status"))
    });
    if is_report && dsn.is_none() {
        dsn = Some(Dsn::default());
    }
    Ok(Mail {
        headers,
        from,
        to,
        subject,
        text,
        date,
        dsn,
        returned_message_id,
    })
}

/// Reads RFC 3464 fields: blocks separated by blank lines, the first one per message, the
/// others per recipient; folded lines joined; names in any case.
pub fn parse_delivery_status(text: &str) -> Dsn {
    let mut recipients = Vec::new();
    for block in blocks(text) {
        let mut r = DsnRecipient::default();
        let mut any = false;
        for (name, value) in block {
            let value = value.trim().to_string();
            match name.to_ascii_lowercase().as_str() {
                "final-recipient" | "original-recipient" if r.final_recipient.is_none() => {
                    r.final_recipient = Some(after_type(&value));
                    any = true;
                }
                "action" => {
                    r.action = Some(value.to_ascii_lowercase());
                    any = true;
                }
                "status" => {
                    r.status = Some(value);
                    any = true;
                }
                "diagnostic-code" => {
                    r.diagnostic = Some(after_type(&value));
                    any = true;
                }
                _ => {}
            }
        }
        if any {
            recipients.push(r);
        }
    }
    Dsn { recipients }
}

/// `rfc822; ann@example.com` → `ann@example.com`.
fn after_type(value: &str) -> String {
    match value.split_once(';') {
        Some((_, rest)) => rest.trim().to_string(),
        None => value.trim().to_string(),
    }
}

/// Header-like blocks separated by blank lines, folded lines joined.
fn blocks(text: &str) -> Vec<Vec<(String, String)>> {
    let mut out: Vec<Vec<(String, String)>> = vec![Vec::new()];
    for line in text.lines() {
        if line.trim().is_empty() {
            if !out.last().is_some_and(Vec::is_empty) {
                out.push(Vec::new());
            }
            continue;
        }
        let block = out.last_mut().expect("never empty");
        if line.starts_with([' ', '\t']) {
            if let Some((_, v)) = block.last_mut() {
                v.push(' ');
                v.push_str(line.trim());
            }
            continue;
        }
        if let Some((name, value)) = line.split_once(':') {
            block.push((name.trim().to_string(), value.trim().to_string()));
        }
    }
    out.retain(|b| !b.is_empty());
    out
}

/// A folded header value on one line.
fn unfold(value: &str) -> String {
    value
        .split(['\r', '\n'])
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// At most `max` bytes, cut at a character boundary.
pub fn cap(mut text: String, max: usize) -> String {
    if text.len() > max {
        let mut end = max;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delivery_status_fields() {
        let text = "Reporting-MTA: dns; mx.example.net\r\nArrival-Date: Tue, 1 Dec 2026\r\n\r\n\
                    Final-Recipient: rfc822; ann@example.com\r\nAction: failed\r\nStatus: 5.1.1\r\n\
                    Diagnostic-Code: smtp; 550 5.1.1 <ann@example.com>:\r\n    Recipient address rejected\r\n";
        let dsn = parse_delivery_status(text);
        assert_eq!(dsn.recipients.len(), 1);
        let r = &dsn.recipients[0];
        assert_eq!(r.final_recipient.as_deref(), Some("ann@example.com"));
        assert_eq!(r.action.as_deref(), Some("failed"));
        assert_eq!(r.status.as_deref(), Some("5.1.1"));
        assert!(r
            .diagnostic
            .as_deref()
            .unwrap()
            .contains("Recipient address rejected"));
    }

    #[test]
    fn garbage_never_panics() {
        for bytes in [
            &b""[..],
            b"\xff\xfe\x00",
            b"no header here\n\nbody",
            b":\n",
            b"Subject: x",
            b"Content-Type: multipart/report; boundary=\"b\"\r\n\r\n--b\r\nContent-Type: message/delivery-status\r\n\r\n",
        ] {
            let _ = parse_raw(bytes);
        }
        assert!(parse_raw(b"no header here\n\nbody").is_err());
        assert!(parse_raw(b"").is_err());
        let m = parse_raw(b"Subject: hi\r\n\r\nbody").unwrap();
        assert_eq!(m.subject.as_deref(), Some("hi"));
    }
}
