//! Receiving a signal (docs/signals.md, "Kinds of signal and the events they raise", "Routing" and "Custom events"; docs/flows.md, "Timeouts"): store it once, then reach every active or paused
//! enrollment of its contacts and apply the engine's signal input to each.
//!
//! - [`Router`] (`router`): the entry; a queue that hands signals to [`group`] in batches.
//! - [`group`]: one transaction per group of signals, its SQL on [`crate::store::Tx`];
//!   `plan`: the pure middle of a group (which enrollments, what the engine does there).
//! - `alone`: the one-signal path, the reference the group path answers like, and its
//!   fallback.
//! - [`lookup`]: the addressing lookups webhooks need (a thread, a calendar, keys).
//!
//! The one-signal path: the signal is
//! stored in one transaction, then each enrollment is its own: the enrollment row is locked
//! (PostgreSQL `FOR UPDATE`; SQLite has one writer), the engine runs, and the new state, the
//! journey entries, any dispatch or task the continuing flow produces (the planner's writer,
//! [`Tx::write_all`](crate::store::Tx::write_all)) and a `signal_deliveries` row are written together. The delivery row
//! makes the fan-out resumable and exactly-once per enrollment: a second arrival with the same
//! provider id changes nothing and answers with the first result, and if the first fan-out was
//! cut short (a crash) the second one finishes it.

mod alone;
pub mod group;
pub mod lookup;
mod plan;
mod router;
pub mod words;

pub use words::Words;

pub use alone::{resume_unrouted, route_stored, FANOUT_CHUNK};
pub use group::receive_group;
pub use router::{Router, MAX_GROUP};

use super::fields;
use super::{ServiceError, Violation};
use crate::code::Code;
use crate::engine::{DeliveryEffect, Effect, Signal, SignalFacts};
use crate::inbound::intent::{Intent, ReplyIntent};
use crate::inbound::payload::PayloadError;
use crate::inbound::SignalKind;
use crate::runtime::Core;
use crate::store::signals::SignalRow;
use crate::store::{self, StoreError};
use chrono::{DateTime, Utc};
use serde_json::Value;
use std::collections::BTreeMap;

/// How a caller names the contact a signal is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ContactRef {
    Id(String),
    Email(String),
    /// E.164.
    Phone(String),
}

impl ContactRef {
    /// `+…` is a phone number (normalized to E.164), text with an `@` an email, anything else
    /// a contact id.
    pub fn parse(field: &str, text: &str) -> Result<ContactRef, Violation> {
        let text = text.trim();
        if text.is_empty() {
            return Err(Violation::new(
                field,
                Code::BadSchema,
                "name the contact: its id, its email, or its phone number in E.164 (`+…`)",
            ));
        }
        if text.starts_with('+') {
            return fields::parse_phone(field, text).map(ContactRef::Phone);
        }
        if text.contains('@') {
            return fields::parse_email(field, text).map(ContactRef::Email);
        }
        fields::parse_id(field, text).map(ContactRef::Id)
    }
}

/// The contacts `reference` names (several when an email or a number is shared), or
/// `NotFound`.
pub async fn find_contacts(
    core: &Core,
    account_id: &str,
    reference: &ContactRef,
) -> Result<Vec<String>, ServiceError> {
    let (found, shown) = match reference {
        ContactRef::Id(id) => (
            store::signals::contacts_by_id(&core.db, account_id, id).await?,
            id,
        ),
        ContactRef::Email(e) => (
            store::signals::contacts_by_email(&core.db, account_id, e).await?,
            e,
        ),
        ContactRef::Phone(p) => (
            store::signals::contacts_by_phone(&core.db, account_id, p).await?,
            p,
        ),
    };
    if found.is_empty() {
        return Err(ServiceError::NotFound {
            what: "contact",
            id: shown.clone(),
        });
    }
    Ok(found)
}

