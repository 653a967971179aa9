//! What an inbound email is (docs/signals.md, "Inbox signals"): a person's reply, an auto-reply (an out-of-office
//! among them, with its return date), a bounce, or an unsubscribe. Pure and table-driven:
//! [`classify`] reads a [`Mail`] and the rules below, in this order:
//!
//! 1. **Bounce**: a delivery status notification (RFC 3464 `multipart/report;
//!    report-type=delivery-status`). The first recipient block with `Action: failed` decides:
//!    a `5.x.x` status is hard, `4.x.x` soft; a block with `Action: delayed` (and no failure) is
//!    a delay, journal-only. A failure without a usable status falls back to the SMTP code of its
//!    `Diagnostic-Code` (`550 …` hard, `4xx` soft), and with neither it is soft: never a hard
//!    bounce (which blocks the address) on a guess.
//! 2. **Unsubscribe**: the subject or the whole text is `unsubscribe` (a `List-Unsubscribe`
//!    mailto click).
//! 3. **Auto-reply**: `Auto-Submitted` other than `no` (RFC 3834), `X-Autoreply`,
//!    `X-Autorespond`, `Precedence: auto_reply|bulk|junk|list`, or a subject that starts with one
//!    of [`AUTO_SUBJECTS`]. It is an **out-of-office** when the subject starts with one of
//!    [`OOO_SUBJECTS`] or the text holds one of [`OOO_PHRASES`]; then the return date is read
//!    from the subject and the text ([`super::return_date`]).
//! 4. Otherwise a **reply** from a person — also when it merely quotes "out of office".

use super::mail::Mail;
use super::return_date::{return_date, ReturnDate};
use chrono::NaiveDate;

/// A bounce's severity (docs/signals.md, "Inbox signals").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BounceType {
    /// `Action: failed`, status 5.x.x: the address does not take mail.
    Hard,
    /// `Action: failed`, status 4.x.x: a transient failure (three in 7 days count as hard).
    Soft,
    /// `Action: delayed`: still trying; journal-only.
    Delayed,
}

impl BounceType {
    /// The wire spelling (`hard`, `soft`, `delayed`).
    pub fn as_str(self) -> &'static str {
        match self {
            BounceType::Hard => "hard",
            BounceType::Soft => "soft",
            BounceType::Delayed => "delayed",
        }
    }

    /// The type spelled `text`, if it is one.
    pub fn parse(text: &str) -> Option<BounceType> {
        [BounceType::Hard, BounceType::Soft, BounceType::Delayed]
            .into_iter()
            .find(|t| t.as_str() == text)
    }
}

/// Soft bounces within this many days add up to a hard one.
pub const SOFT_BOUNCE_DAYS: i64 = 7;
/// This many soft bounces within [`SOFT_BOUNCE_DAYS`] count as a hard bounce.
pub const SOFT_BOUNCES_TO_HARD: usize = 3;

/// What a bounce counts as, given when the contact's soft bounces arrived (`soft_at`, this one
/// included): the third soft bounce within 7 days is hard (docs/signals.md, "Inbox signals").
pub fn effective_bounce(
    bounce: BounceType,
    soft_at: &[chrono::DateTime<chrono::Utc>],
    now: chrono::DateTime<chrono::Utc>,
) -> BounceType {
    if bounce != BounceType::Soft {
        return bounce;
    }
    let since = now - chrono::Duration::days(SOFT_BOUNCE_DAYS);
    let recent = soft_at.iter().filter(|t| **t > since && **t <= now).count();
    if recent >= SOFT_BOUNCES_TO_HARD {
        BounceType::Hard
    } else {
        BounceType::Soft
    }
}

/// The class of an inbound email.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MailClass {
    /// A person's reply: raises `reply`, `reply:email`.
    Reply,
    /// An automatic answer that is not an out-of-office (a ticket acknowledgement): raises
    /// `auto_reply`.
    AutoReply,
    /// An out-of-office notice: raises `out_of_office` and `auto_reply`.
    OutOfOffice(ReturnDate),
    /// A delivery status notification.
    Bounce {
        /// Hard, soft or delayed.
        bounce: BounceType,
        /// The status as written (`5.1.1`), when there was one.
        status: Option<String>,
        /// What the classifier had to assume (a missing status), for the journey.
        note: Option<String>,
    },
    /// An unsubscribe by mail: an email opt-out.
    Unsubscribe,
}

