//! The `nudge timing` question (docs/timing.md, "`nudge timing`"): one JSON request in, one JSON answer out.
//!
//! A request has `now` (RFC 3339) and exactly one question — `duration`, `until`, `window` or
//! `phone` — plus the extra fields that question takes. This module only reads the request,
//! calls the timing core and shapes the answer; every rule lives in the core. The CLI reads JSON
//! Lines and calls [`answer_line`] per line; `TimingService.Resolve` and the golden tests call
//! [`answer`].
//!
//! Answers: `{"at"}` (duration, until), `{"at", "past": true}` (an `until` before `now`),
//! `{"at", "zones"}` (window), `{"e164", "zones"}` (phone), or
//! `{"error": {"code", "message"}}`. An instant is RFC 3339 in UTC with a `Z`, with milliseconds
//! only when they are not zero.

use crate::code::Code;
use crate::timing::channel::Channel;
use crate::timing::error::TimingError;
use crate::timing::holiday_calendars::is_country;
use crate::timing::holidays::Holidays;
use crate::timing::phone::phone_zones;
use crate::timing::quiet::QuietHours;
use crate::timing::window::{explain_opening, resolve_zones_with, Recipient, SendWindow};
use crate::timing::{Duration, Until, Zone};
use chrono::{DateTime, SubsecRound, Timelike, Utc};
use serde_json::{json, Map, Value};

/// The four questions and the extra fields each one takes (docs/timing.md, "`nudge timing`").
const QUESTIONS: [(&str, &[&str]); 4] = [
    ("duration", &["tz", "holidays", "contact"]),
    ("until", &["tz", "holidays", "contact"]),
    (
        "window",
        &["channel", "contact", "sender_tz", "holidays", "quiet_hours"],
    ),
    ("phone", &[]),
];

/// Answers one request. `Err` carries the problem code of the refusal; [`answer_line`] turns it
/// into the `{"error": …}` answer.
pub fn answer(request: &Value) -> Result<Value, TimingError> {
    let obj = request.as_object().ok_or_else(|| {
        schema(
            &request.to_string(),
            "a request is a JSON object such as {\"now\": \"2026-03-01T10:00:00Z\", \"duration\": \"2bd\"}",
        )
    })?;
    let now = parse_now(obj)?;
    let (question, extras) = pick_question(obj)?;
    for key in obj.keys() {
        if key != "now" && key != question && !extras.contains(&key.as_str()) {
            return Err(schema(
                key,
                &format!(
                    "`{key}` is not a field of a `{question}` question; it takes `now`, `{question}`{}",
                    extras.iter().map(|e| format!(", `{e}`")).collect::<String>()
                ),
            ));
        }
    }
    let (recipient, country) = contact(obj)?;
    let listed = holidays(obj)?;
    // docs/timing.md, "Holiday calendars and quiet hours": `contact` is the contact's `country`, else its phone number's region.
    let country = match (country, &recipient.phone) {
        (Some(c), _) => Some(c),
        (None, Some(phone)) if listed.wants_contact() => {
            phone_zones(phone)?.region.map(str::to_string)
        }
        _ => None,
    };
    let holidays = listed.for_contact(country.as_deref()).0;
    let holidays: &Holidays = &holidays;
    match question {
        "duration" => {
            let zone = zone_field(obj, "tz")?.unwrap_or(Zone::Utc);
            let duration = Duration::from_json(&obj["duration"])?;
            Ok(json!({ "at": format_instant(duration.add_to(now, &zone, holidays)) }))
        }
        "until" => {
            let zone = zone_field(obj, "tz")?.unwrap_or(Zone::Utc);
            let text = obj["until"].as_str().ok_or_else(|| {
                TimingError::new(
                    Code::BadUntil,
                    obj["until"].to_string(),
                    None,
                    "`until` is a string: an RFC 3339 instant, a wall clock `2026-09-01 08:00`, `+2d 08:00`, or a calendar pattern such as `mon 09:00`",
                )
            })?;
            let at = Until::parse(text)?.resolve(now, &zone, holidays);
            let mut out = json!({ "at": format_instant(at) });
            if at < now {
                out["past"] = Value::Bool(true);
            }
            Ok(out)
        }
        "window" => answer_window(obj, now, holidays, &recipient),
        _ => {
            let text = obj["phone"].as_str().ok_or_else(|| {
                TimingError::new(
                    Code::BadPhone,
                    obj["phone"].to_string(),
                    None,
                    "`phone` is a string in E.164 form, such as \"+13035551234\"",
                )
            })?;
            let found = phone_zones(text)?;
            let zones: Vec<String> = found.zones.iter().map(Zone::name).collect();
            Ok(json!({ "e164": found.e164, "zones": zones }))
        }
    }
}

