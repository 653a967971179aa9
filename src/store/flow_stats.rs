//! A flow's statistics, stored so that reading them is cheap and writing them blocks nobody:
//! the SQL of `flow_counts` and `exposures`, in one place.
//!
//! - `flow_counts`: each transaction that counts something appends its own rows (one per flow
//!   version, step, metric, variant and hour it touched, with `n`), in the statement batch that
//!   writes the step itself. No row is shared between writers, so a busy flow's replies and
//!   steps never queue on a counter; GetFlowStats sums the flow's rows, and folds them into one
//!   row per key when they have piled up ([`fold`]).
//! - `exposures`: one row per enrollment and experiment, written when a variant's message is
//!   acknowledged as sent, marked converted by the enrollment's goal event within its window,
//!   and closed when the enrollment's next outreach message is sent. A reply locks only its own
//!   enrollment's rows.

use super::enrollments::Writes;
use super::schema::{exposures, flow_counts};
use super::{Conn, Db, StoreError, Tx};
use crate::engine::funnel::Metric;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use std::collections::BTreeMap;

/// One hour in milliseconds: the counts' time grain.
pub const HOUR_MS: i64 = 3_600_000;

/// The start of the UTC hour holding `ms`.
pub fn hour_of(ms: i64) -> i64 {
    ms.div_euclid(HOUR_MS) * HOUR_MS
}

/// What one count is of. Ordered by `KeyView::order`: the tally's map compares keys at
/// every step, and a batch's keys differ in their metric and step, not in their account and
/// flow, so those (strings equal to the end) are compared last.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CountKey {
    pub account_id: String,
    pub flow_id: String,
    pub flow_version: i32,
    pub step: String,
    pub metric: Metric,
    /// The variant (exposed, converted); empty otherwise.
    pub variant: String,
    /// [`hour_of`] the moment it happened.
    pub hour: i64,
}

/// A [`CountKey`] by reference, for [`Tally::add_ref`].
#[derive(Debug, Clone, Copy)]
pub struct CountRef<'a> {
    pub account_id: &'a str,
    pub flow_id: &'a str,
    pub flow_version: i32,
    pub step: &'a str,
    pub metric: Metric,
    pub variant: &'a str,
    pub hour: i64,
}

/// A count key's fields, whichever way it is held: the tally's map is searched by this
/// (`CountKey` borrows as it), so a lookup needs no owned key.
trait KeyView {
    fn view(&self) -> (&str, &str, i32, &str, Metric, &str, i64);

    /// The fields in the order keys are sorted by: the cheap ones and those that tell a
    /// batch's keys apart first.
    fn order(&self) -> (i64, Metric, &str, i32, &str, &str, &str) {
        let (account_id, flow_id, flow_version, step, metric, variant, hour) = self.view();
        (
            hour,
            metric,
            step,
            flow_version,
            variant,
            flow_id,
            account_id,
        )
    }
}

impl KeyView for CountKey {
    fn view(&self) -> (&str, &str, i32, &str, Metric, &str, i64) {
        let k = self;
        (
            &k.account_id,
            &k.flow_id,
            k.flow_version,
            &k.step,
            k.metric,
            &k.variant,
            k.hour,
        )
    }
}

impl KeyView for CountRef<'_> {
    fn view(&self) -> (&str, &str, i32, &str, Metric, &str, i64) {
        let k = self;
        (
            k.account_id,
            k.flow_id,
            k.flow_version,
            k.step,
            k.metric,
            k.variant,
            k.hour,
        )
    }
}

impl<'a> std::borrow::Borrow<dyn KeyView + 'a> for CountKey {
    fn borrow(&self) -> &(dyn KeyView + 'a) {
        self
    }
}

// `CountKey` and its borrowed view sort alike: the map's order and the lookup's agree.
impl PartialOrd for CountKey {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for CountKey {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.order().cmp(&other.order())
    }
}

impl PartialEq for dyn KeyView + '_ {
    fn eq(&self, other: &Self) -> bool {
        self.view() == other.view()
    }
}

impl Eq for dyn KeyView + '_ {}