impl MailClass {
    /// The class's name in the corpus and the docs (`reply`, `auto_reply`, `out_of_office`,
    /// `bounce_hard`, `bounce_soft`, `bounce_delayed`, `unsubscribe`).
    pub fn name(&self) -> String {
        match self {
            MailClass::Reply => "reply".into(),
            MailClass::AutoReply => "auto_reply".into(),
            MailClass::OutOfOffice(_) => "out_of_office".into(),
            MailClass::Bounce { bounce, .. } => format!("bounce_{}", bounce.as_str()),
            MailClass::Unsubscribe => "unsubscribe".into(),
        }
    }
}

/// Subject prefixes (compared lower-case, after any `Re:`-less start) that mark an automatic
/// answer, by language. Outlook/Exchange writes "Automatic reply:" (and the localized forms
/// below), Gmail's vacation responder keeps the user's subject (its headers decide), older
/// Exchange and Lotus Notes write "Out of Office AutoReply:".
pub const AUTO_SUBJECTS: &[&str] = &[
    // English
    "automatic reply",
    "auto reply",
    "auto-reply",
    "autoreply",
    "auto response",
    "auto-response",
    "autoresponse",
    "automated response",
    "automatic response",
    // German
    "automatische antwort",
    "automatische rückantwort",
    "abwesenheitsnotiz",
    "abwesenheit",
    "autom. antwort",
    // French
    "réponse automatique",
    "reponse automatique",
    "réponse automatique d'absence",
    // Spanish
    "respuesta automática",
    "respuesta automatica",
    // Italian
    "risposta automatica",
    // Dutch
    "automatisch antwoord",
    "automatisch beantwoorden",
    "afwezigheidsbericht",
    // Portuguese
    "resposta automática",
    "resposta automatica",
    // Polish
    "odpowiedź automatyczna",
    "odpowiedz automatyczna",
    "automatyczna odpowiedź",
    // Czech
    "automatická odpověď",
    "automaticka odpoved",
];

/// Subject prefixes that mark an out-of-office (each is also automatic).
pub const OOO_SUBJECTS: &[&str] = &[
    "out of office",
    "out of the office",
    "ooo",
    "abwesenheitsnotiz",
    "abwesenheit",
    "absence",
    "absent",
    "fuera de la oficina",
    "ausente",
    "fuori sede",
    "fuori ufficio",
    "assente",
    "afwezig",
    "afwezigheidsbericht",
    "fora do escritório",
    "ausência",
    "nieobecność",
    "poza biurem",
    "nepřítomnost",
    "mimo kancelář",
    "vacation",
    "on vacation",
];

/// Phrases in an automatic answer's text that make it an out-of-office.
pub const OOO_PHRASES: &[&str] = &[
    // English
    "out of the office",
    "out of office",
    "on vacation",
    "on holiday",
    "on leave",
    "annual leave",
    "away from the office",
    "away from my desk",
    "limited access to email",
    "parental leave",
    "back on",
    "returning on",
    // German
    "nicht im büro",
    "abwesend",
    "im urlaub",
    "außer haus",
    "ausser haus",
    "nicht erreichbar",
    "wieder im büro",
    "zurück am",
    // French
    "absent du bureau",
    "absente du bureau",
    "en congé",
    "en congés",
    "en vacances",
    "de retour le",
    "absent jusqu",
    "absente jusqu",
    // Spanish
    "fuera de la oficina",
    "de vacaciones",
    "ausente",
    "de vuelta el",
    // Italian
    "fuori ufficio",
    "fuori sede",
    "in ferie",
    "assente",
    "rientro il",
    // Dutch
    "afwezig",
    "met vakantie",
    "niet op kantoor",
    "terug op",
    // Portuguese
    "fora do escritório",
    "de férias",
    "ausente do escritório",
    "de volta em",
    // Polish
    "poza biurem",
    "na urlopie",
    "nieobecn",
    "wracam",
    // Czech
    "mimo kancelář",
    "na dovolené",
    "nepřítomn",
    "mimo kancelar",
    "na dovolene",
];

/// The classification of `mail`, received at `received` (the fallback message date).
pub fn classify(mail: &Mail, received: NaiveDate) -> MailClass {
    if let Some(bounce) = bounce(mail) {
        return bounce;
    }
    let says_unsubscribe = |t: &Option<String>| {
        t.as_deref()
            .is_some_and(|t| t.trim().eq_ignore_ascii_case("unsubscribe"))
    };
    if says_unsubscribe(&mail.subject) || says_unsubscribe(&mail.text) {
        return MailClass::Unsubscribe;
    }
    let subject = mail.subject.as_deref().unwrap_or("").trim().to_lowercase();
    let auto_subject = starts_with_any(&subject, AUTO_SUBJECTS);
    let ooo_subject = starts_with_any(&subject, OOO_SUBJECTS);
    if !(auto_by_headers(mail) || auto_subject || ooo_subject) {
        return MailClass::Reply;
    }
    let text = mail.text.as_deref().unwrap_or("");
    let lower = text.to_lowercase();
    let ooo = ooo_subject || OOO_PHRASES.iter().any(|p| lower.contains(p));
    if !ooo {
        return MailClass::AutoReply;
    }
    let sent = mail.date.map(|d| d.date_naive()).unwrap_or(received);
    // The notice is at the top; the quoted original below it may hold other dates.
    let notice = notice_part(text);
    let subject = mail.subject.as_deref().unwrap_or("");
    MailClass::OutOfOffice(return_date(&format!("{subject}\n{notice}"), sent))
}