/// Answers one line of `nudge timing` input: the answer line and whether it succeeded.
pub fn answer_line(line: &str) -> (String, bool) {
    let result = serde_json::from_str::<Value>(line)
        .map_err(|e| {
            TimingError::new(
                Code::BadSchema,
                line,
                Some(byte_offset(line, e.line(), e.column())),
                format!("the line is not JSON ({e}); write one JSON object per line"),
            )
        })
        .and_then(|request| answer(&request));
    match result {
        Ok(value) => (value.to_string(), true),
        Err(err) => (error_answer(&err).to_string(), false),
    }
}

/// `{"error": {"code", "message"}}` for a refusal.
pub fn error_answer(err: &TimingError) -> Value {
    json!({ "error": { "code": err.code.as_str(), "message": err.message() } })
}

/// RFC 3339 in UTC with a `Z`, milliseconds only when not zero.
pub fn format_instant(t: DateTime<Utc>) -> String {
    if t.nanosecond() / 1_000_000 == 0 {
        t.format("%Y-%m-%dT%H:%M:%SZ").to_string()
    } else {
        t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
    }
}

fn answer_window(
    obj: &Map<String, Value>,
    now: DateTime<Utc>,
    holidays: &Holidays,
    recipient: &Recipient,
) -> Result<Value, TimingError> {
    let window = match &obj["window"] {
        Value::Null => None,
        v => Some(SendWindow::from_json(v)?),
    };
    let channel = match obj.get("channel") {
        None => Channel::Email,
        Some(v) => match v.as_str().map(str::parse) {
            Some(Ok(channel)) => channel,
            _ => {
                return Err(schema(
                    &v.to_string(),
                    "`channel` is one of \"email\", \"sms\", \"call\", \"linkedin\"",
                ))
            }
        },
    };
    let quiet = match obj.get("quiet_hours") {
        None | Some(Value::Null) => QuietHours::federal(),
        Some(Value::String(name)) => QuietHours::policy(name.parse()?),
        Some(v @ Value::Object(_)) => QuietHours::from_json(v).map_err(|problems| {
            let first = &problems[0];
            schema(
                &v.to_string(),
                &format!("`quiet_hours{}`: {}", first.path, first.message),
            )
        })?,
        Some(v) => return Err(schema(
            &v.to_string(),
            "`quiet_hours` is `federal`, `us_states`, or {\"policy\": ..., \"overrides\": [...]}",
        )),
    };
    let sender = zone_field(obj, "sender_tz")?.unwrap_or(Zone::Utc);
    let zones = resolve_zones_with(window.as_ref(), recipient, &sender, channel, &quiet)?;
    let opening = explain_opening(now, window.as_ref(), &zones, channel, holidays)?;
    // The zones whose windows applied: the send window's, then the quiet-hours recipient
    // zones; each once (a London window for a London number is one zone).
    let mut names: Vec<String> = Vec::new();
    let applied = window.is_some().then_some(zones.window).flatten();
    for zone in applied.iter().chain(&zones.sms) {
        let name = zone.name();
        if !names.contains(&name) {
            names.push(name);
        }
    }
    let mut out = json!({ "at": format_instant(opening.at), "zones": names });
    if let Some(rule) = opening.rule {
        out["rule"] = Value::String(rule);
    }
    Ok(out)
}

