//! PostgreSQL's side of [`Tx::write_all`](super::Tx::write_all): each table's rows as one statement
//! whose values are arrays, one per column (`INSERT … SELECT unnest($1::text[]), unnest(…), …`).
//!
//! A planner batch of 1,000 steps writes about 5,000 journey rows. As a multi-row `VALUES`
//! list that is 25,000 bind parameters to encode, send, parse and plan, in chunks; as arrays it
//! is five parameters and one plan, whatever the batch size.
//!
//! The arrays are unnested in the select list (`SELECT unnest($1), unnest($2)`, a `ProjectSet`
//! that streams the rows, the arrays in lockstep), not in `FROM unnest($1, $2)`: that form is
//! `ROWS FROM (unnest($1), unnest($2))`, which first copies every array into a tuplestore of
//! its own and then zips them. For 1,000 outbox rows of 21 columns the select-list form took
//! 13–22 % less time (`scripts/pg-unnest-forms.sql`, docs/benchmarks.md). Both pad a shorter
//! array with NULLs. The lookups below that join arrays `LATERAL` keep `FROM unnest`: their
//! plans are driven from the function scan, and they read a few rows per signal or contact.

use super::enrollments::{all_updated, DispatchRow, EnrollmentRow, Writes};
use super::journey::JourneyStep;
use super::pg_array::Arr;
use super::signals::{DeliveryRow, PhoneContact, SignalRow};
use diesel::pg::Pg;
use diesel::query_builder::{AstPass, BoxedSqlQuery, Query, QueryFragment, QueryId, SqlQuery};
use diesel::sql_types::{Array, BigInt, Binary, Bool, Integer, Nullable, Text};
use diesel::QueryResult;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use futures_util::future::BoxFuture;
use std::borrow::Borrow;

/// A raw statement diesel-async may keep prepared on its connection.
///
/// diesel never caches a `sql_query` (its text could be anything), so diesel-async prepared
/// each one again on every run: a round trip to parse and describe, then one to execute, with
/// the connection's statement cache locked in between (so even pipelined statements prepared one
/// at a time). Every statement here has one fixed text whatever the number of rows (the values
/// are arrays), so caching them keeps a handful of statements per connection.
#[derive(Debug, Clone)]
pub struct Cached<Q>(pub Q);

impl<Q: QueryFragment<Pg>> QueryFragment<Pg> for Cached<Q> {
    fn walk_ast<'b>(&'b self, out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        self.0.walk_ast(out)
    }

    fn is_safe_to_cache_prepared(&self, _backend: &Pg) -> QueryResult<bool> {
        Ok(true)
    }
}

