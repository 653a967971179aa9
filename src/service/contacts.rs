//! Contacts: upsert with every field checked, get, opt out.
//!
//! An upsert that changes a contact tells its running enrollments in the same transaction
//! (the engine's `ContactChanged`, through [`crate::runtime::apply()`]): the execution-time gate
//! (docs/timing.md, "Send windows" step 4) then reads the new zone, and a step held `ZONE_UNKNOWN` or `NO_OPENING` is
//! planned again. A contact and its enrollments never disagree, even after a crash.

use super::fields::{self, Channel};
use super::{ServiceError, Violations};
use crate::clock::{from_millis, to_millis};
use crate::engine::Input;
use crate::runtime::{apply, Core, StepContext};
use crate::store::{self, contacts::ContactRow, Committed, StoreError, Tx, Writes, LIVE};
use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

/// A contact as the API sends it in (before checking).
#[derive(Debug, Clone, Default)]
pub struct ContactInput {
    /// Empty means "assign one".
    pub id: String,
    pub email: String,
    pub phone: String,
    pub tz: String,
    /// ISO 3166-1 alpha-2 (`DE`); empty when unknown.
    pub country: String,
    pub attributes: Map<String, Value>,
}

/// A stored contact.
#[derive(Debug, Clone, PartialEq)]
pub struct Contact {
    pub id: String,
    pub email: Option<String>,
    /// E.164.
    pub phone: Option<String>,
    pub tz: Option<String>,
    pub country: Option<String>,
    pub attributes: Map<String, Value>,
    /// Sorted.
    pub opted_out: Vec<Channel>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// Creates or replaces a contact; returns it and whether it was created. Every field is checked
/// first, and every problem is reported at once; nothing is stored when one is found. An upsert
/// that changes nothing writes nothing (not even `updated_at`); one that changes the contact
/// reaches every active or paused enrollment of it in the same transaction.
pub async fn upsert(
    core: &Core,
    account_id: &str,
    input: ContactInput,
    now: DateTime<Utc>,
) -> Result<(Contact, bool), ServiceError> {
    let db = &core.db;
    let mut problems = Violations::default();
    let id = if input.id.is_empty() {
        store::new_id("ct")
    } else {
        problems
            .check(fields::parse_id("contact.id", &input.id))
            .unwrap_or_default()
    };
    let email = optional(&input.email, |t| {
        problems.check(fields::parse_email("contact.email", t))
    });
    let phone = optional(&input.phone, |t| {
        problems.check(fields::parse_phone("contact.phone", t))
    });
    let tz = optional(&input.tz, |t| {
        problems.check(fields::parse_tz("contact.tz", t))
    });
    let country = optional(&input.country, |t| {
        problems.check(fields::parse_country("contact.country", t))
    });
    problems.finish()?;

    let now_ms = to_millis(now);
    let row = ContactRow {
        account_id: account_id.to_string(),
        id,
        email,
        phone,
        tz,
        country,
        attributes: Value::Object(input.attributes).to_string(),
        opted_out: "[]".to_string(),
        created_at: now_ms,
        updated_at: now_ms,
    };
    let (stored, created, wake) =
        crate::transaction!(db, |tx| upsert_in(tx, core, row.clone(), now).await)?;
    core.announce(wake).await;
    Ok((from_row(stored)?, created))
}

/// The body of [`upsert`], inside its transaction: the stored row, whether it was created, and
/// the earliest wake-up the changed enrollments now want.
async fn upsert_in(
    tx: &mut Tx,
    core: &Core,
    row: ContactRow,
    now: DateTime<Utc>,
) -> Result<(ContactRow, bool, Committed), StoreError> {
    if tx.insert_contact(&row).await? {
        // A new contact has no enrollments yet.
        return Ok((row, true, Committed::default()));
    }
    let current = tx
        .lock_contact(&row.account_id, &row.id)
        .await?
        .ok_or_else(|| {
            StoreError::Corrupt(format!("contact {}: vanished during upsert", row.id))
        })?;
    if current.same_fields(&row) {
        return Ok((current, false, Committed::default()));
    }
    tx.update_contact(&row).await?;
    let stored = ContactRow {
        created_at: current.created_at,
        opted_out: current.opted_out,
        ..row
    };
    let wake = tell_enrollments(tx, core, &stored, now).await?;
    Ok((stored, false, wake))
}

/// Delivers the contact as it now is to each of its active or paused enrollments whose view of
/// it differs, locked in id order (two upserts of overlapping contacts cannot deadlock).
async fn tell_enrollments(
    tx: &mut Tx,
    core: &Core,
    contact: &ContactRow,
    now: DateTime<Utc>,
) -> Result<Committed, StoreError> {
    let mut ids: Vec<String> = tx
        .live_enrollments_of(&contact.account_id, &[contact.id.as_str()])
        .await?
        .into_iter()
        .map(|(_, _, id)| id)
        .collect();
    ids.sort();
    let view = contact.view();
    let mut rows = Vec::with_capacity(ids.len());
    for id in &ids {
        let Some(row) = tx.lock_enrollment(Some(&contact.account_id), id).await? else {
            continue;
        };
        // Finished meanwhile, or it already sees the contact this way.
        if LIVE.contains(&row.status.as_str()) && row.engine_state()?.contact != view {
            rows.push(row);
        }
    }
    if rows.is_empty() {
        return Ok(Committed::default());
    }
    let context = StepContext::load(tx, &core.flows, &rows, &core.quiet_hours).await?;
    let mut writes = Writes::default();
    for row in rows {
        apply(
            &mut writes,
            &core.flows,
            &context,
            row,
            Input::ContactChanged(view.clone()),
            now,
        )?;
    }
    tx.write_all(&writes).await?;
    Ok(writes.committed())
}

pub async fn get(core: &Core, account_id: &str, id: &str) -> Result<Contact, ServiceError> {
    let db = &core.db;
    let mut problems = Violations::default();
    problems.check(fields::parse_id("id", id));
    problems.finish()?;
    match store::contacts::get(db, account_id, id).await? {
        Some(row) => Ok(from_row(row)?),
        None => Err(not_found(id)),
    }
}

/// Adds `channels` to the contact's opt-outs (idempotent).
pub async fn opt_out(
    core: &Core,
    account_id: &str,
    id: &str,
    channels: &[String],
    now: DateTime<Utc>,
) -> Result<Contact, ServiceError> {
    change_opt_outs(core, account_id, id, channels, true, now).await
}

/// Lifts the contact's opt-out of `channels` (`ContactService.LiftOptOut`): a rep who judges
/// that an unsubscribe in words was misread, or a CRM that learned the person opted back in.
/// Nothing is re-enrolled; its running enrollments may send on the channels again. SMS is
/// refused: only the contact's own `START` ends an SMS opt-out.
pub async fn lift_opt_out(
    core: &Core,
    account_id: &str,
    id: &str,
    channels: &[String],
    now: DateTime<Utc>,
) -> Result<Contact, ServiceError> {
    change_opt_outs(core, account_id, id, channels, false, now).await
}

/// [`opt_out`] (`add`) or [`lift_opt_out`]: checks every field, then merges the channels in.
async fn change_opt_outs(
    core: &Core,
    account_id: &str,
    id: &str,
    channels: &[String],
    add: bool,
    now: DateTime<Utc>,
) -> Result<Contact, ServiceError> {
    let db = &core.db;
    let mut problems = Violations::default();
    problems.check(fields::parse_id("contact_id", id));
    if channels.is_empty() {
        problems.push(super::Violation::new(
            "channels",
            crate::code::Code::BadSchema,
            "name at least one channel: `email`, `sms`, `call` or `linkedin`",
        ));
    }
    let parsed: Vec<Channel> = channels
        .iter()
        .enumerate()
        .filter_map(|(i, c)| problems.check(fields::parse_channel(&format!("channels[{i}]"), c)))
        .collect();
    if !add {
        if let Some(i) = parsed.iter().position(|c| *c == Channel::Sms) {
            problems.push(super::Violation::new(
                format!("channels[{i}]"),
                crate::code::Code::BadSchema,
                "an SMS opt-out ends only with the contact's own `START` (carriers require the \
                 person to opt back in): lift `email`, `call` or `linkedin` here",
            ));
        }
    }
    problems.finish()?;

    // The contact is locked while the opt-outs merge, so concurrent opt-outs never lose a
    // channel, and its running enrollments learn of them in the same transaction (an SMS
    // already planned is then skipped, not sent).
    let stored = crate::transaction!(db, |tx| {
        opt_out_in(tx, core, account_id, id, &parsed, add, now).await
    })?;
    match stored {
        Some((row, wake)) => {
            core.announce(wake).await;
            Ok(from_row(row)?)
        }
        None => Err(not_found(id)),
    }
}

/// Ends the contact's opt-out of `channel` (SMS `START`, docs/signals.md, "Inbox signals"): nothing is re-enrolled,
/// its running enrollments may send on the channel again. `NotFound` without such a contact.
pub async fn opt_in(
    core: &Core,
    account_id: &str,
    id: &str,
    channel: Channel,
    now: DateTime<Utc>,
) -> Result<(), ServiceError> {
    let stored = crate::transaction!(core.db, |tx| {
        opt_out_in(tx, core, account_id, id, &[channel], false, now).await
    })?;
    match stored {
        Some((_, wake)) => {
            core.announce(wake).await;
            Ok(())
        }
        None => Err(not_found(id)),
    }
}

/// The body of [`opt_out`] (`add`) and [`opt_in`], inside its transaction: the stored row and
/// the earliest wake-up, or `None` when there is no such contact.
async fn opt_out_in(
    tx: &mut Tx,
    core: &Core,
    account_id: &str,
    id: &str,
    channels: &[Channel],
    add: bool,
    now: DateTime<Utc>,
) -> Result<Option<(ContactRow, Committed)>, StoreError> {
    let Some(current) = tx.lock_contact(account_id, id).await? else {
        return Ok(None);
    };
    let mut all = from_row(current.clone())?.opted_out;
    if add {
        all.extend(channels.iter().copied());
    } else {
        all.retain(|c| !channels.contains(c));
    }
    all.sort();
    all.dedup();
    let json = channels_json(&all);
    if json == current.opted_out {
        return Ok(Some((current, Committed::default())));
    }
    let now_ms = to_millis(now);
    tx.set_opted_out(account_id, id, &json, now_ms).await?;
    let stored = ContactRow {
        opted_out: json,
        updated_at: now_ms,
        ..current
    };
    let wake = tell_enrollments(tx, core, &stored, now).await?;
    Ok(Some((stored, wake)))
}

fn not_found(id: &str) -> ServiceError {
    ServiceError::NotFound {
        what: "contact",
        id: id.to_string(),
    }
}

/// `None` for an empty field, otherwise the checked value (or `None` with the problem noted).
fn optional(text: &str, check: impl FnOnce(&str) -> Option<String>) -> Option<String> {
    if text.trim().is_empty() {
        None
    } else {
        check(text)
    }
}

fn channels_json(channels: &[Channel]) -> String {
    Value::Array(
        channels
            .iter()
            .map(|c| Value::String(c.as_str().to_string()))
            .collect(),
    )
    .to_string()
}

fn from_row(row: ContactRow) -> Result<Contact, StoreError> {
    let corrupt = |what: &str| StoreError::Corrupt(format!("contact {}: {what}", row.id));
    let attributes = match serde_json::from_str(&row.attributes) {
        Ok(Value::Object(map)) => map,
        _ => return Err(corrupt("attributes are not a JSON object")),
    };
    let names: Vec<String> =
        serde_json::from_str(&row.opted_out).map_err(|_| corrupt("bad opted_out"))?;
    let opted_out = names
        .iter()
        .map(|n| fields::parse_channel("opted_out", n).map_err(|_| corrupt("unknown channel")))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Contact {
        id: row.id,
        email: row.email,
        phone: row.phone,
        tz: row.tz,
        country: row.country,
        attributes,
        opted_out,
        created_at: from_millis(row.created_at),
        updated_at: from_millis(row.updated_at),
    })
}
