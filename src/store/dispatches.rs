//! The dispatch outbox (SPEC §6): claims with a lease, and acknowledgements. The rows are
//! written by [`Tx::write_all`](super::Tx::write_all) with the step that made them.

pub use super::enrollments::DispatchRow;
use super::schema::dispatches;
use super::{Db, DispatchStatus, StoreError};
use diesel::prelude::*;
use diesel_async::{AsyncConnection, RunQueryDsl};

/// A claim: whose lease, until when.
#[derive(Debug, Clone, Copy)]
pub struct Lease<'a> {
    /// The claim's token; the ack must carry it.
    pub owner: &'a str,
    /// When the lease lapses (epoch ms) and the dispatch is claimable again.
    pub until: i64,
}

/// Leases up to `max` of the account's due, unleased pending dispatches in one
/// `UPDATE … RETURNING`, earliest due first. On PostgreSQL the candidates are locked
/// `FOR UPDATE SKIP LOCKED`, so two claimers never lease the same dispatch.
pub async fn claim(
    db: &Db,
    account_id: &str,
    now_ms: i64,
    max: i64,
    lease: Lease<'_>,
) -> Result<Vec<DispatchRow>, StoreError> {
    use diesel::sql_types::{BigInt, Text};
    // The candidates' sub-select is the only difference: PostgreSQL locks them, skipping rows
    // another claimer holds.
    let lock = match db {
        Db::Postgres(_) => " FOR UPDATE SKIP LOCKED",
        Db::Sqlite(_) => "",
    };
    let sql = format!(
        "UPDATE dispatches SET lease_owner = $1, lease_until = $2, attempts = attempts + 1 \
         WHERE id IN (SELECT id FROM dispatches WHERE account_id = $3 AND status = 'pending' \
         AND due_at <= $4 AND (lease_until IS NULL OR lease_until <= $4) \
         ORDER BY due_at, id LIMIT $5{lock}) RETURNING *"
    );
    let query = diesel::sql_query(sql)
        .bind::<Text, _>(lease.owner)
        .bind::<BigInt, _>(lease.until)
        .bind::<Text, _>(account_id)
        .bind::<BigInt, _>(now_ms)
        .bind::<BigInt, _>(max);
    let conn = db.conn().await?;
    let mut rows: Vec<DispatchRow> = with_conn!(conn, c => query.load(c).await)?;
    // RETURNING keeps no order.
    rows.sort_by(|a, b| (a.due_at, &a.id).cmp(&(b.due_at, &b.id)));
    Ok(rows)
}

/// How an ack ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Acked {
    /// The lease was the caller's: the dispatch is now `status`.
    Done,
    /// No such dispatch in the account.
    Missing,
    /// Not applied: the dispatch as it is (acked before, or leased to another claimer).
    Refused(Box<DispatchRow>),
}

/// Sets a pending dispatch leased by `lease_owner` to `status` (`sent` with the provider's id,
/// or `failed` with why), in one transaction with the read that explains a refusal.
pub async fn ack(
    db: &Db,
    account_id: &str,
    id: &str,
    lease_owner: &str,
    status: DispatchStatus,
    provider_message_id: Option<&str>,
    failure: Option<&str>,
) -> Result<Acked, StoreError> {
    let conn = db.conn().await?;
    Ok(with_conn!(conn, c => c
        .transaction(async |c| {
            let updated = diesel::update(
                dispatches::table
                    .filter(dispatches::account_id.eq(account_id))
                    .filter(dispatches::id.eq(id))
                    .filter(dispatches::status.eq(DispatchStatus::Pending.as_str()))
                    .filter(dispatches::lease_owner.eq(lease_owner)),
            )
            .set((
                dispatches::status.eq(status.as_str()),
                dispatches::provider_message_id.eq(provider_message_id),
                dispatches::failure.eq(failure),
                dispatches::lease_until.eq(None::<i64>),
            ))
            .execute(c)
            .await?;
            if updated == 1 {
                return Ok(Acked::Done);
            }
            let found = dispatches::table
                .filter(dispatches::account_id.eq(account_id))
                .filter(dispatches::id.eq(id))
                .select(DispatchRow::as_select())
                .first(c)
                .await
                .optional()?;
            Ok::<_, diesel::result::Error>(found.map_or(Acked::Missing, |row| Acked::Refused(Box::new(row))))
        })
        .await)?)
}
