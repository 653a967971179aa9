//! The dispatch outbox (docs/service.md, "Delivery"): claims with a lease, and acknowledgements. The rows are
//! written by [`Tx::write_all`](super::Tx::write_all) with the step that made them.

pub use super::enrollments::DispatchRow;
use super::schema::dispatches;
use super::{Conn, Db, DispatchStatus, EnrollmentRow, StoreError, Tx};
use crate::timing::Channel;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

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
///
/// `channels` keeps only dispatches on those channels; empty means every channel.
pub async fn claim(
    db: &Db,
    account_id: &str,
    now_ms: i64,
    max: i64,
    channels: &[Channel],
    lease: Lease<'_>,
) -> Result<Vec<DispatchRow>, StoreError> {
    use diesel::sql_types::{BigInt, Text};
    // The candidates' sub-select is the only difference: PostgreSQL locks them, skipping rows
    // another claimer holds.
    let lock = match db {
        Db::Postgres(_) => " FOR UPDATE SKIP LOCKED",
        Db::Sqlite(_) => "",
    };
    // The spellings are `Channel::as_str`'s, a closed set of literals: written inline, they
    // need no bind (SQLite cannot bind a list).
    let only = if channels.is_empty() {
        String::new()
    } else {
        let list: Vec<String> = channels
            .iter()
            .map(|c| format!("'{}'", c.as_str()))
            .collect();
        format!(" AND channel IN ({})", list.join(", "))
    };
    let sql = format!(
        "UPDATE dispatches SET lease_owner = $1, lease_until = $2, attempts = attempts + 1 \
         WHERE id IN (SELECT id FROM dispatches WHERE account_id = $3 AND status = 'pending' \
         AND due_at <= $4 AND (lease_until IS NULL OR lease_until <= $4){only} \
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

/// What an ack writes on the dispatch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AckUpdate<'a> {
    /// `sent`, `failed`, or `pending` again (a retry).
    pub status: DispatchStatus,
    pub provider_message_id: Option<&'a str>,
    pub failure: Option<&'a str>,
    /// When it is due (a retry's new time; unchanged otherwise).
    pub due_at: i64,
}

/// The account's dispatch `id`.
/// Pending dispatches by channel: how many, and the earliest `due_at` (one grouped query; the
/// metrics refresher).
pub async fn pending_by_channel(db: &Db) -> Result<Vec<(String, i64, Option<i64>)>, StoreError> {
    let conn = db.conn().await?;
    Ok(with_conn!(conn, c => dispatches::table
        .filter(dispatches::status.eq(DispatchStatus::Pending.as_str()))
        .group_by(dispatches::channel)
        .select((
            dispatches::channel,
            diesel::dsl::count_star(),
            diesel::dsl::min(dispatches::due_at),
        ))
        .load(c)
        .await)?)
}

pub async fn get(db: &Db, account_id: &str, id: &str) -> Result<Option<DispatchRow>, StoreError> {
    let conn = db.conn().await?;
    Ok(with_conn!(conn, c => dispatches::table
        .filter(dispatches::account_id.eq(account_id))
        .filter(dispatches::id.eq(id))
        .select(DispatchRow::as_select())
        .first(c)
        .await
        .optional())?)
}

/// The account's dispatch a provider reported on by its own id (what `AckDispatch` recorded),
/// given as sent or without the angle brackets some providers strip; the newest when several.
pub async fn by_provider_message_id(
    db: &Db,
    account_id: &str,
    provider_message_id: &str,
) -> Result<Option<DispatchRow>, StoreError> {
    let bare = provider_message_id
        .trim()
        .trim_start_matches('<')
        .trim_end_matches('>')
        .to_string();
    if bare.is_empty() {
        return Ok(None);
    }
    let forms = [bare.clone(), format!("<{bare}>")];
    let conn = db.conn().await?;
    Ok(with_conn!(conn, c => dispatches::table
        .filter(dispatches::account_id.eq(account_id))
        .filter(dispatches::provider_message_id.eq_any(&forms))
        .order(dispatches::created_at.desc())
        .select(DispatchRow::as_select())
        .first(c)
        .await
        .optional())?)
}

/// Filters of [`list`]; `None` means any.
#[derive(Debug, Clone, Default)]
pub struct ListFilter<'a> {
    /// The enrollment's id.
    pub enrollment_id: Option<&'a str>,
    /// The status.
    pub status: Option<DispatchStatus>,
    /// Ids after this one (keyset pagination).
    pub after_id: Option<&'a str>,
}