/// A signal as it arrives, its contacts already found.
#[derive(Debug, Clone)]
pub struct Arrival {
    /// Every contact it is addressed to (at least one).
    pub contacts: Vec<String>,
    pub kind: SignalKind,
    /// What reported it.
    pub source: Source,
    /// The provider's id, for deduplication (unique per account).
    pub provider_id: Option<String>,
    /// The custom event's payload (`{}` when none), or what a webhook carried.
    pub payload: Value,
    /// A webhook signature to refuse if seen before (stored with the signal).
    pub replay: Option<Replay>,
    /// What a human reply's words say, when it had words (stored in the payload under
    /// [`INTENT_KEY`]; a reply raises `intent:<x>` with it).
    pub intent: Option<ReplyIntent>,
}

/// A webhook signature, remembered so that it is refused if sent again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replay {
    pub key: String,
    /// When it was received by the system clock, never a manual one: a signature's freshness
    /// is real time (the sender's clock), so its memory is too.
    pub seen_at: DateTime<Utc>,
}

/// Remembers a webhook signature that leads to no signal (mail in no nudge thread), so that
/// it too is refused when sent again; false when it was seen before.
pub async fn remember_replay(
    core: &Core,
    account_id: &str,
    replay: &Replay,
) -> Result<bool, ServiceError> {
    Ok(store::signals::remember_replay(
        &core.db,
        account_id,
        &replay.key,
        crate::clock::to_millis(replay.seen_at),
    )
    .await?)
}

/// What reported a signal: stored with it, shown in its journey entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Source {
    /// `ReportSignal`.
    Api,
    /// `PostEvent` or `POST /events/{key}`.
    Event,
    /// The inbound email webhook.
    Email,
    /// The Twilio SMS webhook.
    Sms,
    /// The calendar webhook.
    Calendar,
    /// A Twilio Voice call status.
    Call,
    /// A completed task's outcome.
    Task,
}

impl Source {
    /// The stored spelling (`api`, `event`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Api => "api",
            Source::Event => "event",
            Source::Email => "email",
            Source::Sms => "sms",
            Source::Calendar => "calendar",
            Source::Call => "call",
            Source::Task => "task",
        }
    }
}

/// A signal waiting for its group.
pub struct Pending {
    /// The account it arrived for.
    pub account_id: String,
    /// With `phone`, `arrival.contacts` is found in the group: the contacts with that E.164
    /// number, or the answer is `NotFound` and nothing is stored.
    pub arrival: Arrival,
    /// The E.164 number it came from, when its contacts are still to be found.
    pub phone: Option<String>,
    /// A reply's words, read in the group against the first contact found by `phone` (its
    /// zone, its own address); `None` when there are none to read.
    pub words: Option<Words>,
    /// When it arrived.
    pub now: DateTime<Utc>,
}

/// What a signal did in one enrollment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    /// The enrollment it reached.
    pub enrollment_id: String,
    /// What it did there.
    pub effect: DeliveryEffect,
    /// The branch, when it woke a wait.
    pub branch: Option<String>,
}

/// At most this many deliveries are listed in a receipt; the counts cover all (docs/service.md, "Errors").
pub const MAX_RECEIPT_DELIVERIES: usize = 100;

/// The answer to a signal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Receipt {
    pub signal_id: String,
    /// True when the provider id was seen before: nothing changed, this is the first result.
    pub duplicate: bool,
    /// The first [`MAX_RECEIPT_DELIVERIES`], in enrollment id order.
    pub deliveries: Vec<Delivery>,
    /// How many enrollments it reached, and what it did there by effect.
    pub reached: usize,
    pub counts: BTreeMap<DeliveryEffect, usize>,
    /// What a human reply's words said, as stored with the signal (a duplicate answers the
    /// first reading).
    pub intent: Option<ReplyIntent>,
}

impl Receipt {
    /// The receipt of stored signal `row`'s `deliveries`: counted in full, listed up to
    /// [`MAX_RECEIPT_DELIVERIES`].
    pub fn summarize(row: &SignalRow, duplicate: bool, mut deliveries: Vec<Delivery>) -> Receipt {
        let mut counts = BTreeMap::new();
        for d in &deliveries {
            *counts.entry(d.effect).or_insert(0) += 1;
        }
        let reached = deliveries.len();
        deliveries.sort_by(|a, b| a.enrollment_id.cmp(&b.enrollment_id));
        deliveries.truncate(MAX_RECEIPT_DELIVERIES);
        // Only a reply (or the opt-out an unsubscribe in words became) carries a reading: any
        // other signal's payload, up to 64 KiB of a custom event's, is not parsed for it.
        let intent = row
            .may_carry_intent()
            .then(|| serde_json::from_str::<Value>(&row.payload).ok())
            .flatten()
            .and_then(|p| stored_intent(&p).ok().flatten());
        Receipt {
            signal_id: row.id.clone(),
            duplicate,
            deliveries,
            reached,
            counts,
            intent,
        }
    }

