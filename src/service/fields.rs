//! Parsing of the fields the API takes, at the edge, so nothing invalid is stored: ids, email
//! addresses, phone numbers (E.164), zones and channels, and the length and control-character
//! limits every text field of the API has (docs/service.md, "Errors", [`check_text`]).

use super::Violation;
use crate::code::Code;
use crate::quote::quote;
use crate::timing::Zone;

/// What a text field holds, and so its limit (docs/service.md, "Errors"). Every text the API takes is checked
/// against one of these before anything else looks at it: a NUL reaching PostgreSQL is an
/// `INTERNAL` error, and a megabyte of name is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// A caller's or nudge's id: 128 characters.
    Id,
    /// An email address: 320 characters.
    Email,
    /// A name (a flow's, a step's, a calendar's, an outcome, a client key, a phone or a zone
    /// as written): 200 characters.
    Name,
    /// A custom event's key: 200 characters.
    EventKey,
    /// A page token: 512 characters.
    PageToken,
    /// A provider's id of a signal or a sent message: 512 characters.
    ProviderId,
    /// Free text a person wrote (an exit reason, a delivery failure): 1,000 characters, where
    /// line breaks and tabs are allowed.
    Text,
    /// A message someone wrote back (a reply's words): 64 KiB of characters, the size of an
    /// email body worth reading; line breaks and tabs allowed.
    Words,
}

impl Limit {
    /// The most characters a field of this kind takes.
    pub const fn max_chars(self) -> usize {
        match self {
            Limit::Id => MAX_ID_LEN,
            Limit::Email => 320,
            Limit::Name | Limit::EventKey => 200,
            Limit::PageToken | Limit::ProviderId => 512,
            Limit::Text => 1_000,
            Limit::Words => 65_536,
        }
    }
}

/// The longest id accepted (ids are the caller's, often a CRM's, so allow room).
pub const MAX_ID_LEN: usize = 128;

/// Checks `text` against `limit`: at most its characters, and no control character (NUL
/// included; free text may hold line breaks and tabs). Says which character and how long, and
/// quotes nothing, so the message stays short whatever was sent.
pub fn check_text(field: &str, text: &str, limit: Limit) -> Result<(), Violation> {
    let max = limit.max_chars();
    let len = text.chars().count();
    if len > max {
        return Err(Violation::new(
            field,
            Code::BadSchema,
            format!("{len} characters is too long; at most {max} are allowed"),
        ));
    }
    let allowed =
        |ch: char| matches!(limit, Limit::Text | Limit::Words) && matches!(ch, '\n' | '\r' | '\t');
    if let Some((pos, ch)) = text
        .chars()
        .enumerate()
        .find(|&(_, ch)| ch.is_control() && !allowed(ch))
    {
        return Err(Violation::new(
            field,
            Code::BadSchema,
            format!(
                "has a control character (U+{:04X}) at character {}; send plain text",
                ch as u32,
                pos + 1
            ),
        ));
    }
    Ok(())
}

/// [`check_text`] of an optional field: empty passes.
pub fn check_optional(field: &str, text: &str, limit: Limit) -> Result<(), Violation> {
    if text.is_empty() {
        Ok(())
    } else {
        check_text(field, text, limit)
    }
}

/// Checks a caller-chosen id: 1 to 128 characters, no whitespace or control characters.
pub fn parse_id(field: &str, text: &str) -> Result<String, Violation> {
    if text.is_empty() {
        return Err(Violation::new(field, Code::BadSchema, "the id is empty"));
    }
    check_text(field, text, Limit::Id)?;
    if let Some(pos) = text.find(char::is_whitespace) {
        return Err(Violation::new(
            field,
            Code::BadSchema,
            format!(
                "{} has whitespace at byte {pos}; ids are single words such as `crm-4711`",
                quote(text)
            ),
        ));
    }
    Ok(text.to_string())
}

/// The longest provider id accepted (a message id with its angle brackets fits easily).
pub const MAX_PROVIDER_ID_LEN: usize = Limit::ProviderId.max_chars();

