//! Watch's order: every journey entry has a key, `(xid, enrollment_id, seq)`, and Watch reads
//! the journey in key order after a cursor, which is a key.
//!
//! **Why no writer waits for another.** On PostgreSQL a row's `xid` is the id of the
//! transaction that wrote it (`pg_current_xact_id()`), and a reader returns only rows whose
//! xid is below the oldest transaction still running (`pg_snapshot_xmin` of the statement's
//! own snapshot, read in the same statement). Every transaction below that horizon has
//! committed or rolled back, so the rows a reader returns are final: no row can later appear
//! with a key below one already returned, and a cursor never skips one. Rows above the horizon
//! wait for the next read (a Watch lags the oldest running transaction, not the newest). Writers
//! take no shared row for this — an account's writers do not wait on each other, which a head
//! row numbering entries in commit order made them do. The order is the database's, so every
//! replica serves the same one.
//!
//! **An enrollment's entries in order.** A transaction may get its id before it waits for an
//! enrollment's lock, behind a writer with a higher id; its rows then take the enrollment's
//! previous key instead ([`super::pg_batch::journey_statement`]), so keys never go down along
//! an enrollment's seq, and within one key seq decides.
//!
//! SQLite has one writer at a time: a row's xid is one above its account's highest, which is
//! commit order, and every committed row is final.
//!
//! Rows written before keys existed keep their Watch position (`last_pos`) and an xid below
//! every key since, in their old order; a cursor handed out then names a position, and
//! [`key_at_position`] finds its entry's key.

use super::journey::{first_step_columns, StoredStep};
use super::{Db, StoreError};
use diesel::sql_types::{BigInt, Integer, Nullable, Text};
use diesel::QueryableByName;
use diesel_async::RunQueryDsl;

/// Where an entry stands in Watch's order.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct WatchKey {
    pub xid: i64,
    pub enrollment_id: String,
    pub seq: i64,
}

impl WatchKey {
    /// Before every entry.
    pub fn start() -> WatchKey {
        WatchKey {
            xid: i64::MIN,
            enrollment_id: String::new(),
            seq: 0,
        }
    }
}

/// One entry of the log, with its enrollment's flow and contact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatchRow {
    pub key: WatchKey,
    pub flow_id: String,
    pub flow_version: i32,
    pub contact_id: String,
    /// Where the journey's times are shown: the contact's zone and phone, the sender's zone
    /// (each `None` when unset or gone).
    pub zones: RowZones,
    pub at: i64,
    pub kind: String,
    pub detail: String,
}

/// What an entry's sentence needs to find the contact's zone, read with the entry.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, QueryableByName)]
pub struct RowZones {
    #[diesel(sql_type = Nullable<Text>)]
    pub contact_tz: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    pub contact_phone: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    pub sender_tz: Option<String>,
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
    #[diesel(embed)]
    zones: RowZones,
}