impl<Q> QueryId for Cached<Q> {
    type QueryId = ();
    // Cached by its SQL text.
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<Q: Query> Query for Cached<Q> {
    type SqlType = Q::SqlType;
}

// Runs with diesel-async's `execute` and `load`, like the query it wraps.
impl<Q> diesel::query_dsl::RunQueryDslSupport for Cached<Q> {}

/// Every result of statements pipelined on one connection, or the error that failed them.
///
/// Once a statement of a transaction fails, PostgreSQL refuses every later one with "current
/// transaction is aborted" (SQLSTATE 25P02). Taking the first error a `try_join` meets is not
/// enough: under load it met the refusal of a later statement before the unique violation
/// that caused it (the server's log had them in the right order), and a unique violation
/// that the caller answers (`ALREADY_EXISTS`, the existing record) or a deadlock it retries
/// read as a fault (`INTERNAL`). So every statement is awaited, and a refusal is the answer
/// only when nothing else failed.
pub async fn pipelined<F, T>(sent: impl IntoIterator<Item = F>) -> QueryResult<Vec<T>>
where
    F: std::future::Future<Output = QueryResult<T>>,
{
    let mut out = Vec::new();
    let mut failed: Option<diesel::result::Error> = None;
    for result in futures_util::future::join_all(sent).await {
        match (result, failed.take()) {
            (Ok(v), failed_before) => {
                out.push(v);
                failed = failed_before;
            }
            (Err(e), None) => failed = Some(e),
            (Err(e), Some(before)) => failed = Some(cause(before, e)),
        }
    }
    match failed {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// Both results of two statements pipelined on one connection, or the error that failed them
/// ([`pipelined`]).
pub fn both<A, B>(a: QueryResult<A>, b: QueryResult<B>) -> QueryResult<(A, B)> {
    match (a, b) {
        (Ok(a), Ok(b)) => Ok((a, b)),
        (Err(e), Ok(_)) | (Ok(_), Err(e)) => Err(e),
        (Err(a), Err(b)) => Err(cause(a, b)),
    }
}

/// Of two errors of one transaction, the one that failed it: `first` unless it is only the
/// refusal of a statement after the failure (25P02) and `second` is not.
fn cause(first: diesel::result::Error, second: diesel::result::Error) -> diesel::result::Error {
    let refused = |e: &diesel::result::Error| {
        matches!(e, diesel::result::Error::DatabaseError(_, info)
            if info.sqlstate().is_some_and(|s| s.as_str() == IN_FAILED_TRANSACTION))
    };
    if refused(&first) && !refused(&second) {
        second
    } else {
        first
    }
}

/// PostgreSQL's "current transaction is aborted, commands ignored until end of transaction
/// block".
const IN_FAILED_TRANSACTION: &str = "25P02";

/// Writes `w` with `c`, which the caller has inside a transaction.
pub async fn write(
    c: &mut AsyncPgConnection,
    w: &Writes,
    locked: &super::LockedRows,
) -> QueryResult<()> {
    write_with(c, w, locked, Vec::new()).await
}

/// [`write()`], and `more` statements after it, sent together: the statements of one write
/// are independent, so they go out pipelined (one round trip, not one per table;
/// PostgreSQL still runs them one after the other, in the order they are sent).
///
/// A stepped enrollment that `locked` places (its transaction claimed it) is updated at that
/// place, the others found by id.
pub async fn write_with<'a>(
    c: &'a AsyncPgConnection,
    w: &'a Writes,
    locked: &'a super::LockedRows,
    more: Vec<BoxFuture<'a, QueryResult<usize>>>,
) -> QueryResult<()> {
    // Before `sent`, whose statements borrow it.
    let count_rows = w.counts.rows();
    let mut sent: Vec<BoxFuture<'_, QueryResult<usize>>> = Vec::new();
    let (created, stepped) = w.rows_to_store();
    // Only a change of status reaches the keys (a step that moves the state alone writes none of
    // their index entries, which is why they are a table of their own).
    let moved: Vec<&EnrollmentRow> = stepped
        .iter()
        .copied()
        .filter(|r| w.status_changed(r))
        .collect();
    // A new enrollment's first journey step goes on its keys row (migration
    // `first_journey_step`): two rows an enrollment, not three. Every other step is a
    // `journey_steps` row.
    let (firsts, later) = split_first_steps(w);
    if !created.is_empty() {
        sent.push(insert_enrollments(c, created.clone()));
        let e = &created;
        let first: Vec<Option<&JourneyStep>> = e
            .iter()
            .map(|r| firsts.get(r.id.as_str()).copied())
            .collect();
        let q = Cached(
            diesel::sql_query(
                "INSERT INTO enrollment_keys (id, account_id, contact_id, flow_id, status, \
                 client_key, allow_duplicate, first_xid, first_n, first_at, first_entries) \
                 SELECT t.id, t.account_id, t.contact_id, t.flow_id, t.status, t.client_key, \
                 t.allow_duplicate, CASE WHEN t.n IS NOT NULL THEN x.xid END, t.n, t.at, \
                 t.entries \
                 FROM (SELECT unnest($1::text[]) AS id, unnest($2::text[]) AS account_id, \
                 unnest($3::text[]) AS contact_id, unnest($4::text[]) AS flow_id, \
                 unnest($5::text[]) AS status, unnest($6::text[]) AS client_key, \
                 unnest($7::bool[]) AS allow_duplicate, unnest($8::int8[]) AS n, \
                 unnest($9::int8[]) AS at, unnest($10::text[]) AS entries) AS t, \
                 (SELECT pg_current_xact_id()::text::int8 AS xid) AS x",
            )
            .bind::<Array<Text>, _>(col(e, |r| r.id.as_str()))
            .bind::<Array<Text>, _>(col(e, |r| r.account_id.as_str()))
            .bind::<Array<Text>, _>(col(e, |r| r.contact_id.as_str()))
            .bind::<Array<Text>, _>(col(e, |r| r.flow_id.as_str()))
            .bind::<Array<Text>, _>(col(e, |r| r.status.as_str()))
            .bind::<Array<Nullable<Text>>, _>(col(e, |r| r.client_key.as_deref()))
            .bind::<Array<Bool>, _>(col(e, |r| r.allow_duplicate))
            .bind::<Array<Nullable<BigInt>>, _>(col(&first, |s| s.map(|s| s.n)))
            .bind::<Array<Nullable<BigInt>>, _>(col(&first, |s| s.map(|s| s.at)))
            .bind::<Array<Nullable<Text>>, _>(col(&first, |s| s.map(|s| s.encoded()))),
        )
        .execute(&mut &*c);
        sent.push(q);
    }
    if !stepped.is_empty() {
        let mut placed = Vec::with_capacity(stepped.len());
        let mut places = Vec::with_capacity(stepped.len());
        let mut unplaced = Vec::new();
        let found = locked.places(stepped.iter().map(|r| r.id.as_str()));
        for (&r, place) in stepped.iter().zip(found) {
            match place {
                Some(place) => {
                    placed.push(r);
                    places.push(place);
                }
                None => unplaced.push(r),
            }
        }
        if !placed.is_empty() {
            sent.push(update_enrollments(c, placed, Some(places)));
        }
        if !unplaced.is_empty() {
            sent.push(update_enrollments(c, unplaced, None));
        }
        if !moved.is_empty() {
            let m = &moved;
            let q = Cached(
                diesel::sql_query(KEYS_STATUS_UPDATE)
                    .bind::<Array<Text>, _>(col(m, |r| r.id.as_str()))
                    .bind::<Array<Text>, _>(col(m, |r| r.status.as_str()))
                    .bind::<Array<Text>, _>(col(m, |r| r.account_id.as_str()))
                    .bind::<Array<Text>, _>(col(m, |r| r.flow_id.as_str()))
                    .bind::<Array<Text>, _>(col(m, |r| w.status_was(r))),
            )
            .execute(&mut &*c);
            sent.push(q);
        }
    }
    // New dispatches plainly, held steps' rows `ON CONFLICT DO NOTHING` (see
    // `Writes::new_and_held_dispatches`).
    let (fresh, held) = w.new_and_held_dispatches();
    if !fresh.is_empty() {
        sent.push(insert_dispatches(c, fresh, INSERT_DISPATCHES));
    }
    if !held.is_empty() {
        sent.push(insert_dispatches(c, held, INSERT_HELD_DISPATCHES));
    }
    if !w.tasks.is_empty() {
        let t = &w.tasks;
        let q = Cached(diesel::sql_query(
            "INSERT INTO tasks (id, account_id, enrollment_id, run, kind, step, status, outcome, \
             params, due_by, created_at, completed_at) \
             SELECT unnest($1::text[]), unnest($2::text[]), unnest($3::text[]), \
             unnest($4::int8[]), unnest($5::text[]), unnest($6::text[]), unnest($7::text[]), \
             unnest($8::text[]), unnest($9::text[]), unnest($10::int8[]), unnest($11::int8[]), \
             unnest($12::int8[]) \
             ON CONFLICT (enrollment_id, run) DO NOTHING",
        )
        .bind::<Array<Text>, _>(col(t, |r| r.id.as_str()))
        .bind::<Array<Text>, _>(col(t, |r| r.account_id.as_str()))
        .bind::<Array<Text>, _>(col(t, |r| r.enrollment_id.as_str()))
        .bind::<Array<BigInt>, _>(col(t, |r| r.run))
        .bind::<Array<Text>, _>(col(t, |r| r.kind.as_str()))
        .bind::<Array<Text>, _>(col(t, |r| r.step.as_str()))
        .bind::<Array<Text>, _>(col(t, |r| r.status.as_str()))
        .bind::<Array<Nullable<Text>>, _>(col(t, |r| r.outcome.as_deref()))
        .bind::<Array<Text>, _>(col(t, |r| r.params.as_str()))
        .bind::<Array<Nullable<BigInt>>, _>(col(t, |r| r.due_by))
        .bind::<Array<BigInt>, _>(col(t, |r| r.created_at))
        .bind::<Array<Nullable<BigInt>>, _>(col(t, |r| r.completed_at)))
        .execute(&mut &*c);
        sent.push(q);
    }
    if !w.closed_tasks.is_empty() {
        let t = &w.closed_tasks;
        let q = Cached(
            diesel::sql_query(
                "UPDATE tasks SET status = u.status, outcome = u.outcome, completed_at = u.at \
             FROM (SELECT unnest($1::text[]) AS enrollment_id, unnest($2::int8[]) AS run, \
             unnest($3::text[]) AS status, unnest($4::text[]) AS outcome, \
             unnest($5::int8[]) AS at) AS u \
             WHERE tasks.enrollment_id = u.enrollment_id AND tasks.run = u.run \
             AND tasks.status = 'open'",
            )
            .bind::<Array<Text>, _>(col(t, |r| r.enrollment_id.as_str()))
            .bind::<Array<BigInt>, _>(col(t, |r| r.run))
            .bind::<Array<Text>, _>(col(t, |r| r.status.as_str()))
            .bind::<Array<Nullable<Text>>, _>(col(t, |r| r.outcome.as_deref()))
            .bind::<Array<BigInt>, _>(col(t, |r| r.at)),
        )
        .execute(&mut &*c);
        sent.push(q);
    }
    if !w.ledger.is_empty() {
        let l = &w.ledger;
        let q = Cached(
            diesel::sql_query(
                "INSERT INTO capacity_ledger (key, account_id, sender_id, channel, at, domain, \
             gap_until) \
             SELECT unnest($1::text[]), unnest($2::text[]), unnest($3::text[]), \
             unnest($4::text[]), unnest($5::int8[]), unnest($6::text[]), unnest($7::int8[]) \
             ON CONFLICT (key) DO NOTHING",
            )
            .bind::<Array<Text>, _>(col(l, |r| r.key.as_str()))
            .bind::<Array<Text>, _>(col(l, |r| r.account_id.as_str()))
            .bind::<Array<Text>, _>(col(l, |r| r.sender_id.as_str()))
            .bind::<Array<Text>, _>(col(l, |r| r.channel.as_str()))
            .bind::<Array<BigInt>, _>(col(l, |r| r.at))
            .bind::<Array<Nullable<Text>>, _>(col(l, |r| r.domain.as_deref()))
            .bind::<Array<BigInt>, _>(col(l, |r| r.gap_until)),
        )
        .execute(&mut &*c);
        sent.push(q);
    }
    // The counts ride with the conversions, else with the exposures, else go alone: a write
    // of a flow with step experiments sends no more statements than one without.
    let mut counts = Some(&count_rows).filter(|r| !r.is_empty());
    if !w.conversions.is_empty() {
        let v = &w.conversions;
        let q = diesel::sql_query(super::flow_stats::PG_CONVERT)
            .into_boxed::<Pg>()
            .bind::<Array<Text>, _>(col(v, |r| r.enrollment_id.as_str()))
            .bind::<Array<Text>, _>(col(v, |r| r.goal.as_str()))
            .bind::<Array<BigInt>, _>(col(v, |r| r.at));
        let q = Cached(bind_counts(q, counts.take().map_or(&[], Vec::as_slice)));
        sent.push(q.execute(&mut &*c));
    }
    // After the conversions: a goal event of this write converts the window its message
    // closes, and never an exposure this write makes.
    if !w.closings.is_empty() || !w.exposures.is_empty() {
        let (k, x) = (&w.closings, &w.exposures);
        let q = diesel::sql_query(super::flow_stats::PG_EXPOSE)
            .into_boxed::<Pg>()
            .bind::<Array<Text>, _>(col(k, |r| r.enrollment_id.as_str()))
            .bind::<Array<BigInt>, _>(col(k, |r| r.at))
            .bind::<Array<Text>, _>(col(x, |r| r.enrollment_id.as_str()))
            .bind::<Array<Text>, _>(col(x, |r| r.experiment.as_str()))
            .bind::<Array<Text>, _>(col(x, |r| r.account_id.as_str()))
            .bind::<Array<Text>, _>(col(x, |r| r.flow_id.as_str()))
            .bind::<Array<Integer>, _>(col(x, |r| r.flow_version))
            .bind::<Array<Text>, _>(col(x, |r| r.step.as_str()))
            .bind::<Array<Text>, _>(col(x, |r| r.variant.as_str()))
            .bind::<Array<Text>, _>(col(x, |r| r.goal.as_str()))
            .bind::<Array<Bool>, _>(col(x, |r| r.shared))
            .bind::<Array<BigInt>, _>(col(x, |r| r.exposed_at));
        let q = Cached(bind_counts(q, counts.take().map_or(&[], Vec::as_slice)));
        sent.push(q.execute(&mut &*c));
    }
    if let Some(rows) = counts {
        let q = diesel::sql_query(super::flow_stats::PG_APPEND).into_boxed::<Pg>();
        sent.push(Cached(bind_counts(q, rows)).execute(&mut &*c));
    }
    sent.extend(more);
    // The journey, keyed for Watch (`super::watch`), after the enrollments' previous keys as
    // this transaction holds them.
    if !later.is_empty() {
        let previous: super::FastMap<&str, i64> = w
            .enrollments
            .iter()
            .map(|e| (e.id.as_str(), e.journey_xid))
            .collect();
        let after: Vec<Option<i64>> = later
            .iter()
            .map(|s| previous.get(s.enrollment_id.as_str()).copied())
            .collect();
        // Made here, not when first polled, like the statements before it: each is queued
        // for sending as it is made, so the batch goes out in one round trip.
        sent.push(journey_statement(&later, &after).execute(&mut &*c));
    }
    pipelined(sent).await?;
    Ok(())
}

/// The journey steps of `w` split into new enrollments' first steps (seq 1, by enrollment),
/// which go on their keys rows, and the rest, which go to `journey_steps`.
fn split_first_steps(w: &Writes) -> (super::FastMap<&str, &JourneyStep>, Vec<&JourneyStep>) {
    let mut firsts = super::FastMap::default();
    let mut later = Vec::with_capacity(w.journey.len());
    for step in &w.journey {
        if step.seq == 1 && w.created.contains(&step.enrollment_id) {
            firsts.insert(step.enrollment_id.as_str(), step);
        } else {
            later.push(step);
        }
    }
    (firsts, later)
}

/// `q` with the eight arrays of count rows `r` bound next ([`super::flow_stats::PG_APPEND`]'s
/// columns, which [`super::flow_stats::PG_CONVERT`] and [`super::flow_stats::PG_EXPOSE`] take
/// after their own).
fn bind_counts<'a>(
    q: BoxedSqlQuery<'a, Pg, SqlQuery>,
    r: &'a [super::flow_stats::CountRow],
) -> BoxedSqlQuery<'a, Pg, SqlQuery> {
    q.bind::<Array<Text>, _>(col(r, |r| r.account_id.as_str()))
        .bind::<Array<Text>, _>(col(r, |r| r.flow_id.as_str()))
        .bind::<Array<Integer>, _>(col(r, |r| r.flow_version))
        .bind::<Array<Text>, _>(col(r, |r| r.step.as_str()))
        .bind::<Array<Text>, _>(col(r, |r| r.metric.as_str()))
        .bind::<Array<Text>, _>(col(r, |r| r.variant.as_str()))
        .bind::<Array<BigInt>, _>(col(r, |r| r.hour))
        .bind::<Array<BigInt>, _>(col(r, |r| r.n))
}

