//! An inbound email, whichever way it arrived (docs/service.md; docs/signals.md, "Inbox signals"): the webhook's JSON (`headers`,
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
        mail.read_report();
        mail
    }

    /// A delivery status notification given as headers and a body (the email webhook's JSON,
    /// a provider's parsed fields, a simulation's script entry) is a DSN, as the same message
    /// sent raw is: a bounce must never pass for a reply, on any path. It is one
    /// when its `Content-Type` is `multipart/report; report-type=delivery-status`, or when it
    /// comes from a mail system (`mailer-daemon@…`, `postmaster@…`). The fields are read from
    /// the body as MIME when it is the report's MIME body, else from the text itself; a report
    /// whose fields cannot be read is still a report (journal-only), never a reply.
    fn read_report(&mut self) {
        if self.dsn.is_some() {
            return;
        }
        let content_type = self.header("Content-Type").map(str::to_string);
        let report = content_type.as_deref().is_some_and(is_delivery_report);
        let daemon = self
            .from
            .as_deref()
            .or(self.header("From"))
            .is_some_and(is_mail_system);
        if !report && !daemon {
            return;
        }
        let text = self.text.clone().unwrap_or_default();
        if let Some(ct) = content_type.as_deref().filter(|_| report) {
            let raw = format!("Content-Type: {ct}\r\n\r\n{text}");
            if let Ok(inner) = parse_raw(raw.as_bytes()) {
                if inner.dsn.as_ref().is_some_and(|d| !d.recipients.is_empty()) {
                    self.dsn = inner.dsn;
                    self.returned_message_id = inner.returned_message_id;
                    if inner.text.is_some() {
                        self.text = inner.text;
                    }
                    return;
                }
            }
        }
        let dsn = parse_delivery_status(&text);
        if self.returned_message_id.is_none() {
            self.returned_message_id = returned_id_in_text(&text);
        }
        self.dsn = Some(dsn);
    }

    /// Takes in a part a provider posted beside the parsed fields (Mailgun's attachments): a
    /// `message/delivery-status` part gives the DSN's fields, a `message/rfc822` or
    /// `text/rfc822-headers` one the returned message's `Message-ID`.
    pub fn add_part(&mut self, content_type: &str, bytes: &[u8]) {
        let media = content_type
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        match media.as_str() {
            "message/delivery-status" | "message/global-delivery-status" => {
                let dsn = parse_delivery_status(&String::from_utf8_lossy(bytes));
                if !dsn.recipients.is_empty() || self.dsn.is_none() {
                    self.dsn = Some(dsn);
                }
            }
            "message/rfc822" | "text/rfc822-headers" if self.returned_message_id.is_none() => {
                self.returned_message_id = MessageParser::default()
                    .parse_headers(bytes)
                    .and_then(|m| m.message_id().map(|id| format!("<{id}>")));
            }
            _ => {}
        }
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

/// `multipart/report; report-type=delivery-status` (any case, the parameter quoted or not).
pub fn is_delivery_report(content_type: &str) -> bool {
    let lower = content_type.to_ascii_lowercase();
    let mut parts = lower.split(';').map(str::trim);
    parts.next() == Some("multipart/report")
        && parts.any(|p| {
            p.strip_prefix("report-type")
                .map(|v| {
                    v.trim_start()
                        .trim_start_matches('=')
                        .trim()
                        .trim_matches('"')
                })
                .is_some_and(|v| v.contains("delivery-status"))
        })
}

/// Mail from a mail system rather than a person: `MAILER-DAEMON@…`, `postmaster@…` (RFC
/// 5321's senders of delivery reports), given as an address or a `Name <address>`.
pub fn is_mail_system(from: &str) -> bool {
    let address = match (from.rfind('<'), from.rfind('>')) {
        (Some(a), Some(b)) if a < b => &from[a + 1..b],
        _ => from,
    };
    let local = address
        .trim()
        .rsplit_once('@')
        .map(|(l, _)| l)
        .unwrap_or("")
        .to_ascii_lowercase();
    ["mailer-daemon", "mailerdaemon", "mail-daemon", "postmaster"].contains(&local.as_str())
}

/// The `Message-ID` of a returned message quoted in a report's text: the last `Message-ID:`
/// line (the report's own headers are not in its text; the original's come after the fields).
fn returned_id_in_text(text: &str) -> Option<String> {
    text.lines()
        .filter_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.trim()
                .eq_ignore_ascii_case("message-id")
                .then(|| value.trim().to_string())
        })
        .rfind(|v| v.starts_with('<') && v.ends_with('>'))
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

    /// A Gmail DSN given as headers and a body (not raw MIME) is a report: the
    /// webhook's JSON and `nudge simulate` read it as one, never as a reply.
    #[test]
    fn a_dsn_given_as_headers_and_body_is_a_report() {
        let headers = |ct: &str| {
            vec![
                ("Content-Type".to_string(), ct.to_string()),
                (
                    "From".to_string(),
                    "Mail Delivery Subsystem <mailer-daemon@googlemail.com>".to_string(),
                ),
                ("Return-Path".to_string(), "<>".to_string()),
                ("In-Reply-To".to_string(), "<en_1.1@nudge>".to_string()),
            ]
        };
        let fields = "Reporting-MTA: dns; googlemail.com\n\nFinal-Recipient: rfc822; ann@example.com\n\
                      Action: failed\nStatus: 5.1.1\nDiagnostic-Code: smtp; 550-5.1.1 The email account \
                      that you tried to reach does not exist.\n";
        // The fields as the body's text.
        let plain = Mail::from_parts(
            headers("multipart/report; report-type=delivery-status; boundary=\"000b\""),
            None,
            None,
            Some("Delivery Status Notification (Failure)".into()),
            Some(format!("** Address not found **\n\n{fields}")),
        );
        // The report's MIME body, boundaries and all.
        let mime_body = format!(
            "--000b\r\nContent-Type: text/plain; charset=UTF-8\r\n\r\n** Address not found **\r\n\
             --000b\r\nContent-Type: message/delivery-status\r\n\r\n{}\r\n\
             --000b\r\nContent-Type: text/rfc822-headers\r\n\r\nMessage-ID: <en_1.1@nudge>\r\n\
             Subject: hi\r\n\r\n--000b--\r\n",
            fields.replace('\n', "\r\n")
        );
        let mime = Mail::from_parts(
            headers("multipart/report; report-type=delivery-status; boundary=\"000b\""),
            None,
            None,
            None,
            Some(mime_body),
        );
        // No Content-Type at all: the mail system's address says it.
        let bare = Mail::from_parts(
            headers("text/plain")
                .into_iter()
                .filter(|(k, _)| k != "Content-Type")
                .collect(),
            None,
            None,
            None,
            Some(fields.to_string()),
        );
        for (what, mail) in [("plain", &plain), ("mime", &mime), ("bare", &bare)] {
            let r = &mail.dsn.as_ref().expect(what).recipients[0];
            assert_eq!(r.action.as_deref(), Some("failed"), "{what}");
            assert_eq!(r.status.as_deref(), Some("5.1.1"), "{what}");
            assert_eq!(
                r.final_recipient.as_deref(),
                Some("ann@example.com"),
                "{what}"
            );
        }
        assert_eq!(mime.returned_message_id.as_deref(), Some("<en_1.1@nudge>"));
        // A report whose fields cannot be read is still a report.
        let unreadable = Mail::from_parts(
            headers("multipart/report; report-type=delivery-status"),
            None,
            None,
            None,
            Some("Your message could not be delivered.".into()),
        );
        assert!(unreadable.dsn.is_some());
        // A person's mail is not touched.
        let person = Mail::from_parts(
            vec![("From".into(), "Ann <ann@example.com>".into())],
            None,
            None,
            None,
            Some("Action: failed\nStatus: 5.1.1".into()),
        );
        assert!(person.dsn.is_none());
    }

    #[test]
    fn report_types_and_mail_systems() {
        assert!(is_delivery_report(
            "Multipart/Report; Report-Type=\"delivery-status\""
        ));
        assert!(is_delivery_report(
            "multipart/report; boundary=x; report-type=delivery-status"
        ));
        assert!(!is_delivery_report(
            "multipart/report; report-type=disposition-notification"
        ));
        assert!(!is_delivery_report("multipart/mixed"));
        assert!(is_mail_system("MAILER-DAEMON@example.com"));
        assert!(is_mail_system(
            "Mail Delivery System <postmaster@mx.example.com>"
        ));
        assert!(!is_mail_system("daemon.fan@example.com"));
        assert!(!is_mail_system("Postmaster General <ann@example.com>"));
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