/// Checks a signal's provider id (what deduplicates it): blank is none; otherwise at most
/// [`MAX_PROVIDER_ID_LEN`] characters without control characters.
pub fn parse_provider_id(field: &str, text: Option<String>) -> Result<Option<String>, Violation> {
    let Some(text) = text.filter(|t| !t.trim().is_empty()) else {
        return Ok(None);
    };
    check_text(field, &text, Limit::ProviderId)?;
    Ok(Some(text))
}

/// Checks the shape of an email address (one `@`, something on both sides, no spaces).
/// Deliverability is the delivery side's business.
pub fn parse_email(field: &str, text: &str) -> Result<String, Violation> {
    let text = text.trim();
    check_text(field, text, Limit::Email)?;
    let ok = match text.split_once('@') {
        Some((local, domain)) => {
            !local.is_empty()
                && !domain.is_empty()
                && !domain.contains('@')
                && domain.contains('.')
                && !text.chars().any(|c| c.is_whitespace() || c.is_control())
        }
        None => false,
    };
    if ok {
        Ok(text.to_string())
    } else {
        Err(Violation::new(
            field,
            Code::BadSchema,
            format!(
                "{} is not an email address; write it as `name@example.com`",
                quote(text)
            ),
        ))
    }
}

/// Parses a phone number and normalizes it to E.164 (docs/timing.md, "Send windows"). A national number without `+`
/// and a number that no numbering plan allows (`+1 555 555 5555`) are refused with `BAD_PHONE`.
pub fn parse_phone(field: &str, text: &str) -> Result<String, Violation> {
    check_text(field, text, Limit::Name)?;
    let refuse = |hint: &str| {
        Err(Violation::new(
            field,
            Code::BadPhone,
            format!("{} is not a valid E.164 phone number: {hint}", quote(text)),
        ))
    };
    let trimmed = text.trim();
    if !trimmed.starts_with('+') {
        return refuse(
            "write it with `+` and the country code, e.g. `+12125551234` or `+420 601 123 456`",
        );
    }
    // The timing core's reading, which matches libphonenumber's (the phonenumber crate's own
    // check accepts a number with a digit too many and refuses Russia's `+7 800 …`), so a
    // contact's stored number is the one its send windows were worked out for.
    match crate::timing::phone_zones(trimmed) {
        Ok(number) => Ok(number.e164),
        Err(e) => refuse(&e.hint),
    }
}

/// Whether `text` is spelled as [`parse_phone`] writes a number: `+`, a country code that does
/// not start with 0, and at most 20 digits in all (libphonenumber's longest: a 3-digit code
/// and 17 digits; Germany has valid numbers past E.164's 15), nothing else. Such a text may
/// still be a number no plan allows, or one whose normal form differs (a national prefix kept
/// after the country code); only [`parse_phone`] tells.
pub fn is_e164(text: &str) -> bool {
    let Some(digits) = text.strip_prefix('+') else {
        return false;
    };
    (2..=20).contains(&digits.len())
        && !digits.starts_with('0')
        && digits.bytes().all(|b| b.is_ascii_digit())
}

/// Checks a `tz` (docs/timing.md, "Zones") and returns its canonical spelling; `BAD_TZ` with the timing
/// core's reason and hint otherwise.
pub fn parse_tz(field: &str, text: &str) -> Result<String, Violation> {
    check_text(field, text, Limit::Name)?;
    Zone::parse(text)
        .map(|zone| zone.name())
        .map_err(|e| Violation::new(field, e.code, e.message()))
}

/// Checks a contact's country: an ISO 3166-1 alpha-2 code, upper case (`DE`), for the `contact`
/// holiday calendar (docs/timing.md, "Holiday calendars and quiet hours").
pub fn parse_country(field: &str, text: &str) -> Result<String, Violation> {
    if crate::timing::holiday_calendars::is_country(text) {
        return Ok(text.to_string());
    }
    let upper = text.to_ascii_uppercase();
    let hint = if upper != text && crate::timing::holiday_calendars::is_country(&upper) {
        format!("write it in upper case: `{upper}`")
    } else {
        "give an ISO 3166-1 alpha-2 country code such as `DE`, `US` or `GB` (a subdivision such as `DE-BY` is a holiday calendar, not a country)".to_string()
    };
    Err(Violation::new(
        field,
        Code::BadSchema,
        format!("`{text}` is not a country: {hint}"),
    ))
}