/// A status change, copied to the enrollments' keys rows: `$1` their ids, `$2` the new
/// statuses, `$3` their accounts, `$4` their flows, `$5` the statuses they had. Each row is
/// found by every column of `enrollment_keys_flow`, one probe (the keys table has no primary
/// key: migration `enrollment_keys_by_flow`).
pub const KEYS_STATUS_UPDATE: &str = "UPDATE enrollment_keys k SET status = u.status \
     FROM (SELECT unnest($1::text[]) AS id, unnest($2::text[]) AS status, \
     unnest($3::text[]) AS account_id, unnest($4::text[]) AS flow_id, \
     unnest($5::text[]) AS was) AS u \
     WHERE k.account_id = u.account_id AND k.flow_id = u.flow_id AND k.status = u.was \
     AND k.id = u.id";

/// The outbox's insert, its rows one array per column; `ON CONFLICT` only in
/// [`INSERT_HELD_DISPATCHES`].
macro_rules! insert_dispatches_sql {
    ($tail:literal) => {
        concat!(
            "INSERT INTO dispatches (id, account_id, enrollment_id, run, step, idempotency_key, \
             channel, recipient, template, input, channel_params, message_id, status, \
             lease_owner, lease_until, attempts, provider_message_id, failure, created_at, \
             due_at, hold_code, variant) \
             SELECT unnest($1::text[]), unnest($2::text[]), unnest($3::text[]), \
             unnest($4::int8[]), unnest($5::text[]), unnest($6::text[]), unnest($7::text[]), \
             unnest($8::text[]), unnest($9::text[]), unnest($10::text[]), unnest($11::text[]), \
             unnest($12::text[]), unnest($13::text[]), unnest($14::text[]), \
             unnest($15::int8[]), unnest($16::int4[]), unnest($17::text[]), unnest($18::text[]), \
             unnest($19::int8[]), unnest($20::int8[]), unnest($21::text[]), unnest($22::text[])",
            $tail
        )
    };
}

