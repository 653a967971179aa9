//! Reads: one enrollment, a filtered page of them, a page of one's journey, a page of a
//! contact's journey across its enrollments (docs/service.md, "The journey").

use super::{check_scope, page_size, Enrollment};
use crate::auth::{Principal, Scope};
use crate::clock::from_millis;
use crate::code::Code;
use crate::engine::sentence::{self, ShownZone};
use crate::engine::Status;
use crate::quote::quote;
use crate::runtime::Core;
use crate::service::fields::{self, Limit};
use crate::service::ids::EnrollmentId;
use crate::service::{next_page_token, ServiceError, Violation, Violations};
use crate::store;
use chrono::{DateTime, Utc};
use std::collections::BTreeMap;

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
    /// The entry in one sentence, its times in the contact's zone ([`crate::engine::sentence`]).
    pub summary: String,
}

impl Entry {
    /// A stored entry of `enrollment_id`, its sentence's times in `zone`.
    pub(super) fn read(
        enrollment_id: &str,
        seq: i64,
        at: i64,
        kind: String,
        text: &str,
        zone: &ShownZone,
    ) -> Result<Entry, store::StoreError> {
        let detail = entry_detail(seq, enrollment_id, text)?;
        let at = from_millis(at);
        Ok(Entry {
            summary: sentence::stored_sentence(&kind, &detail, at, zone),
            seq,
            at,
            kind,
            detail,
        })
    }
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

/// How many enrollments are in each status, by flow id (`flow` id or name and `contact` narrow
/// it, as in [`list`]).
pub async fn status_counts(
    core: &Core,
    account_id: &str,
    flow: &str,
    contact: &str,
) -> Result<BTreeMap<String, BTreeMap<Status, i64>>, ServiceError> {
    let flow_id = if flow.is_empty() {
        None
    } else {
        Some(
            match store::flows::get(&core.db, account_id, flow, 0).await? {
                Some(f) => f.flow.id,
                None => flow.to_string(),
            },
        )
    };
    let rows = store::enrollments::status_counts(
        &core.db,
        account_id,
        flow_id.as_deref(),
        Some(contact).filter(|c| !c.is_empty()),
    )
    .await?;
    let mut out: BTreeMap<String, BTreeMap<Status, i64>> = BTreeMap::new();
    for (flow_id, status, n) in rows {
        if let Some(status) = Status::parse(&status) {
            *out.entry(flow_id).or_default().entry(status).or_default() += n;
        }
    }
    Ok(out)
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
    // Also checks the id, the scope and that the enrollment is the account's; its state has
    // the contact's zone the sentences are written in.
    let zone = ShownZone::of_state(&get(core, who, enrollment_id).await?.state);
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
        .map(|r| Entry::read(&r.enrollment_id, r.seq, r.at, r.kind, &r.detail, &zone))
        .collect::<Result<Vec<_>, store::StoreError>>()?;
    Ok((entries, next))
}

/// A stored entry's detail. The engine writes every entry as a JSON object; anything else is
/// corruption.
fn entry_detail(
    seq: i64,
    enrollment_id: &str,
    text: &str,
) -> Result<serde_json::Map<String, serde_json::Value>, store::StoreError> {
    match serde_json::from_str(text) {
        Ok(serde_json::Value::Object(map)) => Ok(map),
        _ => Err(store::StoreError::Corrupt(format!(
            "journey entry {seq} of enrollment {enrollment_id}: detail is not a JSON object"
        ))),
    }
}

fn invalid(v: Violation) -> ServiceError {
    ServiceError::Invalid(vec![v])
}

/// The longest page token accepted (docs/service.md, "Errors").
pub const MAX_PAGE_TOKEN_LEN: usize = 512;

/// One entry of a contact's journey: the entry and the enrollment it belongs to.
#[derive(Debug, Clone, PartialEq)]
pub struct ContactEntry {
    /// The enrollment whose journey it is.
    pub enrollment_id: EnrollmentId,
    /// That enrollment's flow (its id) and version.
    pub flow_id: String,
    pub flow_version: i32,
    /// The entry itself, as `GetJourney` shows it.
    pub entry: Entry,
}

/// A page of the contact's journey across its enrollments, in the order the entries were
/// written (`at`, then enrollment id, then seq). The token is `<at>.<seq>.<enrollment id>` of
/// the last entry returned. An enrollment-scoped token sees only its own enrollment's entries,
/// and only when that enrollment is the contact's.
pub async fn contact_journey_page(
    core: &Core,
    who: &Principal,
    contact_id: &str,
    size: i32,
    token: &str,
) -> Result<(Vec<ContactEntry>, String), ServiceError> {
    let contact_id = crate::service::fields::parse_id("contact_id", contact_id)
        .map_err(|v| ServiceError::Invalid(vec![v]))?;
    let size = page_size(size)?;
    let after = parse_contact_token(token)?;
    let Some(contact) = store::contacts::get(&core.db, &who.account_id, &contact_id).await? else {
        return Err(ServiceError::NotFound {
            what: "contact",
            id: contact_id,
        });
    };
    let only = match &who.scope {
        Scope::Full => None,
        Scope::Admin => {
            return Err(ServiceError::Forbidden(
                "an admin token manages accounts; read a journey with a full account token".into(),
            ))
        }
        Scope::Enrollment(own) => {
            let mine = store::enrollments::get(&core.db, &who.account_id, own).await?;
            if mine.is_none_or(|e| e.contact_id != contact_id) {
                return Err(ServiceError::Forbidden(format!(
                    "this token is scoped to enrollment `{own}`, which is not contact \
                     `{contact_id}`'s; use a full account token"
                )));
            }
            Some(own.as_str())
        }
    };
    let mut rows = store::enrollments::contact_journey(
        &core.db,
        &who.account_id,
        &contact_id,
        only,
        after.as_ref(),
        size + 1,
    )
    .await?;
    let next = next_page_token(&mut rows, size, |r| {
        format!("{}.{}.{}", r.at, r.seq, r.enrollment_id)
    });
    // The sentences' zone: the contact's, read above; the sender's (per enrollment, read with
    // the page) only when the contact has none.
    let zone = |sender_tz: Option<&str>| {
        ShownZone::of(contact.tz.as_deref(), contact.phone.as_deref(), sender_tz)
    };
    Ok((
        rows.into_iter()
            .map(|r| {
                Ok(ContactEntry {
                    entry: Entry::read(
                        &r.enrollment_id,
                        r.seq,
                        r.at,
                        r.kind,
                        &r.detail,
                        &zone(r.sender_tz.as_deref()),
                    )?,
                    enrollment_id: r.enrollment_id.into(),
                    flow_id: r.flow_id,
                    flow_version: r.flow_version,
                })
            })
            .collect::<Result<Vec<_>, store::StoreError>>()?,
        next,
    ))
}

/// The key a `ListJourney` page token names; `None` for the first page.
fn parse_contact_token(
    token: &str,
) -> Result<Option<store::enrollments::ContactJourneyKey>, ServiceError> {
    if token.is_empty() {
        return Ok(None);
    }
    let bad = |why: &str| {
        ServiceError::Invalid(vec![Violation::new(
            "page.page_token",
            Code::BadSchema,
            format!("{why}; pass the previous page's next_page_token back unchanged (empty for the first page)"),
        )])
    };
    if token.len() > MAX_PAGE_TOKEN_LEN {
        return Err(bad(&format!(
            "the page token is {} bytes long; at most {MAX_PAGE_TOKEN_LEN} are allowed",
            token.len()
        )));
    }
    let mut parts = token.splitn(3, '.');
    let (Some(at), Some(seq), Some(enrollment_id)) = (parts.next(), parts.next(), parts.next())
    else {
        return Err(bad("this is not a page token of a contact's journey"));
    };
    match (at.parse(), seq.parse()) {
        (Ok(at), Ok(seq))
            if !enrollment_id.is_empty()
                && !enrollment_id
                    .chars()
                    .any(|c| c.is_control() || c.is_whitespace()) =>
        {
            Ok(Some(store::enrollments::ContactJourneyKey {
                at,
                enrollment_id: enrollment_id.to_string(),
                seq,
            }))
        }
        _ => Err(bad("this is not a page token of a contact's journey")),
    }
}
