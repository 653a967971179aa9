//! Receiving a signal (SPEC §5.2–§5.5): store it once, then reach every active or paused
//! enrollment of its contacts and apply the engine's signal input to each.
//!
//! Under load, signals are routed in groups, one transaction each ([`group`]). The one-signal
//! path here is the reference the group path answers like, and its fallback: the signal is
//! stored in one transaction, then each enrollment is its own: the enrollment row is locked
//! (PostgreSQL `FOR UPDATE`; SQLite has one writer), the engine runs, and the new state, the
//! journey entries, any dispatch or task the continuing flow produces (the planner's writer,
//! [`crate::write_all`]) and a `signal_deliveries` row are written together. The delivery row
//! makes the fan-out resumable and exactly-once per enrollment: a second arrival with the same
//! provider id changes nothing and answers with the first result, and if the first fan-out was
//! cut short (a crash) the second one finishes it.

mod group;

pub use group::{receive_group, Pending, Router};

use super::contacts;
use super::fields;
use super::{ServiceError, Violation};
use crate::api::AppState;
use crate::clock::to_millis;
use crate::code::Code;
use crate::engine::{Input, Signal};
use crate::planner::{self, apply};
use crate::signals::payload::PayloadError;
use crate::signals::SignalKind;
use crate::store::enrollments::{EnrollmentRow, JourneyRow, Writes};
use crate::store::schema::{enrollments, signal_deliveries, signals};
use crate::store::signals::{self as store, DeliveryRow, Inserted, SignalRow};
use crate::store::{Conn, StoreError, TxError};
use crate::{load_flows_and_ctx, write_all};
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::{AsyncConnection, RunQueryDsl};
use serde_json::Value;

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
    state: &AppState,
    account_id: &str,
    reference: &ContactRef,
) -> Result<Vec<String>, ServiceError> {
    let (found, shown) = match reference {
        ContactRef::Id(id) => (store::contacts_by_id(&state.db, account_id, id).await?, id),
        ContactRef::Email(e) => (store::contacts_by_email(&state.db, account_id, e).await?, e),
        ContactRef::Phone(p) => (store::contacts_by_phone(&state.db, account_id, p).await?, p),
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
    /// What reported it: `api`, `event`, `email`, `sms`, `calendar`, `task`.
    pub source: &'static str,
    /// The provider's id, for deduplication (unique per account).
    pub provider_id: Option<String>,
    /// The custom event's payload (`{}` when none), or what a webhook carried.
    pub payload: Value,
    /// A webhook signature to refuse if seen before (stored with the signal).
    pub replay_key: Option<String>,
}

/// What a signal did in one enrollment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    pub enrollment_id: String,
    /// `woke`, `buffered`, `exited`, `ignored_paused`.
    pub effect: String,
    /// The branch, when it woke a wait.
    pub branch: Option<String>,
}

/// The answer to a signal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Receipt {
    pub signal_id: String,
    /// True when the provider id was seen before: nothing changed, this is the first result.
    pub duplicate: bool,
    pub deliveries: Vec<Delivery>,
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
    state: &AppState,
    account_id: &str,
    arrival: Arrival,
    now: DateTime<Utc>,
) -> Result<Received, ServiceError> {
    // No contacts: the group sends it to `receive_alone`, which refuses it.
    if matches!(arrival.kind, SignalKind::OptOut { .. }) {
        // The contact is marked first, outside any group.
        return receive_alone(state, account_id, arrival, now).await;
    }
    let signal = Pending {
        account_id: account_id.to_string(),
        arrival,
        phone: None,
        now,
    };
    match state.signals.submit(signal).await {
        Ok(received) => received,
        Err(signal) => receive_alone(state, account_id, signal.arrival, now).await,
    }
}

/// [`receive`] for a signal from a phone number (E.164): its contacts are the contacts with that
/// number, found in the signal's group (`NotFound` when there are none, and nothing is stored).
pub async fn receive_from_phone(
    state: &AppState,
    account_id: &str,
    phone: &str,
    mut arrival: Arrival,
    now: DateTime<Utc>,
) -> Result<Received, ServiceError> {
    if !matches!(arrival.kind, SignalKind::OptOut { .. }) {
        let signal = Pending {
            account_id: account_id.to_string(),
            arrival,
            phone: Some(phone.to_string()),
            now,
        };
        match state.signals.submit(signal).await {
            Ok(received) => return received,
            Err(signal) => arrival = signal.arrival,
        }
    }
    let reference = ContactRef::Phone(phone.to_string());
    arrival.contacts = find_contacts(state, account_id, &reference).await?;
    receive(state, account_id, arrival, now).await
}

