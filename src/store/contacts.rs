//! Contacts, keyed by (account, the caller's id).

use super::schema::contacts;
use super::{Db, StoreError};
use crate::with_conn;
use diesel::prelude::*;
use diesel_async::{AsyncConnection, RunQueryDsl};

#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = contacts)]
pub struct ContactRow {
    pub account_id: String,
    pub id: String,
    pub email: Option<String>,
    /// E.164.
    pub phone: Option<String>,
    pub tz: Option<String>,
    /// A JSON object.
    pub attributes: String,
    /// A sorted JSON array of channel names.
    pub opted_out: String,
    pub created_at: i64,
    pub updated_at: i64,
}

pub async fn get(db: &Db, account_id: &str, id: &str) -> Result<Option<ContactRow>, StoreError> {
    let conn = db.conn().await?;
    Ok(with_conn!(conn, c => contacts::table
        .find((account_id, id))
        .select(ContactRow::as_select())
        .first(c)
        .await
        .optional())?)
}

/// Inserts the contact, or replaces its email, phone, zone and attributes when it exists
/// (keeping `created_at` and the opt-outs). Returns the stored row and whether it was created.
pub async fn upsert(db: &Db, row: &ContactRow) -> Result<(ContactRow, bool), StoreError> {
    let conn = db.conn().await?;
    Ok(with_conn!(conn, c => c
        .transaction(async |c| {
            let inserted = diesel::insert_into(contacts::table)
                .values(row)
                .on_conflict((contacts::account_id, contacts::id))
                .do_nothing()
                .execute(c)
                .await?;
            let key = contacts::table.find((&row.account_id, &row.id));
            if inserted == 0 {
                diesel::update(key)
                    .set((
                        contacts::email.eq(&row.email),
                        contacts::phone.eq(&row.phone),
                        contacts::tz.eq(&row.tz),
                        contacts::attributes.eq(&row.attributes),
                        contacts::updated_at.eq(row.updated_at),
                    ))
                    .execute(c)
                    .await?;
            }
            let stored = key.select(ContactRow::as_select()).first(c).await?;
            Ok::<_, diesel::result::Error>((stored, inserted == 1))
        })
        .await)?)
}

/// Replaces the contact's opt-out list. Returns the stored row, or `None` for an unknown
/// contact.
pub async fn set_opted_out(
    db: &Db,
    account_id: &str,
    id: &str,
    opted_out_json: &str,
    now_ms: i64,
) -> Result<Option<ContactRow>, StoreError> {
    let conn = db.conn().await?;
    Ok(with_conn!(conn, c => c
        .transaction(async |c| {
            let key = contacts::table.find((account_id, id));
            let updated = diesel::update(key)
                .set((
                    contacts::opted_out.eq(opted_out_json),
                    contacts::updated_at.eq(now_ms),
                ))
                .execute(c)
                .await?;
            if updated == 0 {
                return Ok(None);
            }
            key.select(ContactRow::as_select())
                .first(c)
                .await
                .map(Some)
        })
        .await)?)
}