impl PartialOrd for dyn KeyView + '_ {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for dyn KeyView + '_ {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.order().cmp(&other.order())
    }
}

/// Counts to append, summed by key within one transaction.
///
/// A planner batch adds a count a few times a step to a handful of keys (its flows' steps'
/// metrics this hour): up to `FEW` keys are kept in a vector searched by equality, the
/// cheapest and most distinguishing fields first (a map's ordered search compared whole keys
/// several times an add); past that, in a map.
#[derive(Debug, Clone, Default)]
pub struct Tally {
    few: Vec<(CountKey, i64)>,
    /// Every key once there are more than `FEW` (then `few` is empty).
    many: BTreeMap<CountKey, i64>,
}

/// How many keys a [`Tally`] searches one by one.
const FEW: usize = 16;

/// Whether `k` is the key `r` spells.
fn same(k: &CountKey, r: &CountRef<'_>) -> bool {
    k.hour == r.hour
        && k.metric == r.metric
        && k.flow_version == r.flow_version
        && k.step == r.step
        && k.variant == r.variant
        && k.flow_id == r.flow_id
        && k.account_id == r.account_id
}

impl CountKey {
    fn as_ref(&self) -> CountRef<'_> {
        CountRef {
            account_id: &self.account_id,
            flow_id: &self.flow_id,
            flow_version: self.flow_version,
            step: &self.step,
            metric: self.metric,
            variant: &self.variant,
            hour: self.hour,
        }
    }
}

impl Tally {
    pub fn add(&mut self, key: CountKey, n: i64) {
        if let Some(count) = self.find(&key.as_ref()) {
            *count += n;
            return;
        }
        self.insert(key, n);
    }

    /// [`Tally::add`] for a key given by reference: a key the tally holds already (most of a
    /// batch's counts) is found without building one (four strings cloned, then dropped).
    pub fn add_ref(&mut self, key: CountRef<'_>, n: i64) {
        if let Some(count) = self.find(&key) {
            *count += n;
            return;
        }
        let owned = CountKey {
            account_id: key.account_id.to_string(),
            flow_id: key.flow_id.to_string(),
            flow_version: key.flow_version,
            step: key.step.to_string(),
            metric: key.metric,
            variant: key.variant.to_string(),
            hour: key.hour,
        };
        self.insert(owned, n);
    }

    fn find(&mut self, key: &CountRef<'_>) -> Option<&mut i64> {
        if self.many.is_empty() {
            self.few
                .iter_mut()
                .find(|(k, _)| same(k, key))
                .map(|(_, n)| n)
        } else {
            self.many.get_mut(key as &dyn KeyView)
        }
    }

    /// Adds a key it does not hold.
    fn insert(&mut self, key: CountKey, n: i64) {
        if self.many.is_empty() && self.few.len() < FEW {
            self.few.push((key, n));
            return;
        }
        self.many.extend(self.few.drain(..));
        self.many.insert(key, n);
    }

    pub fn is_empty(&self) -> bool {
        self.few.is_empty() && self.many.is_empty()
    }

    /// Every key and its count, in key order.
    fn entries(&self) -> Vec<(&CountKey, i64)> {
        let mut entries: Vec<(&CountKey, i64)> = self
            .few
            .iter()
            .map(|(k, n)| (k, *n))
            .chain(self.many.iter().map(|(k, n)| (k, *n)))
            .collect();
        entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
        entries
    }

    /// The rows to insert, in key order.
    pub fn rows(&self) -> Vec<CountRow> {
        self.entries()
            .into_iter()
            .map(|(k, n)| CountRow {
                account_id: k.account_id.clone(),
                flow_id: k.flow_id.clone(),
                flow_version: k.flow_version,
                step: k.step.clone(),
                metric: k.metric.as_str().to_string(),
                variant: k.variant.clone(),
                hour: k.hour,
                n,
            })
            .collect()
    }
}

impl PartialEq for Tally {
    fn eq(&self, other: &Self) -> bool {
        self.entries() == other.entries()
    }
}

impl Eq for Tally {}