/// Up to `limit` log entries of the account after `after`, in order, of the flow and contact
/// when given.
pub async fn page(
    db: &Db,
    account_id: &str,
    after: &WatchKey,
    flow_id: Option<&str>,
    contact_id: Option<&str>,
    limit: i64,
) -> Result<Vec<WatchRow>, StoreError> {
    // Rows at or after the cursor's (xid, enrollment) by the index, less the cursor's own
    // row's entries up to the cursor; each holds at least one entry to return. The first
    // steps kept on keys rows (PostgreSQL, migration `first_journey_step`) are read the same
    // way by their own index, and the two merged. A flow or contact filter asks the
    // enrollment only when given (the page joins each enrollment once, for its columns).
    // The contact's and sender's zones come along by their primary keys, so a page's
    // sentences cost no further query.
    let horizon = |xid: &str| match db {
        // Only what every transaction below the horizon finished writing.
        Db::Postgres(_) => {
            format!(" AND {xid} < pg_snapshot_xmin(pg_current_snapshot())::text::int8")
        }
        Db::Sqlite(_) => String::new(),
    };
    let sql = format!(
        concat!(
            "SELECT j.enrollment_id, e.flow_id, e.flow_version, e.contact_id, \
         c.tz AS contact_tz, c.phone AS contact_phone, s.tz AS sender_tz, \
         j.seq, j.n, j.at, j.xid, j.entries \
         FROM (SELECT * FROM (SELECT j.enrollment_id, j.seq, j.n, j.at, j.xid, j.entries \
               FROM journey_steps j \
               WHERE j.account_id = $1 AND (j.xid, j.enrollment_id) >= ($2, $3) \
               AND NOT (j.xid = $2 AND j.enrollment_id = $3 AND j.seq + j.n - 1 <= $4) \
               AND ($5 IS NULL AND $6 IS NULL OR EXISTS (SELECT 1 FROM enrollments e \
               WHERE e.id = j.enrollment_id AND ($5 IS NULL OR e.flow_id = $5) \
               AND ($6 IS NULL OR e.contact_id = $6))){} \
               ORDER BY j.xid, j.enrollment_id, j.seq LIMIT $7) AS steps \
               UNION ALL SELECT * FROM (SELECT ",
            first_step_columns!(),
            " FROM enrollment_keys k \
               WHERE k.account_id = $1 AND k.first_xid IS NOT NULL \
               AND (k.first_xid, k.id) >= ($2, $3) \
               AND NOT (k.first_xid = $2 AND k.id = $3 AND k.first_n <= $4) \
               AND ($5 IS NULL OR k.flow_id = $5) AND ($6 IS NULL OR k.contact_id = $6){} \
               ORDER BY k.first_xid, k.id LIMIT $7) AS firsts) AS j \
         JOIN enrollments e ON e.id = j.enrollment_id \
         LEFT JOIN contacts c ON c.account_id = e.account_id AND c.id = e.contact_id \
         LEFT JOIN senders s ON s.account_id = e.account_id AND s.id = e.sender_id \
         ORDER BY j.xid, j.enrollment_id, j.seq LIMIT $7"
        ),
        horizon("j.xid"),
        horizon("k.first_xid"),
    );
    let mut conn = db.conn().await?;
    let query = diesel::sql_query(sql)
        .bind::<Text, _>(account_id)
        .bind::<BigInt, _>(after.xid)
        .bind::<Text, _>(&after.enrollment_id)
        .bind::<BigInt, _>(after.seq)
        .bind::<Nullable<Text>, _>(flow_id)
        .bind::<Nullable<Text>, _>(contact_id)
        .bind::<BigInt, _>(limit);
    let steps: Vec<LogStep> = on_conn!(&mut conn, c => query.load(c).await)?;
    let mut out = Vec::new();
    for s in steps {
        for row in s.step.expand()? {
            let key = WatchKey {
                xid: s.step.xid,
                enrollment_id: row.enrollment_id,
                seq: row.seq,
            };
            if key <= *after {
                continue;
            }
            out.push(WatchRow {
                key,
                flow_id: s.flow_id.clone(),
                flow_version: s.flow_version,
                contact_id: s.contact_id.clone(),
                zones: s.zones.clone(),
                at: row.at,
                kind: row.kind,
                detail: row.detail,
            });
        }
    }
    out.truncate(limit.max(0) as usize);
    Ok(out)
}

#[derive(QueryableByName)]
struct Positioned {
    #[diesel(sql_type = Text)]
    enrollment_id: String,
    #[diesel(sql_type = BigInt)]
    seq: i64,
    #[diesel(sql_type = BigInt)]
    n: i64,
    #[diesel(sql_type = BigInt)]
    last_pos: i64,
    #[diesel(sql_type = BigInt)]
    xid: i64,
}

/// The key of the entry at Watch position `pos` of the account, for a cursor handed out
/// before keys (a row written then holds its last entry's position); `None` when no entry
/// had that position.
pub async fn key_at_position(
    db: &Db,
    account_id: &str,
    pos: i64,
) -> Result<Option<WatchKey>, StoreError> {
    // The row whose positions `last_pos - n + 1 ..= last_pos` hold `pos`.
    let query = diesel::sql_query(
        "SELECT enrollment_id, seq, n, last_pos, xid FROM journey_steps \
         WHERE account_id = $1 AND last_pos IS NOT NULL AND last_pos >= $2 \
         ORDER BY last_pos LIMIT 1",
    )
    .bind::<Text, _>(account_id)
    .bind::<BigInt, _>(pos);
    let conn = db.conn().await?;
    let rows: Vec<Positioned> = with_conn!(conn, c => query.load(c).await)?;
    Ok(rows.into_iter().next().and_then(|r| {
        // Its entry's place in the row (positions were handed out without gaps).
        let nth = pos - (r.last_pos - r.n + 1);
        (nth >= 0).then(|| WatchKey {
            xid: r.xid,
            enrollment_id: r.enrollment_id,
            seq: r.seq + nth,
        })
    }))
}
