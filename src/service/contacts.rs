//! Contacts: upsert with every field checked, get, opt out.

use super::fields::{self, Channel};
use super::{ServiceError, Violations};
use crate::clock::{from_millis, to_millis};
use crate::runtime::Core;
use crate::store::{self, contacts::ContactRow, contacts::OptOutUpdate, StoreError};
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
    pub attributes: Map<String, Value>,
    /// Sorted.
    pub opted_out: Vec<Channel>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// Creates or replaces a contact; returns it and whether it was created. Every field is checked
/// first, and every problem is reported at once; nothing is stored when one is found.
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
    problems.finish()?;

    let now_ms = to_millis(now);
    let row = ContactRow {
        account_id: account_id.to_string(),
        id,
        email,
        phone,
        tz,
        attributes: Value::Object(input.attributes).to_string(),
        opted_out: "[]".to_string(),
        created_at: now_ms,
        updated_at: now_ms,
    };
    let (stored, created) = store::contacts::upsert(db, &row).await?;
    Ok((from_row(stored)?, created))
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
    problems.finish()?;

    // Read, merge, compare-and-set; a concurrent opt-out makes the write miss, so merge again.
    for _ in 0..OPT_OUT_ATTEMPTS {
        let current = store::contacts::get(db, account_id, id)
            .await?
            .ok_or_else(|| not_found(id))?;
        let mut all = from_row(current.clone())?.opted_out;
        all.extend(parsed.iter().copied());
        all.sort();
        all.dedup();
        let json = channels_json(&all);
        match store::contacts::set_opted_out_if(
            db,
            account_id,
            id,
            &current.opted_out,
            &json,
            to_millis(now),
        )
        .await?
        {
            OptOutUpdate::Written(row) => return Ok(from_row(row)?),
            OptOutUpdate::Missing => return Err(not_found(id)),
            OptOutUpdate::Changed => continue,
        }
    }
    Err(ServiceError::Store(StoreError::Contention(format!(
        "contact {id}: opt-outs kept changing during {OPT_OUT_ATTEMPTS} attempts"
    ))))
}

/// How often an opt-out re-reads after losing a race before giving up.
const OPT_OUT_ATTEMPTS: usize = 8;

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
        attributes,
        opted_out,
        created_at: from_millis(row.created_at),
        updated_at: from_millis(row.updated_at),
    })
}