/// The one channel type is the pure core's; re-exported so the service layer names it here too.
pub use crate::timing::Channel;

/// Checks a channel name (`email`, `sms`, `call`, `linkedin`, lower case) for `field`.
pub fn parse_channel(field: &str, text: &str) -> Result<Channel, Violation> {
    text.parse().map_err(|e: crate::timing::TimingError| {
        Violation::new(
            field,
            e.code,
            format!(
                "{} is not a channel; use one of `email`, `sms`, `call`, `linkedin`",
                quote(text)
            ),
        )
    })
}

/// An enrollment input checked against the flow's `input` schema, each mismatch a violation at
/// `<field>.<name>`: `Enroll` (`input.demo_at`) and `Simulate` (`scenario.input.demo_at`)
/// refuse the same inputs the same way.
pub fn check_input(
    field: &str,
    schema: &crate::flow::model::InputSchema,
    input: &serde_json::Value,
) -> Result<(), Vec<Violation>> {
    crate::flow::model::check_input(schema, input).map_err(|mismatches| {
        mismatches
            .into_iter()
            .map(|m| {
                let at = if m.field.is_empty() {
                    field.to_string()
                } else {
                    format!("{field}.{}", m.field)
                };
                Violation::new(at, Code::BadSchema, m.message)
            })
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provider_ids_are_text_or_none() {
        let parse = |t: &str| parse_provider_id("provider_id", Some(t.to_string()));
        assert_eq!(
            parse("twilio:SM123").unwrap().as_deref(),
            Some("twilio:SM123")
        );
        assert_eq!(parse("  ").unwrap(), None);
        assert_eq!(parse_provider_id("provider_id", None).unwrap(), None);
        let v = parse("a\0b").unwrap_err();
        assert_eq!((v.field.as_str(), v.code), ("provider_id", Code::BadSchema));
        assert!(
            v.message.contains("U+0000) at character 2"),
            "{}",
            v.message
        );
        assert!(parse(&"x".repeat(MAX_PROVIDER_ID_LEN + 1)).is_err());
        assert!(parse(&"x".repeat(MAX_PROVIDER_ID_LEN)).is_ok());
    }

    #[test]
    fn phones_normalize_to_e164_or_are_refused() {
        assert_eq!(parse_phone("p", "+1 212 555 1234").unwrap(), "+12125551234");
        assert_eq!(
            parse_phone("p", "+420 601 123 456").unwrap(),
            "+420601123456"
        );
        for bad in ["2125551234", "+1 555 555 5555", "+", "hello", ""] {
            let v = parse_phone("p", bad).unwrap_err();
            assert_eq!(v.code, Code::BadPhone, "{bad}");
            assert!(v.message.contains(&format!("`{bad}`")), "{}", v.message);
        }
    }

    #[test]
    fn zones_use_the_timing_core() {
        assert_eq!(parse_tz("tz", "Europe/Prague").unwrap(), "Europe/Prague");
        assert_eq!(parse_tz("tz", "+02:00").unwrap(), "+02:00");
        let v = parse_tz("tz", "CET").unwrap_err();
        assert_eq!(v.code, Code::BadTz);
        assert!(v.message.contains("CET"));
    }

    #[test]
    fn emails_ids_and_channels() {
        assert_eq!(
            parse_email("e", " ann@example.com ").unwrap(),
            "ann@example.com"
        );
        assert!(parse_email("e", "ann").is_err());
        assert!(parse_email("e", "ann@@x.com").is_err());
        assert!(parse_id("id", "crm-4711").is_ok());
        assert!(parse_id("id", "a b").is_err());
        assert!(parse_id("id", &"x".repeat(129)).is_err());
        assert_eq!(parse_channel("c", "sms").unwrap(), Channel::Sms);
        let v = parse_channel("c", "fax").unwrap_err();
        assert_eq!((v.field.as_str(), v.code), ("c", Code::BadSchema));
        assert!(
            v.message.contains("`fax` is not a channel"),
            "{}",
            v.message
        );
    }
}