/// New dispatches: each key is written once (see [`Writes::new_and_held_dispatches`]).
const INSERT_DISPATCHES: &str = insert_dispatches_sql!("");
/// Held steps' rows: a step held again keeps the row of its first hold.
const INSERT_HELD_DISPATCHES: &str =
    insert_dispatches_sql!(" ON CONFLICT (idempotency_key) DO NOTHING");

fn insert_dispatches<'a>(
    c: &'a AsyncPgConnection,
    d: Vec<&'a DispatchRow>,
    sql: &'static str,
) -> BoxFuture<'a, QueryResult<usize>> {
    Box::pin(async move {
        Cached(
            diesel::sql_query(sql)
                .bind::<Array<Text>, _>(col(&d, |r| r.id.as_str()))
                .bind::<Array<Text>, _>(col(&d, |r| r.account_id.as_str()))
                .bind::<Array<Text>, _>(col(&d, |r| r.enrollment_id.as_str()))
                .bind::<Array<BigInt>, _>(col(&d, |r| r.run))
                .bind::<Array<Text>, _>(col(&d, |r| r.step.as_str()))
                .bind::<Array<Text>, _>(col(&d, |r| r.idempotency_key.as_str()))
                .bind::<Array<Text>, _>(col(&d, |r| &*r.channel))
                .bind::<Array<Text>, _>(col(&d, |r| r.recipient.as_str()))
                .bind::<Array<Text>, _>(col(&d, |r| r.template.as_str()))
                .bind::<Array<Text>, _>(col(&d, |r| r.input.as_str()))
                .bind::<Array<Nullable<Text>>, _>(col(&d, |r| r.channel_params.as_deref()))
                .bind::<Array<Nullable<Text>>, _>(col(&d, |r| r.message_id.as_deref()))
                .bind::<Array<Text>, _>(col(&d, |r| &*r.status))
                .bind::<Array<Nullable<Text>>, _>(col(&d, |r| r.lease_owner.as_deref()))
                .bind::<Array<Nullable<BigInt>>, _>(col(&d, |r| r.lease_until))
                .bind::<Array<Integer>, _>(col(&d, |r| r.attempts))
                .bind::<Array<Nullable<Text>>, _>(col(&d, |r| r.provider_message_id.as_deref()))
                .bind::<Array<Nullable<Text>>, _>(col(&d, |r| r.failure.as_deref()))
                .bind::<Array<BigInt>, _>(col(&d, |r| r.created_at))
                .bind::<Array<BigInt>, _>(col(&d, |r| r.due_at))
                .bind::<Array<Nullable<Text>>, _>(col(&d, |r| r.hold_code.as_deref()))
                .bind::<Array<Nullable<Text>>, _>(col(&d, |r| r.variant.as_deref())),
        )
        .execute(&mut &*c)
        .await
    })
}