    /// How many deliveries had `effect`.
    pub fn count(&self, effect: DeliveryEffect) -> usize {
        self.counts.get(&effect).copied().unwrap_or(0)
    }
}

/// A received signal, or a webhook signature used before (nothing stored).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Received {
    Done(Receipt),
    Replayed,
}

/// Stores the signal (once per provider id) and routes it to every active or paused enrollment
/// of its contacts. An opt-out also marks each contact opted out of the channel.
///
/// Goes through the group-commit [`Router`] when one runs (see [`group`]); opt-outs, and every
/// signal when none runs, take the one-signal path.
pub async fn receive(
    router: &Router,
    account_id: &str,
    arrival: Arrival,
    now: DateTime<Utc>,
) -> Result<Received, ServiceError> {
    let kind = arrival.kind.name();
    let read = arrival.intent.as_ref().map(|i| {
        let channel = arrival.kind.channel().unwrap_or_default().to_string();
        (i.intent, channel)
    });
    // No contacts: the group sends it to `receive_alone`, which refuses it.
    if arrival.kind.marks_contact() {
        // The contact is marked first, outside any group.
        let r = alone::receive_alone(router.core(), account_id, arrival, now).await;
        return counted_reply(router.core(), read, counted(router.core(), kind, r));
    }
    let signal = Pending {
        account_id: account_id.to_string(),
        arrival,
        phone: None,
        words: None,
        now,
    };
    let r = match router.submit(signal).await {
        Ok(received) => received,
        Err(signal) => alone::receive_alone(router.core(), account_id, signal.arrival, now).await,
    };
    counted_reply(router.core(), read, counted(router.core(), kind, r))
}

/// Counts a new human reply in `nudge_replies_total` by what its words said and its channel.
fn counted_reply(
    core: &Core,
    read: Option<(crate::inbound::intent::Intent, String)>,
    received: Result<Received, ServiceError>,
) -> Result<Received, ServiceError> {
    if let (Ok(Received::Done(r)), Some((intent, channel))) = (&received, read) {
        if !r.duplicate {
            core.metrics.reply(intent.as_str(), channel);
        }
    }
    received
}

/// Counts a new signal's effects in `nudge_signals_total` (a duplicate or a replay changed
/// nothing, so it is not counted again).
fn counted(
    core: &Core,
    kind: &'static str,
    received: Result<Received, ServiceError>,
) -> Result<Received, ServiceError> {
    if let Ok(Received::Done(r)) = &received {
        if !r.duplicate {
            let effects = r
                .counts
                .iter()
                .map(|(e, n)| (e.as_str(), *n as u64))
                .collect();
            core.metrics.signal(kind, &effects);
        }
    }
    received
}

/// A soft bounce that is the contact's third within 7 days is received as a hard one
/// (docs/signals.md, "Inbox signals"); any other kind is unchanged.
pub async fn count_bounce(
    core: &Core,
    account_id: &str,
    contacts: &[String],
    kind: SignalKind,
    now: DateTime<Utc>,
) -> Result<SignalKind, ServiceError> {
    use crate::inbound::classify::{effective_bounce, BounceType, SOFT_BOUNCE_DAYS};
    if kind
        != (SignalKind::Bounce {
            bounce: BounceType::Soft,
        })
    {
        return Ok(kind);
    }
    let since = now - chrono::Duration::days(SOFT_BOUNCE_DAYS);
    let rows = store::signals::recent_of_kind(
        &core.db,
        account_id,
        contacts,
        "bounce",
        crate::clock::to_millis(since),
    )
    .await?;
    let mut soft_at: Vec<DateTime<Utc>> = Vec::new();
    for row in &rows {
        if engine_signal(row)?.inbox == Some(crate::routing::Inbox::SoftBounce) {
            soft_at.push(crate::clock::from_millis(row.created_at));
        }
    }
    soft_at.push(now);
    Ok(SignalKind::Bounce {
        bounce: effective_bounce(BounceType::Soft, &soft_at, now),
    })
}

