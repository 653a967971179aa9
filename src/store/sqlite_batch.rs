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
    // Last, as on PostgreSQL: the journey, numbered in its accounts' Watch order.
    insert_journey(conn, &w.journey)
}

#[derive(diesel::QueryableByName)]
struct Head {
    #[diesel(sql_type = BigInt)]
    pos: i64,
}

/// SQLite's [`Tx::insert_journey`](super::Tx::insert_journey): each account's head moved (`RETURNING` the new head), then
/// the rows with their positions. One writer at a time, so the order is the commit order.
pub fn insert_journey(conn: &mut SqliteConnection, steps: &[JourneyStep]) -> QueryResult<()> {
    let (totals, cumulative) = super::journey::positions(steps);
    let mut heads: BTreeMap<&str, i64> = BTreeMap::new();
    for (account, total) in totals {
        let head = diesel::sql_query(
            "INSERT INTO journey_heads (account_id, pos) VALUES ($1, $2) \
             ON CONFLICT (account_id) DO UPDATE SET pos = journey_heads.pos + excluded.pos \
             RETURNING pos",
        )
        .bind::<Text, _>(account)
        .bind::<BigInt, _>(total)
        .get_result::<Head>(conn)?;
        heads.insert(account, head.pos - total);
    }
    for (chunk, cum) in steps
        .chunks(MAX_BINDS / 7)
        .zip(cumulative.chunks(MAX_BINDS / 7))
    {
        let rows: Vec<_> = chunk
            .iter()
            .zip(cum)
            .map(|(s, cum)| {
                (
                    journey_steps::enrollment_id.eq(&s.enrollment_id),
                    journey_steps::seq.eq(s.seq),
                    journey_steps::n.eq(s.n),
                    journey_steps::at.eq(s.at),
                    journey_steps::account_id.eq(&s.account_id),
                    journey_steps::last_pos.eq(heads[s.account_id.as_str()] + cum),
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