/// [`receive`] in transactions of its own: one to store the signal, then one per enrollment.
async fn receive_alone(
    state: &AppState,
    account_id: &str,
    arrival: Arrival,
    now: DateTime<Utc>,
) -> Result<Received, ServiceError> {
    if arrival.contacts.is_empty() {
        return Err(ServiceError::NotFound {
            what: "contact",
            id: String::new(),
        });
    }
    let row = group::new_row(account_id, &arrival, now);
    let (row, duplicate, reach) =
        match store::insert(&state.db, &row, arrival.replay_key.as_deref()).await? {
            Inserted::New { row, reach } => (row, false, reach),
            Inserted::Duplicate { row, reach } => (row, true, reach),
            Inserted::Replayed => return Ok(Received::Replayed),
        };
    let mut deliveries = Vec::new();
    if row.routed_at.is_none() {
        // The stored row is the truth for a duplicate: its id, kind and contacts.
        if let Some(channel) = stored_opt_out(&row) {
            let contacts: Vec<String> = serde_json::from_str(&row.contact_ids)
                .map_err(|e| StoreError::Corrupt(format!("signal {}: contact_ids: {e}", row.id)))?;
            for contact in &contacts {
                contacts::opt_out(
                    &state.db,
                    account_id,
                    contact,
                    std::slice::from_ref(&channel),
                    now,
                )
                .await?;
            }
        }
        deliveries = deliver_all(state, &row, &reach, now).await?;
    }
    if duplicate {
        // The first result: everything delivered, by the first arrival and by this one.
        deliveries = store::deliveries(&state.db, &row.id)
            .await?
            .into_iter()
            .map(|d| Delivery {
                enrollment_id: d.enrollment_id,
                effect: d.effect,
                branch: d.branch,
            })
            .collect();
    }
    Ok(Received::Done(Receipt {
        signal_id: row.id,
        duplicate,
        deliveries,
    }))
}

/// Routes a signal stored already (a task outcome's, stored with the outcome) to the enrollments
/// it reaches but `except`, one transaction each, and marks it routed; returns how many it
/// reached now. Run again after a crash, it reaches only those it had not (the delivery rows).
pub async fn route_stored(
    state: &AppState,
    row: &SignalRow,
    except: &str,
    now: DateTime<Utc>,
) -> Result<usize, ServiceError> {
    let reach = store::reach(&state.db, row, except).await?;
    Ok(deliver_all(state, row, &reach, now).await?.len())
}

/// Delivers a stored signal to each of `reach` in turn (the last transaction also marks it
/// routed; with none to reach it is marked at once); returns what it did where it was not
/// delivered before.
async fn deliver_all(
    state: &AppState,
    row: &SignalRow,
    reach: &[String],
    now: DateTime<Utc>,
) -> Result<Vec<Delivery>, ServiceError> {
    let signal = engine_signal(row)?;
    let mut deliveries = Vec::with_capacity(reach.len());
    for (i, enrollment) in reach.iter().enumerate() {
        let last = i + 1 == reach.len();
        deliveries.extend(deliver(state, row, &signal, enrollment, last, now).await?);
    }
    if reach.is_empty() {
        store::mark_routed(&state.db, &row.id, to_millis(now)).await?;
    }
    Ok(deliveries)
}

/// Reports a signal through the API (`ReportSignal`).
pub async fn report(
    state: &AppState,
    account_id: &str,
    contact: &str,
    kind: SignalKind,
    provider_id: Option<String>,
    now: DateTime<Utc>,
) -> Result<Receipt, ServiceError> {
    let reference = ContactRef::parse("contact", contact).map_err(invalid)?;
    let contacts = find_contacts(state, account_id, &reference).await?;
    let arrival = Arrival {
        contacts,
        kind,
        source: "api",
        provider_id: fields::parse_provider_id("provider_id", provider_id).map_err(invalid)?,
        payload: serde_json::json!({}),
        replay_key: None,
    };
    done(receive(state, account_id, arrival, now).await?)
}

/// Posts a custom event (`PostEvent`, `POST /events/{key}`). The adapters parse the payload
/// with [`crate::signals::payload::parse`] (their refusals differ: 413/422 over HTTP); a null
/// payload is stored as `{}`.
pub async fn post_event(
    state: &AppState,
    account_id: &str,
    key: &str,
    contact: &str,
    payload: Value,
    provider_id: Option<String>,
    now: DateTime<Utc>,
) -> Result<Receipt, ServiceError> {
    let kind =
        SignalKind::event(key).map_err(|e| invalid(Violation::new("key", e.code, e.message)))?;
    let payload = crate::signals::kinds::non_null(payload);
    let reference = ContactRef::parse("contact", contact).map_err(invalid)?;
    let contacts = find_contacts(state, account_id, &reference).await?;
    let arrival = Arrival {
        contacts,
        kind,
        source: "event",
        provider_id: fields::parse_provider_id("provider_id", provider_id).map_err(invalid)?,
        payload,
        replay_key: None,
    };
    done(receive(state, account_id, arrival, now).await?)
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
        Received::Replayed => Err(ServiceError::Store(StoreError::Corrupt(
            "a replay refusal without a replay key".into(),
        ))),
    }
}