/// Updates stepped enrollment rows: at their `places` (ctid) when given, else
/// found by id. Every row must be stored: a count short of them is an error.
///
/// A place spares the primary key's probe for each row (a TID scan instead): 1,000 updates
/// at their places took 10-30 % less time than by id (pgbench, 100,000 stored). The id is
/// compared too, so a place that held another row could never be written.
fn update_enrollments<'a>(
    c: &'a AsyncPgConnection,
    e: Vec<&'a EnrollmentRow>,
    places: Option<Vec<super::pg_array::Place>>,
) -> BoxFuture<'a, QueryResult<usize>> {
    macro_rules! set {
        () => {
            "UPDATE enrollments e SET status = u.status, state = u.state, \
             next_run_at = u.next_run_at, journey_seq = u.journey_seq, \
             updated_at = u.updated_at, \
             journey_xid = GREATEST(e.journey_xid, pg_current_xact_id()::text::int8) \
             FROM (SELECT unnest($1::text[]) AS id, unnest($2::text[]) AS status, \
             unnest($3::bytea[]) AS state, unnest($4::int8[]) AS next_run_at, \
             unnest($5::int8[]) AS journey_seq, unnest($6::int8[]) AS updated_at"
        };
    }
    const PLACED: &str = concat!(
        set!(),
        ", unnest($7::tid[]) AS place) AS u WHERE e.ctid = u.place AND e.id = u.id"
    );
    const BY_ID: &str = concat!(set!(), ") AS u WHERE e.id = u.id");
    Box::pin(async move {
        let expected = e.len();
        let q = diesel::sql_query(if places.is_some() { PLACED } else { BY_ID })
            .into_boxed::<Pg>()
            .bind::<Array<Text>, _>(col(&e, |r| r.id.as_str()))
            .bind::<Array<Text>, _>(col(&e, |r| r.status.as_str()))
            .bind::<Array<Binary>, _>(col(&e, |r| r.state.as_slice()))
            .bind::<Array<Nullable<BigInt>>, _>(col(&e, |r| r.next_run_at))
            .bind::<Array<BigInt>, _>(col(&e, |r| r.journey_seq))
            .bind::<Array<BigInt>, _>(col(&e, |r| r.updated_at));
        let q = match places {
            Some(p) => q.bind::<Array<super::pg_array::Tid>, _>(super::pg_array::Arr(p)),
            None => q,
        };
        all_updated(Cached(q).execute(&mut &*c).await?, expected)
    })
}

/// Inserts new enrollment rows (their keys go in beside them, see [`write_with`]).
fn insert_enrollments<'a>(
    c: &'a AsyncPgConnection,
    e: Vec<&'a EnrollmentRow>,
) -> BoxFuture<'a, QueryResult<usize>> {
    Box::pin(async move {
        Cached(
            diesel::sql_query(
                "INSERT INTO enrollments (id, account_id, flow_id, flow_version, contact_id, \
                 sender_id, status, client_key, state, next_run_at, journey_seq, created_at, \
                 updated_at, allow_duplicate, journey_xid) \
                 SELECT unnest($1::text[]), unnest($2::text[]), unnest($3::text[]), \
                 unnest($4::int4[]), unnest($5::text[]), unnest($6::text[]), unnest($7::text[]), \
                 unnest($8::text[]), unnest($9::bytea[]), unnest($10::int8[]), \
                 unnest($11::int8[]), unnest($12::int8[]), unnest($13::int8[]), \
                 unnest($14::bool[]), pg_current_xact_id()::text::int8",
            )
            .bind::<Array<Text>, _>(col(&e, |r| r.id.as_str()))
            .bind::<Array<Text>, _>(col(&e, |r| r.account_id.as_str()))
            .bind::<Array<Text>, _>(col(&e, |r| r.flow_id.as_str()))
            .bind::<Array<Integer>, _>(col(&e, |r| r.flow_version))
            .bind::<Array<Text>, _>(col(&e, |r| r.contact_id.as_str()))
            .bind::<Array<Text>, _>(col(&e, |r| r.sender_id.as_str()))
            .bind::<Array<Text>, _>(col(&e, |r| r.status.as_str()))
            .bind::<Array<Nullable<Text>>, _>(col(&e, |r| r.client_key.as_deref()))
            .bind::<Array<Binary>, _>(col(&e, |r| r.state.as_slice()))
            .bind::<Array<Nullable<BigInt>>, _>(col(&e, |r| r.next_run_at))
            .bind::<Array<BigInt>, _>(col(&e, |r| r.journey_seq))
            .bind::<Array<BigInt>, _>(col(&e, |r| r.created_at))
            .bind::<Array<BigInt>, _>(col(&e, |r| r.updated_at))
            .bind::<Array<Bool>, _>(col(&e, |r| r.allow_duplicate)),
        )
        .execute(&mut &*c)
        .await
    })
}

