//! The manual clock's virtual "now", kept so that a `--clock manual` server restarted on the
//! same database goes on from the virtual time it had reached (demos and integration suites
//! walk weeks of virtual time; a restart must not jump back to the host's time).

use super::schema::virtual_clock;
use super::{Db, StoreError};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

/// The virtual time last saved, in epoch milliseconds; `None` before the first save.
pub async fn load(db: &Db) -> Result<Option<i64>, StoreError> {
    let conn = db.conn().await?;
    Ok(with_conn!(conn, c => virtual_clock::table
        .find(1)
        .select(virtual_clock::now_ms)
        .first::<i64>(c)
        .await
        .optional())?)
}

/// Saves the virtual time (`TestClockService.Advance` only moves it forward).
pub async fn save(db: &Db, now_ms: i64) -> Result<(), StoreError> {
    let conn = db.conn().await?;
    with_conn!(conn, c => diesel::insert_into(virtual_clock::table)
        .values((virtual_clock::id.eq(1), virtual_clock::now_ms.eq(now_ms)))
        .on_conflict(virtual_clock::id)
        .do_update()
        .set(virtual_clock::now_ms.eq(now_ms))
        .execute(c)
        .await)?;
    Ok(())
}
