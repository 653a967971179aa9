//! SQLite's side of [`Tx::write_all`](super::Tx::write_all): the same rows written with diesel's
//! synchronous connection on the blocking pool (inside the caller's transaction), where
//! multi-row inserts work. Through the async wrapper every statement would be its own hop to
//! the blocking pool, which made a 1,000-enrollment batch take thousands of hops.

use super::enrollments::{Writes, MAX_BINDS};
use super::schema::{capacity_ledger, dispatches, enrollments, journey, tasks};
use super::TaskStatus;
use diesel::prelude::*;
use diesel::upsert::excluded;
use diesel::SqliteConnection;

/// Writes `w` with `conn`, which the caller has inside a transaction.
pub fn write(conn: &mut SqliteConnection, w: &Writes) -> QueryResult<()> {
    for chunk in w.enrollments.chunks(MAX_BINDS / 14) {
        diesel::insert_into(enrollments::table)
            .values(chunk)
            .on_conflict(enrollments::id)
            .do_update()
            .set((
                enrollments::status.eq(excluded(enrollments::status)),
                enrollments::state.eq(excluded(enrollments::state)),
                enrollments::next_run_at.eq(excluded(enrollments::next_run_at)),
                enrollments::journey_seq.eq(excluded(enrollments::journey_seq)),
                enrollments::updated_at.eq(excluded(enrollments::updated_at)),
            ))
            .execute(conn)?;
    }
    for chunk in w.journey.chunks(MAX_BINDS / 5) {
        diesel::insert_into(journey::table)
            .values(chunk)
            .execute(conn)?;
    }
    for chunk in w.dispatches.chunks(MAX_BINDS / 21) {
        diesel::insert_into(dispatches::table)
            .values(chunk)
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
    Ok(())
}