/// The journey's statement: the rows of `steps`, each keyed for Watch with this transaction's
/// id, or its enrollment's previous key when that is higher (a transaction can get its id
/// before it waits for the enrollment's lock, behind a writer with a higher one). `after[i]` is
/// that previous key as the writer read it from the enrollment row it holds locked
/// (`journey_xid`); `None` looks the enrollment's previous row up instead, one index probe a
/// row, or when its only earlier step is the first (on its keys row) the enrollment's
/// `journey_xid`. A first entry (seq 1: a new enrollment) has none. See [`super::watch`].
pub fn journey_statement<'a, S: Borrow<JourneyStep>>(
    steps: &'a [S],
    after: &[Option<i64>],
) -> Cached<BoxedSqlQuery<'a, Pg, SqlQuery>> {
    debug_assert_eq!(steps.len(), after.len());
    Cached(
        diesel::sql_query(
            "INSERT INTO journey_steps (enrollment_id, seq, n, at, account_id, xid, entries) \
             SELECT t.enrollment_id, t.seq, t.n, t.at, t.account_id, \
             CASE WHEN t.seq <= 1 THEN x.xid ELSE GREATEST(x.xid, COALESCE(t.after, \
             (SELECT p.xid FROM journey_steps p WHERE p.enrollment_id = t.enrollment_id \
             AND p.seq < t.seq ORDER BY p.seq DESC LIMIT 1), \
             (SELECT e.journey_xid FROM enrollments e WHERE e.id = t.enrollment_id))) END, \
             t.entries \
             FROM (SELECT unnest($1::text[]) AS enrollment_id, unnest($2::int8[]) AS seq, \
             unnest($3::int8[]) AS n, unnest($4::int8[]) AS at, unnest($5::text[]) AS account_id, \
             unnest($6::text[]) AS entries, unnest($7::int8[]) AS after) AS t, \
             (SELECT pg_current_xact_id()::text::int8 AS xid) AS x",
        )
        .into_boxed::<Pg>()
        .bind::<Array<Text>, _>(col(steps, |s| s.borrow().enrollment_id.as_str()))
        .bind::<Array<BigInt>, _>(col(steps, |s| s.borrow().seq))
        .bind::<Array<BigInt>, _>(col(steps, |s| s.borrow().n))
        .bind::<Array<BigInt>, _>(col(steps, |s| s.borrow().at))
        .bind::<Array<Text>, _>(col(steps, |s| s.borrow().account_id.as_str()))
        .bind::<Array<Text>, _>(col(steps, |s| s.borrow().encoded()))
        .bind::<Array<Nullable<BigInt>>, _>(Arr(after.to_vec())),
    )
}

/// Inserts `rows` unless a signal with the same (account, provider id) is stored; returns the
/// ids inserted.
pub async fn insert_signals(c: &AsyncPgConnection, rows: &[SignalRow]) -> QueryResult<Vec<String>> {
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    #[derive(diesel::QueryableByName)]
    struct Id {
        #[diesel(sql_type = Text)]
        id: String,
    }
    let ids: Vec<Id> = Cached(diesel::sql_query(
        "INSERT INTO signals (id, account_id, contact_id, source, provider_id, raises, payload, \
         created_at, kind, channel, contact_ids, routed_at) \
         SELECT unnest($1::text[]), unnest($2::text[]), unnest($3::text[]), unnest($4::text[]), \
         unnest($5::text[]), unnest($6::text[]), unnest($7::text[]), unnest($8::int8[]), \
         unnest($9::text[]), unnest($10::text[]), unnest($11::text[]), unnest($12::int8[]) \
         ON CONFLICT DO NOTHING RETURNING id",
    )
    .bind::<Array<Text>, _>(col(rows, |r| r.id.as_str()))
    .bind::<Array<Text>, _>(col(rows, |r| r.account_id.as_str()))
    .bind::<Array<Text>, _>(col(rows, |r| r.contact_id.as_str()))
    .bind::<Array<Text>, _>(col(rows, |r| r.source.as_str()))
    .bind::<Array<Nullable<Text>>, _>(col(rows, |r| r.provider_id.as_deref()))
    .bind::<Array<Text>, _>(col(rows, |r| r.raises.as_str()))
    .bind::<Array<Text>, _>(col(rows, |r| r.payload.as_str()))
    .bind::<Array<BigInt>, _>(col(rows, |r| r.created_at))
    .bind::<Array<Text>, _>(col(rows, |r| r.kind.as_str()))
    .bind::<Array<Nullable<Text>>, _>(col(rows, |r| r.channel.as_deref()))
    .bind::<Array<Text>, _>(col(rows, |r| r.contact_ids.as_str()))
    .bind::<Array<Nullable<BigInt>>, _>(col(rows, |r| r.routed_at)))
    .load(&mut &*c)
    .await?;
    Ok(ids.into_iter().map(|i| i.id).collect())
}

/// Remembers the webhook signatures `keys` (account, signature, seen at) unless stored, and
/// forgets those seen before `forget_before` (they can no longer pass the timestamp check), in
/// one round trip; returns the (account, signature) pairs stored now. A pair twice in `keys` is
/// stored once.
pub async fn remember_replays(
    c: &AsyncPgConnection,
    keys: &[(&str, &str, i64)],
    forget_before: i64,
) -> QueryResult<Vec<(String, String)>> {
    #[derive(diesel::QueryableByName)]
    struct Key {
        #[diesel(sql_type = Text)]
        account_id: String,
        #[diesel(sql_type = Text)]
        signature: String,
    }
    // Sorted, so groups storing the same signatures meet them in the same order (one waits
    // for the other instead of each holding what the other needs).
    let mut keys = keys.to_vec();
    keys.sort_unstable();
    let keys = &keys[..];
    let forget = Cached(
        diesel::sql_query("DELETE FROM webhook_replays WHERE seen_at < $1")
            .bind::<BigInt, _>(forget_before),
    )
    .execute(&mut &*c);
    let remember = Cached(
        diesel::sql_query(
            "INSERT INTO webhook_replays (account_id, signature, seen_at) \
             SELECT unnest($1::text[]), unnest($2::text[]), unnest($3::int8[]) \
             ON CONFLICT DO NOTHING RETURNING account_id, signature",
        )
        .bind::<Array<Text>, _>(col(keys, |k| k.0))
        .bind::<Array<Text>, _>(col(keys, |k| k.1))
        .bind::<Array<BigInt>, _>(col(keys, |k| k.2)),
    )
    .load::<Key>(&mut &*c);
    let (forgot, stored) = futures_util::join!(forget, remember);
    let (_, stored) = both(forgot, stored)?;
    Ok(stored
        .into_iter()
        .map(|k| (k.account_id, k.signature))
        .collect())
}

