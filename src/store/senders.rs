//! Senders: the rep or mailbox outreach goes out as, keyed by (account, the caller's id).

use super::schema::senders;
use super::{Db, StoreError};
use diesel::prelude::*;
use diesel_async::{AsyncConnection, RunQueryDsl};

#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = senders)]
pub struct SenderRow {
    pub account_id: String,
    pub id: String,
    pub email: Option<String>,
    pub tz: String,
    pub calendar: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
    /// The validated `caps` document (docs/capacity.md) as JSON; `None`: no caps.
    pub caps: Option<String>,
}

pub async fn get(db: &Db, account_id: &str, id: &str) -> Result<Option<SenderRow>, StoreError> {
    let conn = db.conn().await?;
    Ok(with_conn!(conn, c => senders::table
        .find((account_id, id))
        .select(SenderRow::as_select())
        .first(c)
        .await
        .optional())?)
}

/// Inserts the sender or replaces its fields (keeping `created_at`). Returns the stored row and
/// whether it was created.
pub async fn upsert(db: &Db, row: &SenderRow) -> Result<(SenderRow, bool), StoreError> {
    let conn = db.conn().await?;
    Ok(with_conn!(conn, c => c
        .transaction(async |c| {
            let inserted = diesel::insert_into(senders::table)
                .values(row)
                .on_conflict((senders::account_id, senders::id))
                .do_nothing()
                .execute(c)
                .await?;
            let key = senders::table.find((&row.account_id, &row.id));
            if inserted == 0 {
                diesel::update(key)
                    .set((
                        senders::email.eq(&row.email),
                        senders::tz.eq(&row.tz),
                        senders::calendar.eq(&row.calendar),
                        senders::updated_at.eq(row.updated_at),
                        senders::caps.eq(&row.caps),
                    ))
                    .execute(c)
                    .await?;
            }
            let stored = key.select(SenderRow::as_select()).first(c).await?;
            Ok::<_, diesel::result::Error>((stored, inserted == 1))
        })
        .await)?)
}