/// [`receive`] for a signal from a phone number (E.164): its contacts are the contacts with that
/// number, found in the signal's group (`NotFound` when there are none, and nothing is stored).
/// A reply's `words` are read there too, in the first such contact's zone; when reading them
/// needs more than that contact's row (no zone of its own, or an unsubscribe the account's
/// policy settles) the group hands the signal back and its contacts are found and its words
/// read here first.
pub async fn receive_from_phone(
    router: &Router,
    account_id: &str,
    phone: &str,
    mut arrival: Arrival,
    words: &words::Words,
    now: DateTime<Utc>,
) -> Result<Received, ServiceError> {
    let reads = matches!(arrival.kind, SignalKind::Reply { .. }) && !words.is_empty();
    if !arrival.kind.marks_contact() {
        let channel = arrival.kind.channel().unwrap_or_default().to_string();
        let signal = Pending {
            account_id: account_id.to_string(),
            arrival,
            phone: Some(phone.to_string()),
            words: reads.then(|| words.clone()),
            now,
        };
        let kind = signal.arrival.kind.name();
        match router.submit(signal).await {
            Ok(received) => {
                // Read in the group: a reply still, its reading the one stored.
                let read = match &received {
                    Ok(Received::Done(r)) if reads => {
                        r.intent.as_ref().map(|i| (i.intent, channel))
                    }
                    _ => None,
                };
                return counted_reply(router.core(), read, counted(router.core(), kind, received));
            }
            Err(signal) => arrival = signal.arrival,
        }
    }
    let reference = ContactRef::Phone(phone.to_string());
    arrival.contacts = find_contacts(router.core(), account_id, &reference).await?;
    if reads {
        let (kind, intent) = words::read_and_settle(
            router.core(),
            account_id,
            &arrival.contacts[0],
            arrival.kind,
            words,
            now,
        )
        .await?;
        arrival.kind = kind;
        arrival.intent = intent;
    }
    receive(router, account_id, arrival, now).await
}

/// A signal reported through the API (`ReportSignal`).
#[derive(Debug, Clone)]
pub struct Report<'a> {
    /// The contact: its id, email or E.164 phone.
    pub contact: &'a str,
    pub kind: SignalKind,
    /// Deduplicates retries.
    pub provider_id: Option<String>,
    /// A reply's words, read into an intent (empty: none).
    pub words: Words,
    /// An intent the caller already named (empty: read the words); it skips the classifier.
    pub intent: &'a str,
}

