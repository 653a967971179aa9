//! Provider webhooks (docs/service.md): inbound email, inbound SMS from Twilio, calendar events.
//!
//! The account is named by the `account` query parameter (default: the default account), so
//! one server can take webhooks for several accounts. Checks run in this order, and nothing is
//! stored on a refusal: the query (400), body size (413), signature (401), body (422), contact
//! (404); then the signal is stored (a signature seen before: 401; a provider id seen before:
//! the first result, nothing changes) and routed. A signature's timestamp is checked against
//! the system clock, whatever clock the server runs on: it is the sender's real time.
//!
//! - `/webhooks/email` and `/webhooks/calendar` are signed with `X-Nudge-Signature`
//!   ([`crate::inbound::signing`]).
//! - `/webhooks/sms/twilio` is signed by Twilio (`X-Twilio-Signature`) with the account's Twilio
//!   auth token, over the public URL Twilio called: `--public-url` / `NUDGE_PUBLIC_URL` plus the
//!   request's path and query when set; otherwise rebuilt from `X-Forwarded-Proto` (default
//!   `http`), `X-Forwarded-Host` or `Host`, and the path and query.
//!
//! The account's keys are read at most once a second ([`KEY_TTL`]): a cached key may accept a
//! request, but only keys read again may refuse one.
//!
//! Providers' own formats (Mailgun, SendGrid, Postmark, SES, Twilio status and Voice, Calendly,
//! Cal.com) are in [`providers`]; docs/providers.md says what each does.

pub mod providers;

use super::error::HttpError;
use super::{check_id, read_body, receipt_json};
use crate::api::AppState;
use crate::inbound::mail::{self, Mail};
use crate::inbound::providers::{Notice, Reading};
use crate::inbound::signing::{self, SignatureError};
use crate::inbound::{sms, SignalKind};
use crate::service::fields::{is_e164, parse_phone};
use crate::service::signals::{self, Arrival, Receipt, Received, Replay};
use crate::service::signals::{lookup, Source};
use crate::service::ServiceError;
use crate::store::accounts::DEFAULT_ACCOUNT_ID;
use axum::body::{Body, Bytes};
use axum::extract::{Query, State};
use axum::http::{header, HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::Json;
use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde_json::{json, Map, Value};
use std::time::Instant;

/// The largest webhook body accepted (1 MiB: an email's text with its headers).
pub const MAX_WEBHOOK_BYTES: usize = 1024 * 1024;

#[derive(Debug, Deserialize)]
pub struct WebhookQuery {
    /// The account the webhook is for; the default account when absent.
    pub account: Option<String>,
    /// A Twilio Voice status callback's task (`tk_…`), when the callback URL names it.
    pub task: Option<String>,
}

impl WebhookQuery {
    /// The account named, checked before it reaches the database.
    pub(crate) fn account(&self) -> Result<&str, HttpError> {
        let account = self.account.as_deref().unwrap_or(DEFAULT_ACCOUNT_ID);
        check_id("account", account)?;
        Ok(account)
    }
}

/// How long webhook keys read from the account are trusted. Cached keys only ever accept a
/// request: a refusal is decided on keys read again, so a new secret or token works at once,
/// and one replaced (`nudge webhook-secret`, `nudge provider-secret set`, from any process) is
/// still accepted for at most this long.
pub const KEY_TTL: std::time::Duration = std::time::Duration::from_secs(1);

/// An account's webhook secret and its providers' secrets.
pub use crate::store::provider_secrets::Keys;

/// Webhook keys by account, each read at most [`KEY_TTL`] ago. Cheap to clone.
pub type KeyCache = crate::cache::TtlCache<Keys>;

/// An empty [`KeyCache`]: an entry per account that sent a webhook lately, each trusted for
/// [`KEY_TTL`].
pub fn key_cache() -> KeyCache {
    KeyCache::new(KEY_TTL, MAX_CACHED_ACCOUNTS)
}

/// The most accounts whose keys are remembered at once.
const MAX_CACHED_ACCOUNTS: usize = 100_000;

/// Runs `check` with the account's webhook keys: the cached ones when they pass it, else
/// (and for the answer) the ones stored now. An unknown account is a bad credential.
pub(crate) async fn with_keys<T>(
    state: &AppState,
    account: &str,
    check: impl Fn(&Keys) -> Result<T, HttpError>,
) -> Result<T, HttpError> {
    if let Some(keys) = state.webhook_keys.get(account, Instant::now()) {
        if let Ok(done) = check(&keys) {
            return Ok(done);
        }
    }
    let keys = lookup::webhook_keys(&state.core, account)
        .await?
        .ok_or_else(|| {
            HttpError::unauthenticated(format!(
                "no account `{account}`: the `account` query parameter names the account the \
                 webhook is for (leave it out for the default account)"
            ))
        })?;
    state.webhook_keys.put(account, &keys, Instant::now());
    check(&keys)
}

/// Verifies `X-Nudge-Signature` at `now` (the system clock's); returns the replay to remember.
fn verify_nudge(
    secret: &str,
    headers: &HeaderMap,
    body: &Bytes,
    now: DateTime<Utc>,
) -> Result<Replay, HttpError> {
    let header = headers
        .get(signing::NUDGE_HEADER)
        .map(|v| {
            v.to_str()
                .map_err(|_| SignatureError::Malformed("not text".into()))
        })
        .transpose()?;
    let verified = signing::verify(secret, header, body, now)?;
    Ok(Replay {
        key: format!("v1:{}", verified.v1),
        seen_at: now,
    })
}

/// The body of a request signed with `X-Nudge-Signature` (`/webhooks/email`,
/// `/webhooks/calendar`), checked against the signature clock, and the replay to remember.
async fn nudge_signed(
    state: &AppState,
    account: &str,
    headers: &HeaderMap,
    body: Body,
) -> Result<(Bytes, Replay), HttpError> {
    let body = read_body(body, MAX_WEBHOOK_BYTES).await?;
    let now = state.signature_clock.now();
    let replay = with_keys(state, account, |keys| {
        verify_nudge(&keys.webhook_secret, headers, &body, now)
    })
    .await?;
    Ok((body, replay))
}

fn parse_json<T: serde::de::DeserializeOwned>(body: &Bytes) -> Result<T, HttpError> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| HttpError::unprocessable(format!("the body does not parse: {e}")))?;
    if let Some(at) = nul_at(&value, String::new()) {
        return Err(HttpError::unprocessable(format!(
            "the text at `{at}` contains a NUL character (\\u0000), which no stored text may \
             hold; remove it"
        )));
    }
    serde_json::from_value(value)
        .map_err(|e| HttpError::unprocessable(format!("the body does not parse: {e}")))
}