/// A `flow_counts` row.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = flow_counts)]
pub struct CountRow {
    pub account_id: String,
    pub flow_id: String,
    pub flow_version: i32,
    pub step: String,
    pub metric: String,
    pub variant: String,
    pub hour: i64,
    pub n: i64,
}

/// An `exposures` row.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = exposures)]
pub struct ExposureRow {
    pub enrollment_id: String,
    pub experiment: String,
    pub account_id: String,
    pub flow_id: String,
    pub flow_version: i32,
    pub step: String,
    pub variant: String,
    pub goal: String,
    pub shared: bool,
    pub exposed_at: i64,
    pub closed_at: Option<i64>,
    pub converted_at: Option<i64>,
}

/// A goal event an enrollment raised: converts its open exposures with that goal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conversion {
    pub enrollment_id: String,
    /// `reply`, `meeting_booked` or `intent:interested`.
    pub goal: String,
    pub at: i64,
}

/// An outreach message acknowledged as sent to an enrollment of a flow with step experiments:
/// the enrollment's open exposures to step (not shared) experiments close at `at`, so a reply
/// after it no longer converts them. Written before the exposures its own message makes, which
/// stay open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Closing {
    pub enrollment_id: String,
    pub at: i64,
}

/// PostgreSQL: the conversions of one write (`$1`…`$3`) and its counts (`$4`…`$11`, as in
/// [`PG_APPEND`]) as one statement: the conversions' `converted` counts are appended with the
/// others (a data-modifying `WITH`), so a write with conversions sends no more statements than
/// one without. `x.enrollment_id = ANY($1)` keeps the plan on the primary key whatever the
/// planner guesses of the arrays' length: joined on the unnested rows alone, a plan cached
/// while the table was small hashed all of it (a million exposures read for every reply,
/// measured).
pub const PG_CONVERT: &str = "WITH c AS ( \
     UPDATE exposures x SET converted_at = u.at \
     FROM (SELECT unnest($1::text[]) AS enrollment_id, unnest($2::text[]) AS goal, \
           unnest($3::int8[]) AS at) AS u \
     WHERE x.enrollment_id = ANY($1::text[]) \
       AND x.enrollment_id = u.enrollment_id AND x.goal = u.goal \
       AND x.converted_at IS NULL AND x.closed_at IS NULL AND x.exposed_at <= u.at \
     RETURNING x.account_id, x.flow_id, x.flow_version, x.step, x.variant, u.at) \
     INSERT INTO flow_counts (account_id, flow_id, flow_version, step, metric, variant, hour, n) \
     SELECT unnest($4::text[]), unnest($5::text[]), unnest($6::int4[]), unnest($7::text[]), \
     unnest($8::text[]), unnest($9::text[]), unnest($10::int8[]), unnest($11::int8[]) \
     UNION ALL \
     SELECT account_id, flow_id, flow_version, step, 'converted', variant, \
            at - (at % 3600000), count(*) FROM c \
     GROUP BY account_id, flow_id, flow_version, step, variant, at - (at % 3600000)";

