//! Watch's order (SPEC §12): each journey entry gets a position in its account's one commit
//! order, and Watch reads the journey by position (a stored step holds its entries'
//! positions as `last_pos` and `n`, see [`super::journey`]).
//!
//! A writer numbers its entries as the last statement of its transaction
//! ([`Tx::insert_journey`](super::Tx::insert_journey), or the same statement at the end of a
//! batch): an upsert of the account's `journey_heads` row, which PostgreSQL
//! keeps row-locked until the transaction ends. A second writer of the same account waits on
//! that row until the first commits (or rolls back, giving its numbers back), so positions are
//! handed out in commit order, without gaps; and since the first is visible before the second
//! can commit, a reader that sees position `n` sees every position below it. The same order
//! holds for every replica (it is in the database, not a replica's clock). SQLite has one
//! writer, so the same statements give the same guarantee. The price: the writers of one
//! account serialize for the moment between their last statement and their commit; accounts
//! never wait on each other (heads are locked in account order, so a planner batch spanning
//! accounts cannot deadlock with another).

use super::journey::StoredStep;
use super::{Db, StoreError};
use diesel::sql_types::{BigInt, Integer, Nullable, Text};
use diesel::QueryableByName;
use diesel_async::RunQueryDsl;

/// One entry of the log, with its enrollment's flow and contact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatchRow {
    pub pos: i64,
    pub enrollment_id: String,
    pub flow_id: String,
    pub flow_version: i32,
    pub contact_id: String,
    pub seq: i64,
    pub at: i64,
    pub kind: String,
    pub detail: String,
}

/// A stored step of the log, with its enrollment's flow and contact.
#[derive(QueryableByName)]
struct LogStep {
    #[diesel(embed)]
    step: StoredStep,
    #[diesel(sql_type = Text)]
    flow_id: String,
    #[diesel(sql_type = Integer)]
    flow_version: i32,
    #[diesel(sql_type = Text)]
    contact_id: String,
}

/// Up to `limit` log entries of the account after position `after`, in order, of the flow and
/// contact when given.
pub async fn page(
    db: &Db,
    account_id: &str,
    after: i64,
    flow_id: Option<&str>,
    contact_id: Option<&str>,
    limit: i64,
) -> Result<Vec<WatchRow>, StoreError> {
    // Steps whose last position is after the cursor, by position (their ranges never overlap,
    // so that is the entries' order); each holds at least one entry to return.
    let query = diesel::sql_query(
        "SELECT j.enrollment_id, e.flow_id, e.flow_version, e.contact_id, j.seq, j.n, j.at, \
         j.last_pos, j.entries \
         FROM journey_steps j \
         JOIN enrollments e ON e.id = j.enrollment_id \
         WHERE j.account_id = $1 AND j.last_pos > $2 \
         AND ($3 IS NULL OR e.flow_id = $3) AND ($4 IS NULL OR e.contact_id = $4) \
         ORDER BY j.last_pos LIMIT $5",
    )
    .bind::<Text, _>(account_id)
    .bind::<BigInt, _>(after)
    .bind::<Nullable<Text>, _>(flow_id)
    .bind::<Nullable<Text>, _>(contact_id)
    .bind::<BigInt, _>(limit);
    let conn = db.conn().await?;
    let steps: Vec<LogStep> = with_conn!(conn, c => query.load(c).await)?;
    let mut out = Vec::new();
    for s in steps {
        for (pos, row) in s.step.expand()? {
            if pos <= after {
                continue;
            }
            out.push(WatchRow {
                pos,
                enrollment_id: row.enrollment_id,
                flow_id: s.flow_id.clone(),
                flow_version: s.flow_version,
                contact_id: s.contact_id.clone(),
                seq: row.seq,
                at: row.at,
                kind: row.kind,
                detail: row.detail,
            });
        }
    }
    out.truncate(limit.max(0) as usize);
    Ok(out)
}