/// The JSON Pointer of the first key or string holding a NUL, which PostgreSQL's text refuses
/// (a header used as a provider id or a thread id would otherwise fail the request with 500).
fn nul_at(value: &Value, at: String) -> Option<String> {
    match value {
        Value::String(s) if s.contains('\0') => Some(at),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, v)| nul_at(v, format!("{at}/{i}"))),
        Value::Object(fields) => fields.iter().find_map(|(k, v)| {
            let here = format!("{at}/{}", k.replace('~', "~0").replace('/', "~1"));
            if k.contains('\0') {
                Some(here)
            } else {
                nul_at(v, here)
            }
        }),
        _ => None,
    }
}

fn answer(received: Received) -> Result<Receipt, HttpError> {
    match received {
        Received::Done(receipt) => Ok(receipt),
        Received::Replayed => Err(SignatureError::Replayed.into()),
    }
}

/// An inbound email as JSON (the shape most inbound-mail providers can be mapped to).
#[derive(Debug, Deserialize)]
pub struct InboundEmail {
    /// Header name → value (names in any case; a list of values is joined with spaces).
    #[serde(default)]
    pub headers: Map<String, Value>,
    #[serde(default)]
    pub from: Option<String>,
    #[serde(default)]
    pub to: Option<Value>,
    #[serde(default)]
    pub subject: Option<String>,
    #[serde(default)]
    pub text: Option<String>,
    /// The raw MIME message (RFC 5322), as a provider that forwards raw mail has it; when set,
    /// the other fields are read from it instead.
    #[serde(default)]
    pub raw: Option<String>,
}

impl InboundEmail {
    /// The mail these fields describe (or the raw message they carry).
    fn into_mail(self) -> Result<Mail, HttpError> {
        if let Some(raw) = &self.raw {
            return parse_raw_mail(raw.as_bytes());
        }
        let headers = self
            .headers
            .keys()
            .filter_map(|k| self.header(k).map(|v| (k.clone(), v)))
            .collect();
        let to = match &self.to {
            Some(Value::String(s)) => Some(s.clone()),
            Some(other) => Some(other.to_string()),
            None => None,
        };
        Ok(Mail::from_parts(
            headers,
            self.from,
            to,
            self.subject,
            self.text,
        ))
    }

    /// A header's value, its name in any case.
    fn header(&self, name: &str) -> Option<String> {
        let value = self
            .headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v)?;
        match value {
            Value::String(s) => Some(s.clone()),
            Value::Array(items) => Some(
                items
                    .iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join(" "),
            ),
            _ => None,
        }
    }
}

