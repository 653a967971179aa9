//! Watch's order (SPEC §12): each journey entry gets a position in its account's one commit
//! order, `journey_log (account_id, pos)`, and Watch reads the log by position.
//!
//! A writer numbers its entries as the last statement of its transaction
//! ([`Tx::log_journey`]): an upsert of the account's `journey_heads` row, which PostgreSQL
//! keeps row-locked until the transaction ends. A second writer of the same account waits on
//! that row until the first commits (or rolls back, giving its numbers back), so positions are
//! handed out in commit order, without gaps; and since the first is visible before the second
//! can commit, a reader that sees position `n` sees every position below it. The same order
//! holds for every replica (it is in the database, not a replica's clock). SQLite has one
//! writer, so the same statements give the same guarantee. The price: the writers of one
//! account serialize for the moment between their last statement and their commit; accounts
//! never wait on each other (heads are locked in account order, so a planner batch spanning
//! accounts cannot deadlock with another).

use super::{Conn, Db, StoreError, Tx};
use diesel::sql_types::{Array, BigInt, Integer, Nullable, Text};
use diesel_async::RunQueryDsl;

#[derive(diesel::QueryableByName)]
struct Head {
    #[diesel(sql_type = BigInt)]
    pos: i64,
}

impl Tx {
    /// Numbers `entries` (account, enrollment, seq), in the order given within each account.
    pub async fn log_journey(&mut self, entries: &[(&str, &str, i64)]) -> Result<(), StoreError> {
        let mut accounts: Vec<&str> = entries.iter().map(|e| e.0).collect();
        accounts.sort();
        accounts.dedup();
        for account in accounts {
            let mine: Vec<(&str, i64)> = entries
                .iter()
                .filter(|e| e.0 == account)
                .map(|e| (e.1, e.2))
                .collect();
            let n = mine.len() as i64;
            let head = diesel::sql_query(
                "INSERT INTO journey_heads (account_id, pos) VALUES ($1, $2) \
                 ON CONFLICT (account_id) DO UPDATE SET pos = journey_heads.pos + excluded.pos \
                 RETURNING pos",
            )
            .bind::<Text, _>(account)
            .bind::<BigInt, _>(n);
            let last = on_conn!(&mut self.conn, c => head.get_result::<Head>(c).await)?.pos;
            let first = last - n + 1;
            match &mut self.conn {
                Conn::Postgres(c) => {
                    let ids: Vec<&str> = mine.iter().map(|m| m.0).collect();
                    let seqs: Vec<i64> = mine.iter().map(|m| m.1).collect();
                    diesel::sql_query(
                        "INSERT INTO journey_log (account_id, pos, enrollment_id, seq) \
                         SELECT $1, $2 + t.ord - 1, t.enrollment_id, t.seq \
                         FROM unnest($3::text[], $4::int8[]) WITH ORDINALITY \
                         AS t(enrollment_id, seq, ord)",
                    )
                    .bind::<Text, _>(account)
                    .bind::<BigInt, _>(first)
                    .bind::<Array<Text>, _>(ids)
                    .bind::<Array<BigInt>, _>(seqs)
                    .execute(&mut **c)
                    .await?;
                }
                Conn::Sqlite(c) => {
                    let json = serde_json::Value::from(
                        mine.iter()
                            .map(|(id, seq)| serde_json::json!([id, seq]))
                            .collect::<Vec<_>>(),
                    )
                    .to_string();
                    diesel::sql_query(
                        "INSERT INTO journey_log (account_id, pos, enrollment_id, seq) \
                         SELECT $1, $2 + j.key, json_extract(j.value, '$[0]'), \
                         json_extract(j.value, '$[1]') FROM json_each($3) j",
                    )
                    .bind::<Text, _>(account)
                    .bind::<BigInt, _>(first)
                    .bind::<Text, _>(json)
                    .execute(&mut **c)
                    .await?;
                }
            }
        }
        Ok(())
    }
}

/// One entry of the log, with its enrollment's flow and contact.
#[derive(Debug, Clone, PartialEq, Eq, diesel::QueryableByName)]
pub struct WatchRow {
    #[diesel(sql_type = BigInt)]
    pub pos: i64,
    #[diesel(sql_type = Text)]
    pub enrollment_id: String,
    #[diesel(sql_type = Text)]
    pub flow_id: String,
    #[diesel(sql_type = Integer)]
    pub flow_version: i32,
    #[diesel(sql_type = Text)]
    pub contact_id: String,
    #[diesel(sql_type = BigInt)]
    pub seq: i64,
    #[diesel(sql_type = BigInt)]
    pub at: i64,
    #[diesel(sql_type = Text)]
    pub kind: String,
    #[diesel(sql_type = Text)]
    pub detail: String,
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
    let query = diesel::sql_query(
        "SELECT l.pos, l.enrollment_id, e.flow_id, e.flow_version, e.contact_id, j.seq, j.at, \
         j.kind, j.detail \
         FROM journey_log l \
         JOIN journey j ON j.enrollment_id = l.enrollment_id AND j.seq = l.seq \
         JOIN enrollments e ON e.id = l.enrollment_id \
         WHERE l.account_id = $1 AND l.pos > $2 \
         AND ($3 IS NULL OR e.flow_id = $3) AND ($4 IS NULL OR e.contact_id = $4) \
         ORDER BY l.pos LIMIT $5",
    )
    .bind::<Text, _>(account_id)
    .bind::<BigInt, _>(after)
    .bind::<Nullable<Text>, _>(flow_id)
    .bind::<Nullable<Text>, _>(contact_id)
    .bind::<BigInt, _>(limit);
    let conn = db.conn().await?;
    Ok(with_conn!(conn, c => query.load(c).await)?)
}