/// Inserts `signal_deliveries` rows (nothing to send when there are none); a future, so the
/// caller can pipeline it with [`write_with`].
pub fn insert_deliveries<'a>(
    c: &'a AsyncPgConnection,
    rows: &'a [DeliveryRow],
) -> BoxFuture<'a, QueryResult<usize>> {
    if rows.is_empty() {
        return Box::pin(async { Ok(0) });
    }
    Cached(
        diesel::sql_query(
            "INSERT INTO signal_deliveries (signal_id, enrollment_id, effect, branch, at) \
         SELECT unnest($1::text[]), unnest($2::text[]), unnest($3::text[]), unnest($4::text[]), \
         unnest($5::int8[])",
        )
        .bind::<Array<Text>, _>(col(rows, |r| r.signal_id.as_str()))
        .bind::<Array<Text>, _>(col(rows, |r| r.enrollment_id.as_str()))
        .bind::<Array<Text>, _>(col(rows, |r| r.effect.as_str()))
        .bind::<Array<Nullable<Text>>, _>(col(rows, |r| r.branch.as_deref()))
        .bind::<Array<BigInt>, _>(col(rows, |r| r.at)),
    )
    .execute(&mut &*c)
}

/// The active or paused enrollments of the (account, contact) `pairs`, locked `FOR UPDATE` in
/// id order (concurrent callers lock in the same order and cannot deadlock).
///
/// A join on the pairs, not `account_id = ANY(…) AND contact_id = ANY(…)`: with the lists,
/// PostgreSQL sometimes walked another index of the account and filtered every enrollment by
/// contact (20,000 rows read for 5 found, 15 ms, seen on a freshly loaded table); the join can
/// only be driven by the contact index (of `enrollment_keys`). The status is asked of the
/// enrollment too: a row locked after a concurrent commit is checked again as it is now.
pub async fn reached_enrollments(
    c: &AsyncPgConnection,
    pairs: &[(String, String)],
) -> QueryResult<Vec<EnrollmentRow>> {
    if pairs.is_empty() {
        return Ok(Vec::new());
    }
    Cached(
        diesel::sql_query(REACHED_ENROLLMENTS)
            .bind::<Array<Text>, _>(col(pairs, |p| p.0.as_str()))
            .bind::<Array<Text>, _>(col(pairs, |p| p.1.as_str())),
    )
    .load(&mut &*c)
    .await
}

/// [`reached_enrollments`]' statement: `$1` the accounts, `$2` the contacts.
pub const REACHED_ENROLLMENTS: &str =
    "SELECT e.* FROM unnest($1::text[], $2::text[]) AS k(account_id, contact_id) \
     JOIN enrollment_keys x ON x.account_id = k.account_id AND x.contact_id = k.contact_id \
     AND x.status IN ('active', 'paused') \
     JOIN enrollments e ON e.id = x.id AND e.status IN ('active', 'paused') \
     ORDER BY e.id FOR UPDATE OF e";

/// The acks of a `BatchAckDispatch` ([`super::Tx::ack_dispatches`]), as one statement.
pub async fn ack_dispatches(
    c: &mut AsyncPgConnection,
    acks: &[(&str, super::dispatches::AckUpdate<'_>)],
) -> QueryResult<usize> {
    Cached(
        diesel::sql_query(
            "UPDATE dispatches d SET status = u.status, provider_message_id = u.provider_message_id, \
             failure = u.failure, due_at = u.due_at, lease_until = NULL \
             FROM (SELECT unnest($1::text[]) AS id, unnest($2::text[]) AS status, \
             unnest($3::text[]) AS provider_message_id, unnest($4::text[]) AS failure, \
             unnest($5::int8[]) AS due_at) AS u WHERE d.id = u.id",
        )
        .bind::<Array<Text>, _>(col(acks, |a| a.0))
        .bind::<Array<Text>, _>(col(acks, |a| a.1.status.as_str()))
        .bind::<Array<Nullable<Text>>, _>(col(acks, |a| a.1.provider_message_id))
        .bind::<Array<Nullable<Text>>, _>(col(acks, |a| a.1.failure))
        .bind::<Array<BigInt>, _>(col(acks, |a| a.1.due_at)),
    )
    .execute(c)
    .await
}

/// See `Tx::flows_with_live_duplicates`.
pub async fn flows_with_live_duplicates(
    c: &mut AsyncPgConnection,
    account_id: &str,
    flow_ids: &[&str],
) -> QueryResult<Vec<String>> {
    #[derive(diesel::QueryableByName)]
    struct Flow {
        #[diesel(sql_type = Text)]
        flow_id: String,
    }
    let rows: Vec<Flow> = Cached(
        diesel::sql_query(concat!(
            "SELECT DISTINCT flow_id FROM enrollment_keys WHERE account_id = $1 \
             AND flow_id = ANY($2::text[]) AND ",
            super::enrollments::live_duplicate_predicate!()
        ))
        .bind::<Text, _>(account_id)
        .bind::<Array<Text>, _>(flow_ids),
    )
    .load(c)
    .await?;
    Ok(rows.into_iter().map(|r| r.flow_id).collect())
}

/// The (contact, flow, enrollment) of every active or paused enrollment of the account's
/// `contact_ids`: BatchEnroll's duplicate check.
///
/// One index lookup per contact, whatever the statistics say: as `contact_id = ANY($2)`, the
/// plan made while the table was young (a fresh database filling up) kept scanning the account's
/// enrollments and hashing every contact id, 27 ms per 1,000 contacts and growing with the
/// table. `OFFSET 0` keeps the lateral lookup a subquery the planner cannot turn
/// into a hash join over the whole table (and, unlike a `LIMIT`, drops nothing).
pub async fn live_enrollments_of(
    c: &mut AsyncPgConnection,
    account_id: &str,
    contact_ids: &[&str],
) -> QueryResult<Vec<(String, String, String)>> {
    #[derive(diesel::QueryableByName)]
    struct Live {
        #[diesel(sql_type = Text)]
        contact_id: String,
        #[diesel(sql_type = Text)]
        flow_id: String,
        #[diesel(sql_type = Text)]
        id: String,
    }
    let mut ids = contact_ids.to_vec();
    ids.sort_unstable();
    ids.dedup();
    let rows: Vec<Live> = Cached(
        diesel::sql_query(
            "SELECT e.contact_id, e.flow_id, e.id FROM unnest($2::text[]) AS k(contact_id) \
             CROSS JOIN LATERAL (SELECT contact_id, flow_id, id FROM enrollment_keys \
             WHERE account_id = $1 AND contact_id = k.contact_id \
             AND status IN ('active', 'paused') OFFSET 0) e",
        )
        .bind::<Text, _>(account_id)
        .bind::<Array<Text>, _>(ids),
    )
    .load(c)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| (r.contact_id, r.flow_id, r.id))
        .collect())
}