/// PostgreSQL: the exposures of one write and its counts (`$13`…`$20`, as in [`PG_APPEND`])
/// as one statement: the open windows of the enrollments in `$1` (closed at `$2`) close, the
/// new exposures (`$3`…`$12`, one array per column) are inserted unless the enrollment was
/// exposed to that experiment before, and each one inserted counts `exposed`, appended with
/// the write's other counts (a data-modifying `WITH`, like [`PG_CONVERT`]). Sibling CTEs see
/// the same snapshot, so the `UPDATE` cannot close the exposures the `INSERT` adds: the earlier
/// close, the new stay open. The `UPDATE` reaches exposures by their key
/// (`enrollment_id = ANY($1)`), for the reason given at [`PG_CONVERT`].
pub const PG_EXPOSE: &str = "WITH closed AS ( \
     UPDATE exposures x SET closed_at = c.at \
     FROM (SELECT unnest($1::text[]) AS enrollment_id, unnest($2::int8[]) AS at) AS c \
     WHERE x.enrollment_id = ANY($1::text[]) AND x.enrollment_id = c.enrollment_id \
       AND x.closed_at IS NULL AND NOT x.shared), \
     ins AS ( \
     INSERT INTO exposures (enrollment_id, experiment, account_id, flow_id, flow_version, step, \
       variant, goal, shared, exposed_at) \
     SELECT unnest($3::text[]), unnest($4::text[]), unnest($5::text[]), unnest($6::text[]), \
       unnest($7::int4[]), unnest($8::text[]), unnest($9::text[]), unnest($10::text[]), \
       unnest($11::bool[]), unnest($12::int8[]) \
     ON CONFLICT DO NOTHING \
     RETURNING account_id, flow_id, flow_version, step, variant, exposed_at) \
     INSERT INTO flow_counts (account_id, flow_id, flow_version, step, metric, variant, hour, n) \
     SELECT unnest($13::text[]), unnest($14::text[]), unnest($15::int4[]), unnest($16::text[]), \
     unnest($17::text[]), unnest($18::text[]), unnest($19::int8[]), unnest($20::int8[]) \
     UNION ALL \
     SELECT account_id, flow_id, flow_version, step, 'exposed', variant, \
            exposed_at - (exposed_at % 3600000), count(*) FROM ins \
     GROUP BY account_id, flow_id, flow_version, step, variant, exposed_at - (exposed_at % 3600000)";

/// PostgreSQL: a write's counts, one statement of arrays (when neither [`PG_CONVERT`] nor
/// [`PG_EXPOSE`] carries them).
pub const PG_APPEND: &str = "INSERT INTO flow_counts \
     (account_id, flow_id, flow_version, step, metric, variant, hour, n) \
     SELECT unnest($1::text[]), unnest($2::text[]), unnest($3::int4[]), unnest($4::text[]), \
     unnest($5::text[]), unnest($6::text[]), unnest($7::int8[]), unnest($8::int8[])";

/// SQLite: what [`PG_CONVERT`], [`PG_EXPOSE`] and [`PG_APPEND`] write, in that order, on the
/// writer's synchronous connection inside its transaction: `w`'s conversions (with their
/// `converted` counts), its closings, then its exposures (with their `exposed` counts), then
/// its counts.
pub fn write_sqlite(conn: &mut diesel::SqliteConnection, w: &Writes) -> QueryResult<()> {
    let mut all = w.counts.clone();
    for c in &w.conversions {
        let update = diesel::update(
            exposures::table
                .filter(exposures::enrollment_id.eq(&c.enrollment_id))
                .filter(exposures::goal.eq(&c.goal))
                .filter(exposures::converted_at.is_null())
                .filter(exposures::closed_at.is_null())
                .filter(exposures::exposed_at.le(c.at)),
        )
        .set(exposures::converted_at.eq(c.at))
        .returning((
            exposures::account_id,
            exposures::flow_id,
            exposures::flow_version,
            exposures::step,
            exposures::variant,
        ));
        let converted: Vec<(String, String, i32, String, String)> =
            diesel::RunQueryDsl::get_results(update, conn)?;
        for (account_id, flow_id, flow_version, step, variant) in converted {
            all.add(
                CountKey {
                    account_id,
                    flow_id,
                    flow_version,
                    step,
                    metric: Metric::Converted,
                    variant,
                    hour: hour_of(c.at),
                },
                1,
            );
        }
    }
    // The earlier windows close before the new exposures go in, which stay open (as the
    // sibling statements of PostgreSQL's `WITH` see it).
    for c in &w.closings {
        diesel::RunQueryDsl::execute(
            diesel::update(
                exposures::table
                    .filter(exposures::enrollment_id.eq(&c.enrollment_id))
                    .filter(exposures::closed_at.is_null())
                    .filter(exposures::shared.eq(false)),
            )
            .set(exposures::closed_at.eq(c.at)),
            conn,
        )?;
    }
    for row in &w.exposures {
        let inserted: Option<ExposureRow> = diesel::RunQueryDsl::get_result(
            diesel::insert_into(exposures::table)
                .values(row)
                .on_conflict_do_nothing()
                .returning(ExposureRow::as_returning()),
            conn,
        )
        .optional()?;
        if let Some(new) = inserted {
            all.add(
                CountKey {
                    account_id: new.account_id,
                    flow_id: new.flow_id,
                    flow_version: new.flow_version,
                    step: new.step,
                    metric: Metric::Exposed,
                    variant: new.variant,
                    hour: hour_of(new.exposed_at),
                },
                1,
            );
        }
    }
    for row in all.rows() {
        diesel::RunQueryDsl::execute(diesel::insert_into(flow_counts::table).values(&row), conn)?;
    }
    Ok(())
}