fn stored_opt_out(row: &SignalRow) -> Option<String> {
    (row.kind == "opt_out")
        .then(|| row.channel.clone())
        .flatten()
}

/// The engine's input for a stored signal.
fn engine_signal(row: &SignalRow) -> Result<Signal, StoreError> {
    let corrupt = |what: &str| StoreError::Corrupt(format!("signal {}: {what}", row.id));
    let raises: Vec<String> = serde_json::from_str(&row.raises).map_err(|_| corrupt("raises"))?;
    let payload: Value = serde_json::from_str(&row.payload).map_err(|_| corrupt("payload"))?;
    Ok(Signal {
        id: row.id.clone(),
        raises,
        opt_out: stored_opt_out(row),
        payload: crate::signals::kinds::non_null(payload),
    })
}

/// What the signal did in one enrollment: its entry in the journey rows the step wrote
/// (`{"event": "signal", "signal": id, "effect": "woke", "branch": …}`).
fn delivery_of(signal_id: &str, journey: &[JourneyRow]) -> (String, Option<String>) {
    journey
        .iter()
        .filter(|j| j.kind == "signal")
        .filter_map(|j| serde_json::from_str::<Value>(&j.detail).ok())
        .find(|d| d.get("signal").and_then(Value::as_str) == Some(signal_id))
        .map(|d| {
            let text = |k: &str| d.get(k).and_then(Value::as_str).map(str::to_string);
            (
                text("effect").unwrap_or_else(|| "none".into()),
                text("branch"),
            )
        })
        .unwrap_or_else(|| ("none".into(), None))
}

/// Applies `signal` to one enrollment in one transaction and returns what it did there; `None`
/// when the signal already reached it or it has finished meanwhile. With `last`, the same
/// transaction marks the signal's fan-out complete. Wakes the planner when an earlier timer is
/// written.
async fn deliver(
    state: &AppState,
    row: &SignalRow,
    signal: &Signal,
    enrollment_id: &str,
    last: bool,
    now: DateTime<Utc>,
) -> Result<Option<Delivery>, ServiceError> {
    let flows = &state.engine.flows;
    let now_ms = to_millis(now);
    macro_rules! load {
        () => {
            enrollments::table
                .find(enrollment_id)
                .select(EnrollmentRow::as_select())
        };
    }
    macro_rules! body {
        ($mode:ident: $c:expr, $found:expr) => {{
            let found: Option<EnrollmentRow> = $found;
            if last {
                diesel::update(signals::table.find(&row.id))
                    .set(signals::routed_at.eq(Some(now_ms)))
                    .execute($c)
                    .await?;
            }
            let Some(enrollment) = found else {
                return Ok::<_, TxError>(None);
            };
            if enrollment.status != "active" && enrollment.status != "paused" {
                return Ok(None);
            }
            let seen: i64 = signal_deliveries::table
                .filter(signal_deliveries::signal_id.eq(&row.id))
                .filter(signal_deliveries::enrollment_id.eq(enrollment_id))
                .count()
                .get_result($c)
                .await?;
            if seen > 0 {
                return Ok(None);
            }
            let rows = [enrollment];
            let (definitions, ctx) = load_flows_and_ctx!($c, flows, &rows)?;
            let [enrollment] = rows;
            let account_ctx = ctx.get(&enrollment.account_id).cloned().unwrap_or_default();
            let mut writes = Writes::default();
            apply(
                &mut writes,
                flows,
                &definitions,
                &account_ctx,
                enrollment,
                Input::Signal(signal.clone()),
                now,
            )
            .map_err(TxError::Store)?;
            write_all!($mode: $c, &writes)?;
            let (effect, branch) = delivery_of(&row.id, &writes.journey);
            diesel::insert_into(signal_deliveries::table)
                .values(&DeliveryRow {
                    signal_id: row.id.clone(),
                    enrollment_id: enrollment_id.to_string(),
                    effect: effect.clone(),
                    branch: branch.clone(),
                    at: now_ms,
                })
                .execute($c)
                .await?;
            let delivery = Delivery {
                enrollment_id: enrollment_id.to_string(),
                effect,
                branch,
            };
            Ok(Some((delivery, writes.earliest_wake)))
        }};
    }
    let conn = state.db.conn().await?;
    let done = match conn {
        Conn::Postgres(mut pooled) => {
            let c = &mut *pooled;
            c.transaction(async |c| {
                let found = load!().for_update().first(c).await.optional()?;
                body!(pg: c, found)
            })
            .await
        }
        Conn::Sqlite(mut pooled) => {
            let c = &mut *pooled;
            c.transaction(async |c| {
                let found = load!().first(c).await.optional()?;
                body!(sqlite: c, found)
            })
            .await
        }
    }
    .map_err(StoreError::from)?;
    Ok(match done {
        Some((delivery, wake)) => {
            planner::announce(state, wake).await;
            Some(delivery)
        }
        None => None,
    })
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