/// A raw MIME message as a [`Mail`]; 422 when it does not parse, or when text nudge would
/// store holds a NUL character.
pub(crate) fn parse_raw_mail(bytes: &[u8]) -> Result<Mail, HttpError> {
    let mail = mail::parse_raw(bytes).map_err(|e| HttpError::unprocessable(e.to_string()))?;
    let fields = [
        ("From", mail.from.as_deref()),
        ("To", mail.to.as_deref()),
        ("Subject", mail.subject.as_deref()),
        ("Message-ID", mail.header("Message-ID")),
    ];
    if let Some((name, _)) = fields
        .iter()
        .find(|(_, v)| v.is_some_and(|v| v.contains('\0')))
    {
        return Err(HttpError::unprocessable(format!(
            "the raw message's `{name}` contains a NUL character, which no stored text may hold"
        )));
    }
    Ok(mail)
}

/// `POST /webhooks/email`: a reply in a thread nudge started raises `reply`, `reply:email`.
/// Mail in no nudge thread answers 202 with `{"status": "ignored"}` and stores nothing: it is
/// not an error of the sender (a provider would retry a 4xx), just not a reply nudge tracks.
pub async fn email(
    State(state): State<AppState>,
    Query(query): Query<WebhookQuery>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, HttpError> {
    let account = query.account()?;
    let (body, replay) = nudge_signed(&state, account, &headers, body).await?;
    let raw = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| ct.trim().to_ascii_lowercase().starts_with("message/rfc822"));
    let mail = if raw {
        parse_raw_mail(&body)?
    } else {
        parse_json::<InboundEmail>(&body)?.into_mail()?
    };
    let reading = Reading {
        notices: vec![Notice::Mail(Box::new(mail))],
        replay: Some(replay.key),
    };
    // Mail in no nudge thread: 202, as this endpoint always answered it.
    providers::act(
        &state,
        account,
        reading,
        replay.seen_at,
        None,
        StatusCode::ACCEPTED,
    )
    .await
}

/// The URL Twilio signed: the configured public URL, or one rebuilt from the request.
pub(crate) fn public_url(state: &AppState, headers: &HeaderMap, uri: &Uri) -> String {
    let path_and_query = uri
        .path_and_query()
        .map(|p| p.as_str().to_string())
        .unwrap_or_else(|| uri.path().to_string());
    if let Some(base) = &state.public_url {
        return format!("{}{path_and_query}", base.trim_end_matches('/'));
    }
    let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let scheme = text("x-forwarded-proto").unwrap_or("http");
    let host = text("x-forwarded-host")
        .or_else(|| text(header::HOST.as_str()))
        .or_else(|| uri.authority().map(|a| a.as_str()))
        .unwrap_or("localhost");
    format!("{scheme}://{host}{path_and_query}")
}