/// A flow's counts since `since_hour`, summed by key, and how many rows they were read from.
/// The database sums them (`GROUP BY`): a flow whose rows piled up before a fold (one a
/// transaction and key, tens of thousands after a busy hour) answers a few hundred sums, not
/// every row to sum here.
pub async fn read(
    db: &Db,
    account_id: &str,
    flow_id: &str,
    since_hour: i64,
) -> Result<(Vec<CountRow>, usize), StoreError> {
    use diesel::sql_types::{BigInt, Text};
    let mut conn = db.conn().await?;
    let sums: Vec<CountSum> = on_conn!(&mut conn, c => diesel::sql_query(
        "SELECT account_id, flow_id, flow_version, step, metric, variant, hour, \
         CAST(SUM(n) AS BIGINT) AS n, COUNT(*) AS rows_read FROM flow_counts \
         WHERE account_id = $1 AND flow_id = $2 AND hour >= $3 \
         GROUP BY account_id, flow_id, flow_version, step, metric, variant, hour",
    )
    .bind::<Text, _>(account_id)
    .bind::<Text, _>(flow_id)
    .bind::<BigInt, _>(since_hour)
    .load(c)
    .await)?;
    let read = sums.iter().map(|s| s.rows_read as usize).sum();
    let mut rows: Vec<CountRow> = sums.into_iter().map(|s| CountRow::from(s.key)).collect();
    rows.sort_by(|a, b| {
        (a.flow_version, &a.step, &a.metric, &a.variant, a.hour).cmp(&(
            b.flow_version,
            &b.step,
            &b.metric,
            &b.variant,
            b.hour,
        ))
    });
    Ok((rows, read))
}

/// A key's sum, and how many rows it was summed from ([`read`]).
#[derive(QueryableByName)]
struct CountSum {
    #[diesel(embed)]
    key: CountRowByName,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    rows_read: i64,
}

/// `rows` summed by key (every column but `n`), one row per key, in key order.
pub fn sum_rows(rows: Vec<CountRow>) -> Vec<CountRow> {
    type Key = (String, String, i32, String, String, String, i64);
    let mut summed: BTreeMap<Key, i64> = BTreeMap::new();
    for r in rows {
        *summed
            .entry((
                r.account_id,
                r.flow_id,
                r.flow_version,
                r.step,
                r.metric,
                r.variant,
                r.hour,
            ))
            .or_insert(0) += r.n;
    }
    summed
        .into_iter()
        .map(
            |((account_id, flow_id, flow_version, step, metric, variant, hour), n)| CountRow {
                account_id,
                flow_id,
                flow_version,
                step,
                metric,
                variant,
                hour,
                n,
            },
        )
        .collect()
}

/// Folds a flow's count rows into one per key: the rows read are deleted and their sums
/// inserted, in one transaction. On PostgreSQL folds of one flow take turns (a transaction
/// advisory lock on the flow), so two folding at once (a read's background fold, an upkeep
/// pass of another replica) count nothing twice and leave one row a key; rows a writer's
/// transaction still holds are skipped (`SKIP LOCKED`). Writers only ever insert, so they never
/// wait on a fold.
pub async fn fold(db: &Db, account_id: &str, flow_id: &str) -> Result<usize, StoreError> {
    let mut tx = db.begin().await?;
    let folded = fold_in(&mut tx, account_id, flow_id).await;
    tx.finish(folded).await
}