/// The account's contacts with these ids (those that exist): one primary-key lookup each, for
/// the reason given at [`live_enrollments_of`].
pub async fn contacts_by_id(
    c: &mut AsyncPgConnection,
    account_id: &str,
    ids: &[String],
) -> QueryResult<Vec<super::contacts::ContactRow>> {
    Cached(
        diesel::sql_query(
            "SELECT c.* FROM unnest($2::text[]) AS k(id) \
             CROSS JOIN LATERAL (SELECT * FROM contacts \
             WHERE account_id = $1 AND id = k.id LIMIT 1) c",
        )
        .bind::<Text, _>(account_id)
        .bind::<Array<Text>, _>(ids),
    )
    .load(c)
    .await
}

/// Every contact with one of the (account, E.164 phone) `pairs`, oldest first. A join on the
/// pairs, for the reason given at [`reached_enrollments`].
pub async fn contacts_by_phone(
    c: &mut AsyncPgConnection,
    pairs: &[(String, String)],
) -> QueryResult<Vec<PhoneContact>> {
    #[derive(diesel::QueryableByName)]
    struct Found {
        #[diesel(sql_type = Text)]
        account_id: String,
        #[diesel(sql_type = Nullable<Text>)]
        phone: Option<String>,
        #[diesel(sql_type = Text)]
        id: String,
        #[diesel(sql_type = Nullable<Text>)]
        tz: Option<String>,
        #[diesel(sql_type = Nullable<Text>)]
        email: Option<String>,
    }
    let found: Vec<Found> = Cached(
        diesel::sql_query(CONTACTS_BY_PHONE)
            .bind::<Array<Text>, _>(col(pairs, |p| p.0.as_str()))
            .bind::<Array<Text>, _>(col(pairs, |p| p.1.as_str())),
    )
    .load(c)
    .await?;
    Ok(found
        .into_iter()
        .map(|f| PhoneContact {
            account_id: f.account_id,
            phone: f.phone,
            id: f.id,
            tz: f.tz,
            email: f.email,
        })
        .collect())
}

/// [`contacts_by_phone`]' statement: `$1` the accounts, `$2` the numbers.
pub const CONTACTS_BY_PHONE: &str =
    "SELECT DISTINCT ct.account_id, ct.phone, ct.id, ct.created_at, ct.tz, ct.email \
     FROM unnest($1::text[], $2::text[]) AS k(account_id, phone) \
     JOIN contacts ct ON ct.account_id = k.account_id AND ct.phone = k.phone \
     ORDER BY ct.created_at, ct.id";

/// One column of `rows`, as the array bound to its parameter.
fn col<'a, R, T>(rows: &'a [R], f: impl Fn(&'a R) -> T) -> Arr<T> {
    Arr(rows.iter().map(f).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use diesel::result::{DatabaseErrorInformation, DatabaseErrorKind, Error, SqlState};

    /// An error as PostgreSQL reports it: a kind and a SQLSTATE.
    #[derive(Debug)]
    struct Reported(&'static str);

    impl DatabaseErrorInformation for Reported {
        fn message(&self) -> &str {
            self.0
        }
        fn details(&self) -> Option<&str> {
            None
        }
        fn hint(&self) -> Option<&str> {
            None
        }
        fn table_name(&self) -> Option<&str> {
            None
        }
        fn column_name(&self) -> Option<&str> {
            None
        }
        fn constraint_name(&self) -> Option<&str> {
            None
        }
        fn statement_position(&self) -> Option<i32> {
            None
        }
        fn sqlstate(&self) -> Option<SqlState> {
            self.0.parse().ok()
        }
    }

    fn error(kind: DatabaseErrorKind, code: &'static str) -> Error {
        Error::DatabaseError(kind, Box::new(Reported(code)))
    }

    fn refused() -> QueryResult<usize> {
        Err(error(DatabaseErrorKind::Unknown, IN_FAILED_TRANSACTION))
    }

    fn duplicate() -> QueryResult<usize> {
        Err(error(DatabaseErrorKind::UniqueViolation, "23505"))
    }

    fn code(e: &Error) -> String {
        match e {
            Error::DatabaseError(_, info) => info.sqlstate().unwrap().as_str().to_string(),
            other => panic!("{other:?}"),
        }
    }

    /// Each case: the statements' results in the order they were made, and the SQLSTATE of
    /// the answer. A refusal made before the statement that failed the transaction (the order
    /// the server answered them in) is not the answer; BatchEnroll answered such a unique
    /// violation `INTERNAL` under load.
    #[tokio::test]
    async fn the_answer_is_the_error_that_failed_the_transaction() {
        let cases: Vec<(Vec<QueryResult<usize>>, Option<&str>)> = vec![
            (vec![Ok(1), Ok(2)], None),
            (vec![Ok(1), duplicate(), refused()], Some("23505")),
            (vec![refused(), duplicate(), Ok(3)], Some("23505")),
            (
                vec![refused(), Ok(1), refused(), duplicate()],
                Some("23505"),
            ),
            (
                vec![Ok(1), refused(), refused()],
                Some(IN_FAILED_TRANSACTION),
            ),
            (
                vec![Err(error(DatabaseErrorKind::Unknown, "40P01")), duplicate()],
                Some("40P01"),
            ),
        ];
        for (results, want) in cases {
            let shown = format!("{results:?}");
            let got = pipelined(results.into_iter().map(std::future::ready)).await;
            match (want, got) {
                (None, Ok(all)) => assert_eq!(all, vec![1, 2]),
                (Some(want), Err(e)) => assert_eq!(code(&e), want, "{shown}"),
                (want, got) => panic!("{shown}: want {want:?}, got {got:?}"),
            }
        }
        let pair = both(
            refused(),
            Err::<(), _>(error(DatabaseErrorKind::UniqueViolation, "23505")),
        );
        assert_eq!(code(&pair.unwrap_err()), "23505");
        let pair = both(duplicate(), refused());
        assert_eq!(code(&pair.unwrap_err()), "23505");
    }
}