/// Reports a signal through the API (`ReportSignal`). A reply with words is read into an
/// intent, or takes the one the caller named.
pub async fn report(
    router: &Router,
    account_id: &str,
    report: Report<'_>,
    now: DateTime<Utc>,
) -> Result<Receipt, ServiceError> {
    let is_reply = matches!(report.kind, SignalKind::Reply { .. });
    let mut problems = super::Violations::default();
    let reference = problems.check(ContactRef::parse("contact", report.contact));
    let named = match report.intent.trim() {
        "" => None,
        name => match Intent::parse(name) {
            Some(intent) => Some(intent),
            None => {
                problems.push(Violation::new(
                    "intent",
                    Code::BadSchema,
                    format!(
                        "{} is not an intent: use one of {}, or leave it empty to have the \
                         reply's text read",
                        crate::quote::quote(name),
                        Intent::ALL.map(|i| format!("`{i}`")).join(", ")
                    ),
                ));
                None
            }
        },
    };
    if !is_reply && (!report.words.is_empty() || !report.intent.trim().is_empty()) {
        let field = if report.intent.trim().is_empty() {
            "text"
        } else {
            "intent"
        };
        problems.push(Violation::new(
            field,
            Code::BadSchema,
            format!(
                "only a reply has words and an intent; this signal is `{}`: report it with \
                 kind `reply` and a channel, or leave `text`, `subject` and `intent` empty",
                report.kind.name()
            ),
        ));
    }
    problems.check(fields::check_text(
        "text",
        &report.words.text,
        fields::Limit::Words,
    ));
    if let Some(subject) = &report.words.subject {
        problems.check(fields::check_text("subject", subject, fields::Limit::Name));
    }
    let provider_id = problems.check(fields::parse_provider_id("provider_id", report.provider_id));
    problems.finish()?;
    let (Some(reference), Some(provider_id)) = (reference, provider_id) else {
        unreachable!("finish() refuses a missing contact or provider id");
    };
    let contacts = find_contacts(router.core(), account_id, &reference).await?;
    let kind = count_bounce(router.core(), account_id, &contacts, report.kind, now).await?;
    let (kind, intent) = match named {
        Some(intent) => {
            words::settled(router.core(), account_id, kind, Some(words::named(intent))).await?
        }
        None => {
            words::read_and_settle(
                router.core(),
                account_id,
                &contacts[0],
                kind,
                &report.words,
                now,
            )
            .await?
        }
    };
    let arrival = Arrival {
        contacts,
        kind,
        source: Source::Api,
        provider_id,
        payload: serde_json::json!({}),
        replay: None,
        intent,
    };
    done(receive(router, account_id, arrival, now).await?)
}

/// Posts a custom event (`PostEvent`, `POST /events/{key}`). The adapters parse the payload
/// with [`crate::inbound::payload::parse`] (their refusals differ: 413/422 over HTTP); a null
/// payload is stored as `{}`.
pub async fn post_event(
    router: &Router,
    account_id: &str,
    key: &str,
    contact: &str,
    payload: Value,
    provider_id: Option<String>,
    now: DateTime<Utc>,
) -> Result<Receipt, ServiceError> {
    fields::check_text("key", key, fields::Limit::EventKey).map_err(invalid)?;
    let kind =
        SignalKind::event(key).map_err(|e| invalid(Violation::new("key", e.code, e.message)))?;
    let payload = crate::inbound::kinds::non_null(payload);
    let reference = ContactRef::parse("contact", contact).map_err(invalid)?;
    let contacts = find_contacts(router.core(), account_id, &reference).await?;
    let arrival = Arrival {
        contacts,
        kind,
        source: Source::Event,
        provider_id: fields::parse_provider_id("provider_id", provider_id).map_err(invalid)?,
        payload,
        replay: None,
        intent: None,
    };
    done(receive(router, account_id, arrival, now).await?)
}

/// The violation of a refused payload.
pub fn payload_violation(e: PayloadError) -> Violation {
    Violation::new("payload", Code::BadSchema, e.to_string())
}

fn invalid(v: Violation) -> ServiceError {
    ServiceError::Invalid(vec![v])
}

fn done(received: Received) -> Result<Receipt, ServiceError> {
    match received {
        Received::Done(receipt) => Ok(receipt),
        // Only webhooks pass a replay key.
        Received::Replayed => Err(ServiceError::Internal(
            "a replay refusal without a replay key".into(),
        )),
    }
}

fn stored_opt_out(row: &SignalRow) -> Option<String> {
    row.is_opt_out().then(|| row.channel.clone()).flatten()
}

/// A stored delivery as the answer shows it.
fn delivery_from_row(d: store::signals::DeliveryRow) -> Result<Delivery, StoreError> {
    let effect = DeliveryEffect::parse(&d.effect).ok_or_else(|| {
        StoreError::Corrupt(format!(
            "delivery of signal {} to {}: effect `{}`",
            d.signal_id, d.enrollment_id, d.effect
        ))
    })?;
    Ok(Delivery {
        enrollment_id: d.enrollment_id,
        effect,
        branch: d.branch,
    })
}