async fn fold_in(tx: &mut Tx, account_id: &str, flow_id: &str) -> Result<usize, StoreError> {
    let rows: Vec<CountRow> = match &mut tx.conn {
        Conn::Postgres(c) => {
            // Folds of one flow take turns (the one a read started in the background, one an
            // upkeep pass or a person runs): the second folds the first's sums, so a fold
            // leaves one row a key.
            diesel::sql_query("SELECT pg_advisory_xact_lock(hashtextextended($1 || '/' || $2, 0))")
                .bind::<diesel::sql_types::Text, _>(account_id)
                .bind::<diesel::sql_types::Text, _>(flow_id)
                .execute(&mut **c)
                .await?;
            diesel::sql_query(
                "DELETE FROM flow_counts WHERE ctid = ANY(ARRAY( \
                 SELECT ctid FROM flow_counts WHERE account_id = $1 AND flow_id = $2 \
                 FOR UPDATE SKIP LOCKED)) \
                 RETURNING account_id, flow_id, flow_version, step, metric, variant, hour, n",
            )
            .bind::<diesel::sql_types::Text, _>(account_id)
            .bind::<diesel::sql_types::Text, _>(flow_id)
            .load::<CountRowByName>(&mut **c)
            .await?
            .into_iter()
            .map(CountRow::from)
            .collect()
        }
        Conn::Sqlite(c) => {
            diesel::delete(
                flow_counts::table
                    .filter(flow_counts::account_id.eq(account_id))
                    .filter(flow_counts::flow_id.eq(flow_id)),
            )
            .returning(CountRow::as_returning())
            .get_results(&mut **c)
            .await?
        }
    };
    let before = rows.len();
    let sums = sum_rows(rows);
    insert_rows(&mut tx.conn, &sums).await?;
    Ok(before - sums.len())
}

/// A `flow_counts` row read by a raw statement (by column name).
#[derive(QueryableByName)]
struct CountRowByName {
    #[diesel(sql_type = diesel::sql_types::Text)]
    account_id: String,
    #[diesel(sql_type = diesel::sql_types::Text)]
    flow_id: String,
    #[diesel(sql_type = diesel::sql_types::Integer)]
    flow_version: i32,
    #[diesel(sql_type = diesel::sql_types::Text)]
    step: String,
    #[diesel(sql_type = diesel::sql_types::Text)]
    metric: String,
    #[diesel(sql_type = diesel::sql_types::Text)]
    variant: String,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    hour: i64,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    n: i64,
}

impl From<CountRowByName> for CountRow {
    fn from(r: CountRowByName) -> CountRow {
        CountRow {
            account_id: r.account_id,
            flow_id: r.flow_id,
            flow_version: r.flow_version,
            step: r.step,
            metric: r.metric,
            variant: r.variant,
            hour: r.hour,
            n: r.n,
        }
    }
}

/// The (account, flow) pairs that counted an exposure or a conversion since `since_ms`: the
/// flows whose experiments may have news.
pub async fn experimenting_since(
    db: &Db,
    since_ms: i64,
) -> Result<Vec<(String, String)>, StoreError> {
    let conn = db.conn().await?;
    Ok(with_conn!(conn, c => flow_counts::table
        .filter(flow_counts::hour.ge(hour_of(since_ms)))
        .filter(flow_counts::metric.eq_any(["exposed", "converted"]))
        .select((flow_counts::account_id, flow_counts::flow_id))
        .distinct()
        .load(c)
        .await)?)
}

/// The (account, flow) pairs with more than `rows` count rows: the ones to [`fold`].
pub async fn crowded(db: &Db, rows: i64) -> Result<Vec<(String, String)>, StoreError> {
    use diesel::dsl::count_star;
    let conn = db.conn().await?;
    Ok(with_conn!(conn, c => flow_counts::table
        .group_by((flow_counts::account_id, flow_counts::flow_id))
        .having(count_star().gt(rows))
        .select((flow_counts::account_id, flow_counts::flow_id))
        .load(c)
        .await)?)
}

/// Appends `counts` in a transaction of their own: what an import of counts kept elsewhere, or
/// a benchmark building a large flow's history, writes. (The write path appends its counts in
/// the transaction that did what they count.)
pub async fn append(db: &Db, counts: &Tally) -> Result<(), StoreError> {
    let mut conn = db.conn().await?;
    insert_rows(&mut conn, &counts.rows()).await
}

