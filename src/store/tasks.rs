//! Tasks (`call`, `linkedin_connect`, `linkedin_message` steps): reads. The rows are written by
//! [`Tx::write_all`](super::Tx::write_all) with the step that opened or closed them.

use super::contacts::ContactRow;
pub use super::enrollments::TaskRow;
use super::schema::{contacts, enrollments, tasks};
use super::{Db, StoreError, TaskStatus};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

/// Filters of [`list`]; `None` means any.
#[derive(Debug, Clone, Default)]
pub struct ListFilter<'a> {
    /// The status.
    pub status: Option<TaskStatus>,
    /// The enrollment's id.
    pub enrollment_id: Option<&'a str>,
    /// Ids after this one (keyset pagination).
    pub after_id: Option<&'a str>,
}

/// Up to `limit` of the account's tasks by id, filtered.
pub async fn list(
    db: &Db,
    account_id: &str,
    filter: &ListFilter<'_>,
    limit: i64,
) -> Result<Vec<TaskRow>, StoreError> {
    let conn = db.conn().await?;
    Ok(with_conn!(conn, c => {
        let mut q = tasks::table
            .filter(tasks::account_id.eq(account_id))
            .order(tasks::id.asc())
            .limit(limit)
            .select(TaskRow::as_select())
            .into_boxed();
        if let Some(status) = filter.status {
            q = q.filter(tasks::status.eq(status.as_str()));
        }
        if let Some(enrollment) = filter.enrollment_id {
            q = q.filter(tasks::enrollment_id.eq(enrollment));
        }
        if let Some(after) = filter.after_id {
            q = q.filter(tasks::id.gt(after));
        }
        q.load(c).await
    })?)
}

/// The account's task `id`.
pub async fn get(db: &Db, account_id: &str, id: &str) -> Result<Option<TaskRow>, StoreError> {
    let conn = db.conn().await?;
    Ok(with_conn!(conn, c => tasks::table
        .filter(tasks::account_id.eq(account_id))
        .filter(tasks::id.eq(id))
        .select(TaskRow::as_select())
        .first(c)
        .await
        .optional())?)
}

/// The contacts (as they are now) of the account's enrollments `enrollment_ids`, by
/// enrollment id.
pub async fn contacts_of(
    db: &Db,
    account_id: &str,
    enrollment_ids: &[&str],
) -> Result<Vec<(String, ContactRow)>, StoreError> {
    if enrollment_ids.is_empty() {
        return Ok(Vec::new());
    }
    let conn = db.conn().await?;
    with_conn!(conn, c => {
        let pairs: Vec<(String, String)> = enrollments::table
            .filter(enrollments::account_id.eq(account_id))
            .filter(enrollments::id.eq_any(enrollment_ids))
            .select((enrollments::id, enrollments::contact_id))
            .load(c)
            .await?;
        let ids: Vec<&str> = pairs.iter().map(|(_, contact)| contact.as_str()).collect();
        let rows: Vec<ContactRow> = contacts::table
            .filter(contacts::account_id.eq(account_id))
            .filter(contacts::id.eq_any(&ids))
            .select(ContactRow::as_select())
            .load(c)
            .await?;
        Ok(pairs
            .into_iter()
            .filter_map(|(enrollment, contact)| {
                rows.iter()
                    .find(|r| r.id == contact)
                    .map(|r| (enrollment, r.clone()))
            })
            .collect())
    })
}

/// The open tasks of `kind` (`call`, …) of the account's enrollments of `contact_ids`, oldest
/// first: what a provider's call status completes when it names no task.
pub async fn open_of_contacts(
    db: &Db,
    account_id: &str,
    contact_ids: &[String],
    kind: &str,
) -> Result<Vec<TaskRow>, StoreError> {
    if contact_ids.is_empty() {
        return Ok(Vec::new());
    }
    let conn = db.conn().await?;
    Ok(with_conn!(conn, c => tasks::table
        .filter(tasks::account_id.eq(account_id))
        .filter(tasks::status.eq(TaskStatus::Open.as_str()))
        .filter(tasks::kind.eq(kind))
        .filter(
            tasks::enrollment_id.eq_any(
                enrollments::table
                    .filter(enrollments::account_id.eq(account_id))
                    .filter(enrollments::contact_id.eq_any(contact_ids))
                    .select(enrollments::id),
            ),
        )
        .order((tasks::created_at.asc(), tasks::id.asc()))
        .select(TaskRow::as_select())
        .load(c)
        .await)?)
}