/// The request's `contact`: `tz`, `phone` and `country` (ISO 3166-1 alpha-2, for the
/// `contact` holiday calendar).
fn contact(obj: &Map<String, Value>) -> Result<(Recipient, Option<String>), TimingError> {
    let c = match obj.get("contact") {
        None | Some(Value::Null) => return Ok((Recipient::default(), None)),
        Some(Value::Object(c)) => c,
        Some(v) => {
            return Err(schema(
                &v.to_string(),
                "`contact` is an object such as {\"tz\": \"America/New_York\", \"phone\": \"+12125551234\", \"country\": \"US\"}",
            ))
        }
    };
    if let Some(k) = c
        .keys()
        .find(|k| !["tz", "phone", "country"].contains(&k.as_str()))
    {
        return Err(schema(k, "`contact` takes `tz`, `phone` and `country`"));
    }
    let phone = match c.get("phone") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(v) => {
            return Err(TimingError::new(
                Code::BadPhone,
                v.to_string(),
                None,
                "`contact.phone` is a string in E.164 form, such as \"+13035551234\"",
            ))
        }
    };
    let country = match c.get("country") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if is_country(s) => Some(s.clone()),
        Some(v) => {
            return Err(schema(
                &v.to_string(),
                "`contact.country` is an ISO 3166-1 alpha-2 code in upper case, such as \"DE\"",
            ))
        }
    };
    Ok((
        Recipient {
            tz: zone_field(c, "tz")?,
            phone,
        },
        country,
    ))
}

fn parse_now(obj: &Map<String, Value>) -> Result<DateTime<Utc>, TimingError> {
    let hint = "`now` is an RFC 3339 instant such as \"2026-03-01T10:00:00Z\"";
    let text = match obj.get("now") {
        Some(Value::String(s)) => s,
        Some(v) => return Err(schema(&v.to_string(), hint)),
        None => return Err(schema("", &format!("the request has no `now`: {hint}"))),
    };
    DateTime::parse_from_rfc3339(text)
        // Instants are stored in epoch milliseconds; finer digits are dropped.
        .map(|t| t.with_timezone(&Utc).trunc_subsecs(3))
        .map_err(|e| schema(text, &format!("{hint} ({e})")))
}

/// The question key of the request, and the extra fields it takes.
fn pick_question(
    obj: &Map<String, Value>,
) -> Result<(&'static str, &'static [&'static str]), TimingError> {
    let present: Vec<_> = QUESTIONS
        .iter()
        .filter(|(q, _)| obj.contains_key(*q))
        .collect();
    match present.as_slice() {
        [one] => Ok(**one),
        [] => Err(schema(
            "",
            "the request asks nothing: give exactly one of `duration`, `until`, `window`, `phone`",
        )),
        many => {
            let names: Vec<&str> = many.iter().map(|(q, _)| *q).collect();
            let code = if names == ["duration", "until"] {
                Code::ForAndUntil
            } else {
                Code::BadSchema
            };
            Err(TimingError::new(
                code,
                names.join(", "),
                None,
                "ask exactly one of `duration`, `until`, `window`, `phone` per request",
            ))
        }
    }
}

fn zone_field(obj: &Map<String, Value>, key: &str) -> Result<Option<Zone>, TimingError> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Zone::parse(s).map(Some),
        Some(v) => Err(TimingError::new(
            Code::BadTz,
            v.to_string(),
            None,
            format!("`{key}` is a string: an IANA name such as \"Europe/Prague\", \"UTC\", or an offset such as \"+02:00\""),
        )),
    }
}

