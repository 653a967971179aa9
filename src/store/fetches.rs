//! The fetch outbox (docs/flows.md, "fetch"): an attempt is a row written with the transition that records
//! it; a worker leases due rows, makes the request outside any transaction, and applies the
//! answer in a transaction that also marks the row done. A lease that runs out (the worker
//! crashed mid-request) lets the row be claimed again: the same attempt, the same key.

use super::schema::fetch_requests;
use super::{Db, StoreError, Tx};
use diesel::prelude::*;
use diesel::QueryableByName;
use diesel_async::RunQueryDsl;

/// One attempt to send.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, QueryableByName, Selectable, Insertable)]
#[diesel(table_name = fetch_requests)]
pub struct FetchRow {
    /// The `Idempotency-Key`: `{enrollment}:{run}:{attempt}`.
    pub id: String,
    pub account_id: String,
    pub enrollment_id: String,
    pub run: i64,
    pub attempt: i32,
    /// The [`crate::engine::FetchRequest`] as JSON.
    pub request: String,
    /// `pending` or `done`.
    pub status: String,
    /// Until when a worker holds it (nudge's clock, epoch ms).
    pub lease_until: Option<i64>,
    pub created_at: i64,
}

/// Leases up to `max` pending rows whose lease is free at `now_ms`, until `lease_until`.
/// PostgreSQL skips rows another replica is claiming.
pub async fn claim(
    db: &Db,
    now_ms: i64,
    lease_until: i64,
    max: i64,
) -> Result<Vec<FetchRow>, StoreError> {
    use diesel::sql_types::BigInt;
    let lock = match db {
        Db::Postgres(_) => " FOR UPDATE SKIP LOCKED",
        Db::Sqlite(_) => "",
    };
    let sql = format!(
        "UPDATE fetch_requests SET lease_until = $1 WHERE id IN (SELECT id FROM fetch_requests \
         WHERE status = 'pending' AND (lease_until IS NULL OR lease_until <= $2) \
         ORDER BY created_at, id LIMIT $3{lock}) RETURNING *"
    );
    let query = diesel::sql_query(sql)
        .bind::<BigInt, _>(lease_until)
        .bind::<BigInt, _>(now_ms)
        .bind::<BigInt, _>(max);
    let conn = db.conn().await?;
    let mut rows: Vec<FetchRow> = with_conn!(conn, c => query.load(c).await)?;
    rows.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
    Ok(rows)
}

/// Every row of an enrollment, oldest first (tests and the journey's readers).
pub async fn of_enrollment(db: &Db, enrollment_id: &str) -> Result<Vec<FetchRow>, StoreError> {
    let conn = db.conn().await?;
    Ok(with_conn!(conn, c => fetch_requests::table
        .filter(fetch_requests::enrollment_id.eq(enrollment_id))
        .order((fetch_requests::created_at, fetch_requests::id))
        .select(FetchRow::as_select())
        .load(c)
        .await)?)
}

impl Tx {
    /// Records new attempts; one already recorded (the same key) is left as it is.
    pub async fn insert_fetches(&mut self, rows: &[FetchRow]) -> Result<(), StoreError> {
        for row in rows {
            on_conn!(&mut self.conn, c => diesel::insert_into(fetch_requests::table)
                .values(row)
                .on_conflict(fetch_requests::id)
                .do_nothing()
                .execute(c)
                .await)?;
        }
        Ok(())
    }

    /// Marks an attempt answered, in the transaction that applies its answer.
    pub async fn fetch_done(&mut self, id: &str) -> Result<(), StoreError> {
        on_conn!(&mut self.conn, c => diesel::update(fetch_requests::table.find(id))
            .set((fetch_requests::status.eq("done"), fetch_requests::lease_until.eq(None::<i64>)))
            .execute(c)
            .await)?;
        Ok(())
    }
}
