//! SQLite's side of [`Tx::write_all`](super::Tx::write_all): the same rows written with diesel's
//! synchronous connection on the blocking pool (inside the caller's transaction), where
//! multi-row inserts work. Through the async wrapper every statement would be its own hop to
//! the blocking pool, which made a 1,000-enrollment batch take thousands of hops.

use super::enrollments::{all_updated, Writes, MAX_BINDS};
use super::journey::JourneyStep;
use super::schema::{capacity_ledger, dispatches, enrollments, journey_steps, tasks};
use super::TaskStatus;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Text};
use diesel::SqliteConnection;
use std::collections::BTreeMap;

/// Writes `w` with `conn`, which the caller has inside a transaction.
pub fn write(conn: &mut SqliteConnection, w: &Writes) -> QueryResult<()> {
    // As on PostgreSQL: new enrollments are inserted, the others updated (and must be stored).
    // Their keys are a view of this table here, so nothing else is written for them.
    let (created, stepped) = w.rows_to_store();
    for chunk in created.chunks(MAX_BINDS / 14) {
        diesel::insert_into(enrollments::table)
            .values(chunk.to_vec())
            .execute(conn)?;
    }
    let mut updated = 0;
    for r in &stepped {
        updated += diesel::update(enrollments::table.filter(enrollments::id.eq(&r.id)))
            .set((
                enrollments::status.eq(&r.status),
                enrollments::state.eq(&r.state),
                enrollments::next_run_at.eq(r.next_run_at),
                enrollments::journey_seq.eq(r.journey_seq),
                enrollments::updated_at.eq(r.updated_at),
            ))
            .execute(conn)?;
    }
    all_updated(updated, stepped.len())?;
    // As on PostgreSQL (see `Writes::new_and_held_dispatches`).
    let (fresh, held) = w.new_and_held_dispatches();
    for chunk in fresh.chunks(MAX_BINDS / 21) {
        diesel::insert_into(dispatches::table)
            .values(chunk.to_vec())
            .execute(conn)?;
    }
    for chunk in held.chunks(MAX_BINDS / 21) {
        diesel::insert_into(dispatches::table)
            .values(chunk.to_vec())
            .on_conflict(dispatches::idempotency_key)
            .do_nothing()
            .execute(conn)?;
    }
    for chunk in w.tasks.chunks(MAX_BINDS / 12) {
        diesel::insert_into(tasks::table)
            .values(chunk)
            .on_conflict((tasks::enrollment_id, tasks::run))
            .do_nothing()
            .execute(conn)?;
    }
    super::flow_stats::write_sqlite(conn, w)?;
    for chunk in w.ledger.chunks(MAX_BINDS / 7) {
        diesel::insert_into(capacity_ledger::table)
            .values(chunk)
            .on_conflict(capacity_ledger::key)
            .do_nothing()
            .execute(conn)?;
    }
    for t in &w.closed_tasks {
        diesel::update(
            tasks::table
                .filter(tasks::enrollment_id.eq(&t.enrollment_id))
                .filter(tasks::run.eq(t.run))
                .filter(tasks::status.eq(TaskStatus::Open.as_str())),
        )
        .set((
            tasks::status.eq(t.status.as_str()),
            tasks::outcome.eq(&t.outcome),
            tasks::completed_at.eq(Some(t.at)),
        ))
        .execute(conn)?;
    }
    // As on PostgreSQL: the journey, keyed for Watch.
    insert_journey(conn, &w.journey)
}

#[derive(diesel::QueryableByName)]
struct Key {
    #[diesel(sql_type = BigInt)]
    xid: i64,
}

/// SQLite's [`Tx::insert_journey`](super::Tx::insert_journey): the rows keyed one above their
/// account's highest key. SQLite has one writer at a time, so that is the commit order, and an
/// enrollment's rows come in seq order (see [`super::watch`]).
pub fn insert_journey(conn: &mut SqliteConnection, steps: &[JourneyStep]) -> QueryResult<()> {
    let mut keys: BTreeMap<&str, i64> = BTreeMap::new();
    for s in steps {
        if !keys.contains_key(s.account_id.as_str()) {
            let key = diesel::sql_query(
                "SELECT COALESCE(MAX(xid), 0) + 1 AS xid FROM journey_steps WHERE account_id = $1",
            )
            .bind::<Text, _>(&s.account_id)
            .get_result::<Key>(conn)?;
            keys.insert(&s.account_id, key.xid);
        }
    }
    for chunk in steps.chunks(MAX_BINDS / 7) {
        let rows: Vec<_> = chunk
            .iter()
            .map(|s| {
                (
                    journey_steps::enrollment_id.eq(&s.enrollment_id),
                    journey_steps::seq.eq(s.seq),
                    journey_steps::n.eq(s.n),
                    journey_steps::at.eq(s.at),
                    journey_steps::account_id.eq(&s.account_id),
                    journey_steps::xid.eq(keys[s.account_id.as_str()]),
                    journey_steps::entries.eq(s.encoded()),
                )
            })
            .collect();
        diesel::insert_into(journey_steps::table)
            .values(rows)
            .execute(conn)?;
    }
    Ok(())
}