fn holidays(obj: &Map<String, Value>) -> Result<Holidays, TimingError> {
    match obj.get("holidays") {
        None | Some(Value::Null) => Ok(Holidays::none()),
        Some(Value::Array(items)) => {
            let dates = items
                .iter()
                .map(|v| {
                    v.as_str().map(str::to_owned).ok_or_else(|| {
                        schema(
                            &v.to_string(),
                            "each holiday is a string: a date \"YYYY-MM-DD\" or a calendar such as \"US\", \"DE-BY\", \"contact\"",
                        )
                    })
                })
                .collect::<Result<Vec<String>, _>>()?;
            Holidays::parse(&dates)
        }
        Some(v) => Err(schema(
            &v.to_string(),
            "`holidays` is a list of dates and calendars such as [\"2026-12-24\", \"US\", \"contact\"]",
        )),
    }
}

fn schema(text: &str, hint: &str) -> TimingError {
    TimingError::new(Code::BadSchema, text, None, hint)
}

/// serde_json reports 1-based line and column; the answer wants a byte offset into the line.
fn byte_offset(text: &str, line: usize, column: usize) -> usize {
    let start: usize = text
        .split_inclusive('\n')
        .take(line.saturating_sub(1))
        .map(str::len)
        .sum();
    (start + column.saturating_sub(1)).min(text.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instants_print_milliseconds_only_when_not_zero() {
        let t = DateTime::parse_from_rfc3339("2026-03-01T10:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        assert_eq!(format_instant(t), "2026-03-01T10:00:00Z");
        let t = t + chrono::Duration::milliseconds(250);
        assert_eq!(format_instant(t), "2026-03-01T10:00:00.250Z");
    }

    #[test]
    fn a_request_asks_exactly_one_question() {
        let (out, ok) = answer_line(r#"{"now":"2026-03-01T10:00:00Z"}"#);
        assert!(!ok);
        assert!(out.contains("BAD_SCHEMA"), "{out}");
        let (out, ok) =
            answer_line(r#"{"now":"2026-03-01T10:00:00Z","duration":"1h","until":"mon 09:00"}"#);
        assert!(!ok);
        assert!(out.contains("FOR_AND_UNTIL"), "{out}");
    }

    #[test]
    fn fields_of_another_question_are_refused() {
        let (out, ok) =
            answer_line(r#"{"now":"2026-03-01T10:00:00Z","phone":"+13035551234","tz":"UTC"}"#);
        assert!(!ok);
        assert!(out.contains("BAD_SCHEMA") && out.contains("tz"), "{out}");
    }

    #[test]
    fn a_line_that_is_not_json_is_refused_with_its_position() {
        let (out, ok) = answer_line(r#"{"now": 2026-"#);
        assert!(!ok);
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["error"]["code"], "BAD_SCHEMA");
        assert!(v["error"]["message"].as_str().unwrap().contains("position"));
    }

    #[test]
    fn a_refusal_names_the_text_its_position_and_a_hint() {
        let (out, ok) = answer_line(r#"{"now":"2026-03-01T12:00:00Z","duration":"2H"}"#);
        assert!(!ok);
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["error"]["code"], "BAD_DURATION");
        let message = v["error"]["message"].as_str().unwrap();
        assert!(message.starts_with("\"2H\" at position 1: "), "{message}");
    }

    #[test]
    fn window_zones_list_the_send_window_zone_then_the_sms_zones() {
        // Monday 03:00 UTC: the SMS window in New York opens at 08:00 EST, the send window
        // (09:00 in Prague, the sender's zone) is already open.
        let (out, ok) = answer_line(
            r#"{"now":"2026-03-02T03:00:00Z","window":{"days":["mon"],"from":"09:00","to":"17:00","tz":"sender"},"channel":"sms","contact":{"tz":"America/New_York"},"sender_tz":"Europe/Prague"}"#,
        );
        assert!(ok, "{out}");
        assert_eq!(
            out,
            r#"{"at":"2026-03-02T13:00:00Z","zones":["Europe/Prague","America/New_York"]}"#
        );
    }

    #[test]
    fn now_with_sub_millisecond_digits_is_cut_to_milliseconds() {
        let (out, ok) = answer_line(r#"{"now":"2026-03-01T10:00:00.123456Z","duration":0}"#);
        assert!(ok, "{out}");
        assert_eq!(out, r#"{"at":"2026-03-01T10:00:00.123Z"}"#);
    }
}