/// The engine's input for a stored signal.
fn engine_signal(row: &SignalRow) -> Result<Signal, StoreError> {
    let corrupt = |what: &str| StoreError::Corrupt(format!("signal {}: {what}", row.id));
    let raises: Vec<String> = serde_json::from_str(&row.raises).map_err(|_| corrupt("raises"))?;
    let payload: Value = serde_json::from_str(&row.payload).map_err(|_| corrupt("payload"))?;
    let inbox = match payload.get(INBOX_KEY) {
        Some(v) if row.is_inbox() => Some(
            serde_json::from_value::<crate::routing::Inbox>(v.clone())
                .map_err(|_| corrupt("inbox"))?,
        ),
        _ => None,
    };
    let reading = stored_intent(&payload).map_err(|_| corrupt("intent"))?;
    let facts = match (row.kind.as_str(), row.channel.as_deref()) {
        (SignalKind::REPLY, Some(channel)) => SignalFacts::of_reply(channel, reading.as_ref()),
        ("call_connected", _) => SignalKind::CallConnected.facts(None),
        _ => SignalFacts::default(),
    };
    Ok(Signal {
        id: row.id.clone(),
        raises,
        opt_out: stored_opt_out(row),
        payload: crate::inbound::kinds::non_null(payload),
        inbox,
        facts,
    })
}

/// The payload key a classified reply's intent is stored under.
pub use crate::inbound::intent::PAYLOAD_KEY as INTENT_KEY;

/// The intent stored in a signal's payload, if its words were classified.
pub fn stored_intent(payload: &Value) -> Result<Option<ReplyIntent>, serde_json::Error> {
    payload
        .get(INTENT_KEY)
        .map(|v| serde_json::from_value(v.clone()))
        .transpose()
}

/// The payload key an inbox signal's class is stored under (docs/signals.md, "Inbox signals"): the stored signal is
/// the truth the engine routes from, on every path (group, alone, resumed after a crash).
pub const INBOX_KEY: &str = "inbox";

/// How a stored signal changes its contacts before it is routed: an opt-out (or a hard
/// bounce: email to the address is blocked) adds the channel to `opted_out`, an opt-in removes
/// it.
fn contact_mark(row: &SignalRow) -> Option<(bool, String)> {
    if let Some(channel) = stored_opt_out(row) {
        return Some((true, channel));
    }
    // Only an inbox signal's payload can say so: no other is parsed.
    if !row.is_inbox() {
        return None;
    }
    let payload: Value = serde_json::from_str(&row.payload).ok()?;
    match serde_json::from_value::<crate::routing::Inbox>(payload.get(INBOX_KEY)?.clone()).ok()? {
        crate::routing::Inbox::HardBounce | crate::routing::Inbox::Complaint => {
            Some((true, "email".into()))
        }
        crate::routing::Inbox::OptIn { channel } => Some((false, channel)),
        _ => None,
    }
}

/// What the signal `signal_id` did in `enrollment_id`, read from the effects of the step that
/// applied it: the delivery row that records it (written with the step) and the answer's
/// delivery.
fn delivered(
    signal_id: &str,
    enrollment_id: &str,
    effects: &[Effect],
    at: i64,
) -> (store::signals::DeliveryRow, Delivery) {
    let (effect, branch) = DeliveryEffect::of(signal_id, effects);
    let row = store::signals::DeliveryRow {
        signal_id: signal_id.to_string(),
        enrollment_id: enrollment_id.to_string(),
        effect: effect.as_str().to_string(),
        branch: branch.clone(),
        at,
    };
    let delivery = Delivery {
        enrollment_id: enrollment_id.to_string(),
        effect,
        branch,
    };
    (row, delivery)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contact_references() {
        assert_eq!(
            ContactRef::parse("c", "+1 212 555 1234").unwrap(),
            ContactRef::Phone("+12125551234".into())
        );
        assert_eq!(
            ContactRef::parse("c", " ann@example.com ").unwrap(),
            ContactRef::Email("ann@example.com".into())
        );
        assert_eq!(
            ContactRef::parse("c", "ct_42").unwrap(),
            ContactRef::Id("ct_42".into())
        );
        assert_eq!(
            ContactRef::parse("c", "+1 555").unwrap_err().code,
            Code::BadPhone
        );
        assert_eq!(
            ContactRef::parse("c", "").unwrap_err().code,
            Code::BadSchema
        );
        assert_eq!(
            ContactRef::parse("c", "a@").unwrap_err().code,
            Code::BadSchema
        );
    }
}
