//! Reads: one enrollment, a filtered page of them, a page of one's journey (SPEC §5.8).

use super::{check_scope, page_size, Enrollment};
use crate::auth::Principal;
use crate::clock::from_millis;
use crate::code::Code;
use crate::engine::Status;
use crate::quote::quote;
use crate::runtime::Core;
use crate::service::fields::{self, Limit};
use crate::service::ids::EnrollmentId;
use crate::service::{next_page_token, ServiceError, Violation, Violations};
use crate::store;
use chrono::{DateTime, Utc};

/// One journey entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// Its place in the enrollment's journey, from 1.
    pub seq: i64,
    /// When it happened.
    pub at: DateTime<Utc>,
    /// What happened: the entry's `event`, or the effect's `kind`.
    pub kind: String,
    /// The whole entry, a JSON object.
    pub detail: serde_json::Map<String, serde_json::Value>,
}

/// The enrollment `enrollment_id` of the caller's account, if its token's scope covers it.
pub async fn get(
    core: &Core,
    who: &Principal,
    enrollment_id: &EnrollmentId,
) -> Result<Enrollment, ServiceError> {
    fields::parse_id("id", enrollment_id.as_str()).map_err(invalid)?;
    check_scope(who, enrollment_id)?;
    let row = store::enrollments::get(&core.db, &who.account_id, enrollment_id.as_str())
        .await?
        .ok_or_else(|| ServiceError::NotFound {
            what: "enrollment",
            id: enrollment_id.to_string(),
        })?;
    Enrollment::from_row(row)
}

/// Filters of `ListEnrollments`; empty means any.
#[derive(Debug, Clone, Default)]
pub struct ListFilter {
    /// The flow's id or name.
    pub flow_id: String,
    /// The contact's id.
    pub contact_id: String,
    /// `active`, `paused`, `completed`, `exited` or `failed`.
    pub status: String,
}

/// A page of enrollments by id, and the next page's token (the last id).
pub async fn list(
    core: &Core,
    account_id: &str,
    filter: ListFilter,
    size: i32,
    token: &str,
) -> Result<(Vec<Enrollment>, String), ServiceError> {
    let size = page_size(size)?;
    let mut problems = Violations::default();
    problems.check(fields::check_text("flow_id", &filter.flow_id, Limit::Name));
    problems.check(fields::check_text(
        "contact_id",
        &filter.contact_id,
        Limit::Id,
    ));
    problems.check(fields::check_text("status", &filter.status, Limit::Name));
    problems.check(fields::check_text(
        "page.page_token",
        token,
        Limit::PageToken,
    ));
    problems.finish()?;
    let status = if filter.status.is_empty() {
        None
    } else {
        Some(Status::parse(&filter.status).ok_or_else(|| {
            ServiceError::Invalid(vec![Violation::new(
                "status",
                Code::BadSchema,
                format!(
                    "{} is not a status; use active, paused, completed, exited or failed",
                    quote(&filter.status)
                ),
            )])
        })?)
    };
    // A flow named by name: its id.
    let flow_id = if filter.flow_id.is_empty() {
        None
    } else {
        Some(
            match store::flows::get(&core.db, account_id, &filter.flow_id, 0).await? {
                Some(f) => f.flow.id,
                None => filter.flow_id.clone(),
            },
        )
    };
    let query = store::enrollments::ListFilter {
        flow_id: flow_id.as_deref(),
        contact_id: Some(filter.contact_id.as_str()).filter(|c| !c.is_empty()),
        status,
        after_id: Some(token).filter(|t| !t.is_empty()),
    };
    let mut rows = store::enrollments::list(&core.db, account_id, &query, size + 1).await?;
    let next = next_page_token(&mut rows, size, |r| r.id.clone());
    let list = rows
        .into_iter()
        .map(Enrollment::from_row)
        .collect::<Result<Vec<_>, _>>()?;
    Ok((list, next))
}

/// A page of the journey in order; the token is the last seq returned.
pub async fn journey_page(
    core: &Core,
    who: &Principal,
    enrollment_id: &EnrollmentId,
    size: i32,
    token: &str,
) -> Result<(Vec<Entry>, String), ServiceError> {
    let mut problems = Violations::default();
    problems.check(fields::parse_id("enrollment_id", enrollment_id.as_str()));
    problems.check(fields::check_text(
        "page.page_token",
        token,
        Limit::PageToken,
    ));
    problems.finish()?;
    // Also checks the id, the scope and that the enrollment is the account's.
    get(core, who, enrollment_id).await?;
    let size = page_size(size)?;
    let after: i64 = if token.is_empty() {
        0
    } else {
        token.parse().map_err(|_| {
            ServiceError::Invalid(vec![Violation::new(
                "page.page_token",
                Code::BadSchema,
                format!(
                    "{} is not a page token of this journey; pass next_page_token back unchanged",
                    quote(token)
                ),
            )])
        })?
    };
    let mut rows =
        store::enrollments::journey(&core.db, enrollment_id.as_str(), after, size + 1).await?;
    let next = next_page_token(&mut rows, size, |r| r.seq.to_string());
    let entries = rows
        .into_iter()
        .map(|r| {
            // The engine writes every entry as a JSON object; anything else is corruption.
            let detail = match serde_json::from_str(&r.detail) {
                Ok(serde_json::Value::Object(map)) => map,
                _ => {
                    return Err(store::StoreError::Corrupt(format!(
                        "journey entry {} of enrollment {}: detail is not a JSON object",
                        r.seq, r.enrollment_id
                    )))
                }
            };
            Ok(Entry {
                seq: r.seq,
                at: from_millis(r.at),
                kind: r.kind,
                detail,
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok((entries, next))
}

fn invalid(v: Violation) -> ServiceError {
    ServiceError::Invalid(vec![v])
}