/// The responder's own text: what comes before the quoted original (`>` lines, "-----Original
/// Message-----", "On … wrote:").
fn notice_part(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let t = line.trim_start();
        let lower = t.to_lowercase();
        if t.starts_with('>')
            || lower.starts_with("-----original message")
            || lower.starts_with("-----ursprüngliche nachricht")
            || lower.starts_with("-----message d'origine")
            || (lower.starts_with("on ") && lower.trim_end().ends_with("wrote:"))
            || lower.starts_with("from: ")
        {
            break;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

fn starts_with_any(subject: &str, prefixes: &[&str]) -> bool {
    prefixes.iter().any(|p| {
        subject.strip_prefix(p).is_some_and(|rest| {
            // A whole word: "absence:" but not "absenceofmalice".
            rest.is_empty() || !rest.starts_with(|c: char| c.is_alphanumeric())
        })
    })
}

/// RFC 3834 and the de-facto headers of auto-responders.
fn auto_by_headers(mail: &Mail) -> bool {
    if let Some(v) = mail.header("Auto-Submitted") {
        let v = v.trim().to_ascii_lowercase();
        // `no` (with or without comments/parameters) means a person sent it.
        let value = v.split([';', ' ', '(']).next().unwrap_or("");
        if value != "no" && !value.is_empty() {
            return true;
        }
    }
    if mail.header("X-Autoreply").is_some() || mail.header("X-Autorespond").is_some() {
        return true;
    }
    if let Some(p) = mail.header("Precedence") {
        let p = p.trim().to_ascii_lowercase();
        if ["auto_reply", "bulk", "junk", "list"].contains(&p.as_str()) {
            return true;
        }
    }
    false
}

/// The bounce a DSN reports, if the mail is one.
fn bounce(mail: &Mail) -> Option<MailClass> {
    let dsn = mail.dsn.as_ref()?;
    let failed = dsn
        .recipients
        .iter()
        .find(|r| r.action.as_deref().is_some_and(|a| a.starts_with("failed")));
    if let Some(r) = failed {
        let class = r.status.as_deref().and_then(status_class);
        let (bounce, note) = match class {
            Some(b) => (b, None),
            None => match r.diagnostic.as_deref().and_then(smtp_class) {
                Some(b) => (
                    b,
                    Some(
                        "the DSN has no usable Status; its Diagnostic-Code's SMTP reply decided"
                            .to_string(),
                    ),
                ),
                None => (
                    BounceType::Soft,
                    Some(
                        "the DSN has no usable Status or SMTP reply; counted as a soft bounce"
                            .to_string(),
                    ),
                ),
            },
        };
        return Some(MailClass::Bounce {
            bounce,
            status: r.status.clone(),
            note,
        });
    }
    if let Some(r) = dsn.recipients.iter().find(|r| {
        r.action
            .as_deref()
            .is_some_and(|a| a.starts_with("delayed"))
    }) {
        return Some(MailClass::Bounce {
            bounce: BounceType::Delayed,
            status: r.status.clone(),
            note: None,
        });
    }
    // A report with no failed or delayed recipient (a delivery confirmation, an unreadable
    // report) is journal-only too: never a reply.
    Some(MailClass::Bounce {
        bounce: BounceType::Delayed,
        status: None,
        note: Some("the delivery report names no failed or delayed recipient".into()),
    })
}

/// `5.1.1` → hard, `4.4.7` → soft; anything else is unusable.
fn status_class(status: &str) -> Option<BounceType> {
    let code = status.split_whitespace().next()?;
    let mut parts = code.split('.');
    let class = parts.next()?;
    let (subject, detail) = (parts.next()?, parts.next()?);
    if parts.next().is_some()
        || !subject.chars().all(|c| c.is_ascii_digit())
        || !detail.chars().all(|c| c.is_ascii_digit())
        || subject.is_empty()
        || detail.is_empty()
    {
        return None;
    }
    match class {
        "5" => Some(BounceType::Hard),
        "4" => Some(BounceType::Soft),
        _ => None,
    }
}

/// The class of the SMTP reply code a diagnostic starts with (`550 …`).
fn smtp_class(diagnostic: &str) -> Option<BounceType> {
    let code = diagnostic.trim().get(..3)?;
    if !code.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    match code.as_bytes()[0] {
        b'5' => Some(BounceType::Hard),
        b'4' => Some(BounceType::Soft),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inbound::mail::{Dsn, DsnRecipient};

    fn mail(headers: &[(&str, &str)], subject: &str, text: &str) -> Mail {
        Mail {
            headers: headers
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            subject: Some(subject.into()),
            text: Some(text.into()),
            ..Mail::default()
        }
    }

    fn day() -> NaiveDate {
        NaiveDate::from_ymd_opt(2026, 12, 22).unwrap()
    }

    #[test]
    fn header_rules() {
        /// (headers, subject, text, expected class)
        type Case<'a> = (&'a [(&'a str, &'a str)], &'a str, &'a str, &'a str);
        let cases: &[Case] = &[
            (
                &[("Auto-Submitted", "auto-replied")],
                "Re: hi",
                "Thanks, ticket 42 opened",
                "auto_reply",
            ),
            (
                &[("Auto-Submitted", "no")],
                "Re: hi",
                "Sounds good",
                "reply",
            ),
            (
                &[("Auto-Submitted", "No (human)")],
                "Re: hi",
                "Sounds good",
                "reply",
            ),
            (
                &[("X-Autoreply", "yes")],
                "Re: hi",
                "We got it",
                "auto_reply",
            ),
            (
                &[("X-Autorespond", "1")],
                "Re: hi",
                "We got it",
                "auto_reply",
            ),
            (
                &[("Precedence", "bulk")],
                "Re: hi",
                "newsletter",
                "auto_reply",
            ),
            (&[("Precedence", "first-class")], "Re: hi", "hello", "reply"),
            (
                &[],
                "Automatic reply: hi",
                "I am out of the office until Monday.",
                "out_of_office",
            ),
            (
                &[],
                "Re: hi",
                "Ha, I was out of office last week, sorry.",
                "reply",
            ),
            (&[], "Re: Out of office", "see you", "reply"),
            (&[], "unsubscribe", "", "unsubscribe"),
            (
                &[],
                "Abwesenheitsnotiz: Angebot",
                "Ich bin bis 04.01. nicht im Büro.",
                "out_of_office",
            ),
        ];
        for (headers, subject, text, want) in cases {
            assert_eq!(
                classify(&mail(headers, subject, text), day()).name(),
                *want,
                "{subject} / {text}"
            );
        }
    }

    #[test]
    fn three_soft_bounces_in_seven_days_are_hard() {
        use chrono::TimeZone;
        let t = |d: u32| chrono::Utc.with_ymd_and_hms(2026, 12, d, 12, 0, 0).unwrap();
        let soft = BounceType::Soft;
        assert_eq!(
            effective_bounce(soft, &[t(1), t(2)], t(2)),
            BounceType::Soft
        );
        assert_eq!(
            effective_bounce(soft, &[t(1), t(2), t(7)], t(7)),
            BounceType::Hard
        );
        // The first one is 7 days old at the third: outside the window.
        assert_eq!(
            effective_bounce(soft, &[t(1), t(2), t(8)], t(8)),
            BounceType::Soft
        );
        assert_eq!(
            effective_bounce(BounceType::Delayed, &[t(1), t(2), t(3)], t(3)),
            BounceType::Delayed
        );
        assert_eq!(
            effective_bounce(BounceType::Hard, &[], t(3)),
            BounceType::Hard
        );
    }

    #[test]
    fn bounce_rules() {
        let dsn = |action: &str, status: Option<&str>, diag: Option<&str>| Mail {
            dsn: Some(Dsn {
                recipients: vec![DsnRecipient {
                    final_recipient: Some("ann@example.com".into()),
                    action: Some(action.into()),
                    status: status.map(str::to_string),
                    diagnostic: diag.map(str::to_string),
                }],
            }),
            ..Mail::default()
        };
        let cases = [
            (dsn("failed", Some("5.1.1"), None), "bounce_hard"),
            (dsn("failed", Some("4.2.2"), None), "bounce_soft"),
            (dsn("delayed", Some("4.4.7"), None), "bounce_delayed"),
            (dsn("failed", None, Some("550 no such user")), "bounce_hard"),
            (dsn("failed", None, None), "bounce_soft"),
            (dsn("failed", Some("garbage"), None), "bounce_soft"),
            (dsn("failed", Some("5.x"), None), "bounce_soft"),
            (dsn("delivered", Some("2.0.0"), None), "bounce_delayed"),
        ];
        for (m, want) in cases {
            assert_eq!(classify(&m, day()).name(), want, "{m:?}");
        }
    }
}
