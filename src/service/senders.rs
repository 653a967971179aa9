//! Senders: upsert (optionally as the account's default) and get.

use super::fields;
use super::{ServiceError, Violation, Violations};
use crate::capacity::Caps;
use crate::clock::{from_millis, to_millis};
use crate::code::Code;
use crate::runtime::Core;
use crate::store::{self, senders::SenderRow};
use chrono::{DateTime, Utc};

/// A sender as the API sends it in (before checking).
#[derive(Debug, Clone, Default)]
pub struct SenderInput {
    /// Empty means "assign one".
    pub id: String,
    pub email: String,
    /// Required.
    pub tz: String,
    pub calendar: String,
    /// The docs/capacity.md `caps` document; `None` (or `{}`): no caps.
    pub caps: Option<serde_json::Value>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sender {
    pub id: String,
    pub email: Option<String>,
    pub tz: String,
    pub calendar: Option<String>,
    pub is_default: bool,
    /// The stored `caps` document (docs/capacity.md), when the sender has caps.
    pub caps: Option<serde_json::Value>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

pub async fn upsert(
    core: &Core,
    account_id: &str,
    input: SenderInput,
    make_default: bool,
    now: DateTime<Utc>,
) -> Result<(Sender, bool), ServiceError> {
    let db = &core.db;
    let mut problems = Violations::default();
    let id = if input.id.is_empty() {
        store::new_id("sd")
    } else {
        problems
            .check(fields::parse_id("sender.id", &input.id))
            .unwrap_or_default()
    };
    let email = if input.email.trim().is_empty() {
        None
    } else {
        problems.check(fields::parse_email("sender.email", &input.email))
    };
    let tz = problems
        .check(fields::parse_tz("sender.tz", &input.tz))
        .unwrap_or_default();
    problems.check(fields::check_text(
        "sender.calendar",
        &input.calendar,
        fields::Limit::Name,
    ));
    let calendar = Some(input.calendar.trim().to_string()).filter(|c| !c.is_empty());
    let caps = match &input.caps {
        None => None,
        Some(doc) => match Caps::parse(doc) {
            Ok(c) if c.is_empty() => None,
            Ok(_) => Some(doc.to_string()),
            Err(found) => {
                for p in found {
                    let field = format!("sender.caps{}", p.path.replace('/', "."));
                    problems.push(Violation::new(field, Code::BadSchema, p.message));
                }
                None
            }
        },
    };
    problems.finish()?;

    let now_ms = to_millis(now);
    let row = SenderRow {
        account_id: account_id.to_string(),
        id,
        email,
        tz,
        calendar,
        created_at: now_ms,
        updated_at: now_ms,
        caps,
    };
    let (stored, created) = store::senders::upsert(db, &row).await?;
    if make_default {
        store::accounts::set_default_sender(db, account_id, &stored.id).await?;
    }
    let default_id = default_sender_id(core, account_id).await?;
    Ok((from_row(stored, default_id.as_deref()), created))
}

/// One sender, or the account's default when `id` is empty.
pub async fn get(core: &Core, account_id: &str, id: &str) -> Result<Sender, ServiceError> {
    let db = &core.db;
    let default_id = default_sender_id(core, account_id).await?;
    let wanted = if id.is_empty() {
        default_id.clone().ok_or_else(|| ServiceError::NotFound {
            what: "default sender",
            id: account_id.to_string(),
        })?
    } else {
        let mut problems = Violations::default();
        problems.check(fields::parse_id("id", id));
        problems.finish()?;
        id.to_string()
    };
    match store::senders::get(db, account_id, &wanted).await? {
        Some(row) => Ok(from_row(row, default_id.as_deref())),
        None => Err(ServiceError::NotFound {
            what: "sender",
            id: wanted,
        }),
    }
}

async fn default_sender_id(core: &Core, account_id: &str) -> Result<Option<String>, ServiceError> {
    let db = &core.db;
    Ok(store::accounts::find(db, account_id)
        .await?
        .and_then(|a| a.default_sender_id))
}

fn from_row(row: SenderRow, default_id: Option<&str>) -> Sender {
    Sender {
        is_default: default_id == Some(row.id.as_str()),
        id: row.id,
        email: row.email,
        tz: row.tz,
        calendar: row.calendar,
        caps: row
            .caps
            .as_deref()
            .and_then(|c| serde_json::from_str(c).ok()),
        created_at: from_millis(row.created_at),
        updated_at: from_millis(row.updated_at),
    }
}