/// `POST /webhooks/sms/twilio`: an inbound SMS from the contact's number raises `reply`,
/// `reply:sms`; a body that is only `STOP` (and the other keywords) opts out of SMS. Answers
/// an empty TwiML `<Response/>`, so Twilio sends nothing back itself.
pub async fn twilio(
    State(state): State<AppState>,
    Query(query): Query<WebhookQuery>,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, HttpError> {
    let account = query.account()?;
    let form = providers::twilio_form(&state, account, &uri, &headers, body).await?;
    let params = form.pairs();
    let param = |name: &str| {
        params
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    let from = param("From").ok_or_else(|| {
        HttpError::unprocessable("the form has no `From` (the sender's number, as Twilio sends it)")
    })?;
    let text = param("Body").unwrap_or("");
    let sid = param("MessageSid").or_else(|| param("SmsSid"));
    let arrival = |from: &str| {
        let channel = "sms".to_string();
        let kind = match sms::keyword(text) {
            Some(sms::Keyword::OptOut) => SignalKind::OptOut { channel },
            Some(sms::Keyword::OptIn) => SignalKind::OptIn { channel },
            Some(sms::Keyword::Help) => SignalKind::Help { channel },
            None => SignalKind::Reply { channel },
        };
        Arrival {
            // Found with the signal's group: the contacts with this number.
            contacts: Vec::new(),
            kind,
            source: Source::Sms,
            provider_id: sid.map(|s| format!("twilio:{s}")),
            payload: json!({"from": from, "to": param("To"), "message_sid": sid}),
            // Twilio's signature has no timestamp: a replay is the same MessageSid, a duplicate.
            replay: None,
            intent: None,
        }
    };
    let now = state.core.clock.now();
    let words = signals::words::Words::text(text);
    let receive = |from: String| {
        let arrival = arrival(&from);
        let words = &words;
        let state = &state;
        async move {
            signals::receive_from_phone(&state.signals, account, &from, arrival, words, now).await
        }
    };
    let unprocessable = |v: crate::service::Violation| HttpError::unprocessable(v.message);
    // Twilio sends numbers in E.164 already, and every contact's number was normalized when it
    // was stored, so such a number is looked up as it came: the numbering plan's check (which
    // is most of a signal's parsing) runs only when no contact has it. Then a number no plan
    // allows is refused (422) as before, and one whose normal form is spelled differently
    // (`+4402071234567` is `+442071234567`) is looked up again in that form.
    let received = if is_e164(from) {
        match receive(from.to_string()).await {
            unknown @ Err(ServiceError::NotFound {
                what: "contact", ..
            }) => {
                let normal = parse_phone("From", from).map_err(unprocessable)?;
                if normal == from {
                    unknown
                } else {
                    receive(normal).await
                }
            }
            received => received,
        }
    } else {
        receive(parse_phone("From", from).map_err(unprocessable)?).await
    };
    answer(received?)?;
    Ok((
        StatusCode::OK,
        [(header::CONTENT_TYPE, "text/xml")],
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Response/>",
    )
        .into_response())
}

/// A calendar event as JSON.
#[derive(Debug, Deserialize)]
pub struct CalendarEvent {
    /// The provider's event id (deduplicates updates of the same event).
    pub id: String,
    /// The calendar it is on: a sender's `calendar` address (or its email when it has none).
    pub organizer: Person,
    #[serde(default)]
    pub attendees: Vec<Person>,
    /// RFC 3339.
    pub start: chrono::DateTime<chrono::FixedOffset>,
    /// `confirmed` (default) or `cancelled` (Google Calendar's and iCalendar's `STATUS`).
    #[serde(default)]
    pub status: Option<String>,
}

/// An address, alone or as `{"email": …}`.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum Person {
    Address(String),
    Object { email: String },
}

impl Person {
    fn email(&self) -> &str {
        match self {
            Person::Address(a) | Person::Object { email: a } => a.trim(),
        }
    }
}

/// `POST /webhooks/calendar`: an event on a sender's calendar raises `meeting_booked` for every
/// attendee who is a contact.
pub async fn calendar(
    State(state): State<AppState>,
    Query(query): Query<WebhookQuery>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, HttpError> {
    let account = query.account()?;
    let (body, replay) = nudge_signed(&state, account, &headers, body).await?;
    let event: CalendarEvent = parse_json(&body)?;
    let organizer = event.organizer.email().to_string();
    let sender = lookup::sender_by_calendar(&state.core, account, &organizer)
        .await?
        .ok_or_else(|| {
            HttpError::not_found(format!(
                "`{organizer}` is no sender's calendar: set the sender's `calendar` with UpsertSender"
            ))
        })?;
    let mut contacts: Vec<String> = Vec::new();
    for attendee in &event.attendees {
        let email = attendee.email();
        if email.eq_ignore_ascii_case(&organizer) || !email.contains('@') {
            continue;
        }
        for id in lookup::contacts_by_email(&state.core, account, email).await? {
            if !contacts.contains(&id) {
                contacts.push(id);
            }
        }
    }
    if contacts.is_empty() {
        return Err(HttpError::not_found(
            "no attendee of the event is a contact (matched by email)",
        ));
    }
    let cancelled = match event
        .status
        .as_deref()
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        None | Some("confirmed") | Some("tentative") => false,
        Some("cancelled") | Some("canceled") => true,
        Some(other) => {
            return Err(HttpError::unprocessable(format!(
                "`status` {} is not an event status: use `confirmed` or `cancelled`",
                crate::quote::quote(other)
            )))
        }
    };
    let payload = json!({
        "event_id": event.id,
        "organizer": organizer,
        "sender_id": sender,
        "start": event.start.to_rfc3339(),
    });
    let (kind, provider_id) = if cancelled {
        (
            SignalKind::MeetingCancelled,
            format!("calendar:{}:cancelled", event.id),
        )
    } else {
        (SignalKind::MeetingBooked, format!("calendar:{}", event.id))
    };
    // A moved event (same id, another start) updates the booking and raises nothing new.
    if !cancelled {
        if let Some(booked) =
            crate::store::signals::by_provider_id(&state.core.db, account, &provider_id).await?
        {
            let updated = payload.to_string();
            if booked.payload != updated {
                crate::store::signals::set_payload(&state.core.db, &booked.id, &updated).await?;
            }
        }
    }
    let arrival = Arrival {
        contacts,
        kind,
        source: Source::Calendar,
        provider_id: Some(provider_id),
        payload,
        replay: Some(replay),
        intent: None,
    };
    let receipt =
        answer(signals::receive(&state.signals, account, arrival, state.core.clock.now()).await?)?;
    Ok((StatusCode::OK, Json(receipt_json(&receipt))).into_response())
}