/// Up to `limit` of the account's dispatches by id, filtered.
pub async fn list(
    db: &Db,
    account_id: &str,
    filter: &ListFilter<'_>,
    limit: i64,
) -> Result<Vec<DispatchRow>, StoreError> {
    let conn = db.conn().await?;
    Ok(with_conn!(conn, c => {
        let mut q = dispatches::table
            .filter(dispatches::account_id.eq(account_id))
            .order(dispatches::id.asc())
            .limit(limit)
            .select(DispatchRow::as_select())
            .into_boxed();
        if let Some(enrollment) = filter.enrollment_id {
            // Its keys are `enrollment:run…`, a range of the key's index (the column sorts
            // bytewise, and `;` follows `:`).
            q = q
                .filter(dispatches::idempotency_key.ge(format!("{enrollment}:")))
                .filter(dispatches::idempotency_key.lt(format!("{enrollment};")))
                .filter(dispatches::enrollment_id.eq(enrollment));
        }
        if let Some(status) = filter.status {
            q = q.filter(dispatches::status.eq(status.as_str()));
        }
        if let Some(after) = filter.after_id {
            q = q.filter(dispatches::id.gt(after));
        }
        q.load(c).await
    })?)
}

impl Tx {
    /// Applies an ack to dispatch `id`: its status, provider id or failure, due time; the lease
    /// ends (its owner is kept, so a repeat of the same ack is recognised).
    pub async fn ack_dispatch(&mut self, id: &str, ack: &AckUpdate<'_>) -> Result<(), StoreError> {
        on_conn!(&mut self.conn, c => diesel::update(dispatches::table.filter(dispatches::id.eq(id)))
            .set((
                dispatches::status.eq(ack.status.as_str()),
                dispatches::provider_message_id.eq(ack.provider_message_id),
                dispatches::failure.eq(ack.failure),
                dispatches::due_at.eq(ack.due_at),
                dispatches::lease_until.eq(None::<i64>),
            ))
            .execute(c)
            .await)?;
        Ok(())
    }

    /// The account's enrollments that the dispatches `ids` belong to, locked in id order
    /// (PostgreSQL `FOR UPDATE`, the order the signal router locks in, so concurrent batches
    /// cannot deadlock; SQLite has one writer).
    pub async fn lock_enrollments_of_dispatches(
        &mut self,
        account_id: &str,
        ids: &[&str],
    ) -> Result<Vec<EnrollmentRow>, StoreError> {
        use super::schema::enrollments;
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        macro_rules! find {
            () => {
                enrollments::table
                    .filter(enrollments::account_id.eq(account_id))
                    .filter(
                        enrollments::id.eq_any(
                            dispatches::table
                                .filter(dispatches::account_id.eq(account_id))
                                .filter(dispatches::id.eq_any(ids))
                                .select(dispatches::enrollment_id),
                        ),
                    )
                    .order(enrollments::id.asc())
                    .select(EnrollmentRow::as_select())
            };
        }
        Ok(match &mut self.conn {
            Conn::Postgres(c) => find!().for_update().load(&mut **c).await?,
            Conn::Sqlite(c) => find!().load(&mut **c).await?,
        })
    }

    /// The account's dispatches `ids` (those that exist), locked in id order until this
    /// transaction ends.
    pub async fn lock_dispatches(
        &mut self,
        account_id: &str,
        ids: &[&str],
    ) -> Result<Vec<DispatchRow>, StoreError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        macro_rules! find {
            () => {
                dispatches::table
                    .filter(dispatches::account_id.eq(account_id))
                    .filter(dispatches::id.eq_any(ids))
                    .order(dispatches::id.asc())
                    .select(DispatchRow::as_select())
            };
        }
        Ok(match &mut self.conn {
            Conn::Postgres(c) => find!().for_update().load(&mut **c).await?,
            Conn::Sqlite(c) => find!().load(&mut **c).await?,
        })
    }

    /// [`Tx::ack_dispatch`] for each of `acks`: one array-bound statement on PostgreSQL.
    pub async fn ack_dispatches(
        &mut self,
        acks: &[(&str, AckUpdate<'_>)],
    ) -> Result<(), StoreError> {
        if acks.is_empty() {
            return Ok(());
        }
        if let Conn::Postgres(c) = &mut self.conn {
            super::pg_batch::ack_dispatches(c, acks).await?;
            return Ok(());
        }
        for (id, ack) in acks {
            self.ack_dispatch(id, ack).await?;
        }
        Ok(())
    }
}