/// Inserts count rows: in chunks of many rows on PostgreSQL, one by one on SQLite (whose
/// async connection takes no multi-row insert).
async fn insert_rows(conn: &mut Conn, rows: &[CountRow]) -> Result<(), StoreError> {
    match conn {
        Conn::Postgres(c) => {
            for chunk in rows.chunks(super::enrollments::MAX_BINDS / 8) {
                diesel::insert_into(flow_counts::table)
                    .values(chunk)
                    .execute(&mut **c)
                    .await?;
            }
        }
        Conn::Sqlite(c) => {
            for row in rows {
                diesel::insert_into(flow_counts::table)
                    .values(row)
                    .execute(&mut **c)
                    .await?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tally_sums_by_key_with_few_keys_and_with_many() {
        for keys in [3usize, FEW + 5] {
            let mut t = Tally::default();
            for round in 0..2 {
                for i in (0..keys).rev() {
                    let step = format!("s{i:02}");
                    let key = entered_at(&step);
                    if round == 0 {
                        t.add_ref(key, 1);
                    } else {
                        t.add(key_of(&key), 2);
                    }
                }
            }
            let rows = t.rows();
            assert_eq!(rows.len(), keys);
            assert!(rows.iter().all(|r| r.n == 3));
            let steps: Vec<&str> = rows.iter().map(|r| r.step.as_str()).collect();
            let mut sorted = steps.clone();
            sorted.sort_unstable();
            assert_eq!(steps, sorted);
        }
    }

    proptest::proptest! {
        /// Any order of adds over any number of keys (searched one by one, and in the map past
        /// `FEW`) sums what a plain map of the same adds sums.
        #[test]
        fn a_tally_sums_what_a_map_sums(adds in proptest::collection::vec((0usize..24, 1i64..5), 0..200)) {
            let mut t = Tally::default();
            let mut model: BTreeMap<String, i64> = BTreeMap::new();
            for (i, n) in adds {
                let step = format!("s{i:02}");
                t.add_ref(entered_at(&step), n);
                *model.entry(step).or_insert(0) += n;
            }
            let rows: Vec<(String, i64)> = t.rows().into_iter().map(|r| (r.step, r.n)).collect();
            let expected: Vec<(String, i64)> = model.into_iter().collect();
            proptest::prop_assert_eq!(rows, expected);
        }
    }

    /// The key of the runs entered at `step`, in one flow and hour.
    fn entered_at(step: &str) -> CountRef<'_> {
        CountRef {
            account_id: "a",
            flow_id: "f",
            flow_version: 1,
            step,
            metric: Metric::Entered,
            variant: "",
            hour: 0,
        }
    }

    fn key_of(k: &CountRef<'_>) -> CountKey {
        CountKey {
            account_id: k.account_id.into(),
            flow_id: k.flow_id.into(),
            flow_version: k.flow_version,
            step: k.step.into(),
            metric: k.metric,
            variant: k.variant.into(),
            hour: k.hour,
        }
    }

    fn row(flow: &str, step: &str, metric: &str, hour: i64, n: i64) -> CountRow {
        CountRow {
            account_id: "a".into(),
            flow_id: flow.into(),
            flow_version: 1,
            step: step.into(),
            metric: metric.into(),
            variant: String::new(),
            hour,
            n,
        }
    }

    #[test]
    fn rows_of_one_key_sum_into_one_and_other_keys_stay_apart() {
        let summed = sum_rows(vec![
            row("f", "mail", "sent", 0, 2),
            row("f", "mail", "sent", HOUR_MS, 1),
            row("f", "mail", "sent", 0, 3),
            row("g", "mail", "sent", 0, 4),
            row("f", "mail", "failed", 0, 1),
        ]);
        assert_eq!(
            summed,
            vec![
                row("f", "mail", "failed", 0, 1),
                row("f", "mail", "sent", 0, 5),
                row("f", "mail", "sent", HOUR_MS, 1),
                row("g", "mail", "sent", 0, 4),
            ]
        );
        assert!(sum_rows(Vec::new()).is_empty());
    }
}
