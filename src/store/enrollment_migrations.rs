//! The SQL of `enrollment_migrations` and of the reads a move makes: an operator's move of a
//! flow's running enrollments to another version, one row per move (idempotent by the caller's
//! key, resumed from its cursor after a crash), and the flow's live enrollments read page by page
//! in id order — unlocked for the plan, locked (`FOR UPDATE` of the enrollment rows, in id order
//! as the signal paths lock them, so no two writers deadlock) for a batch that moves them.

use super::enrollments::{EnrollmentRow, LIVE};
use super::schema::{enrollment_keys, enrollment_migrations, enrollments};
use super::{Conn, Db, StoreError, Tx};
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Text};
use diesel_async::RunQueryDsl;

/// An `enrollment_migrations` row.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = enrollment_migrations)]
pub struct MigrationRow {
    pub id: String,
    pub account_id: String,
    pub flow_id: String,
    pub client_key: String,
    /// What was asked, normalized, as JSON.
    pub request: String,
    /// [`MigrationStatus`] as text.
    pub status: String,
    pub moved: i64,
    /// The groups moved so far, as JSON.
    pub groups: String,
    /// The last enrollment id a committed batch passed.
    pub cursor: String,
    pub started_by: String,
    pub lease_until: i64,
    pub created_at: i64,
    pub finished_at: Option<i64>,
}

/// Where a move stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MigrationStatus {
    /// Batches remain (or a crash stopped it: another call or replica resumes it).
    Running,
    /// Every enrollment it was asked to move has moved (or was left with its problem).
    Done,
}

impl MigrationStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            MigrationStatus::Running => "running",
            MigrationStatus::Done => "done",
        }
    }
}

/// The flow's live (active or paused) enrollments after `after_id` in id order, at most
/// `limit`, whatever their version (the caller keeps the versions it moves: the page's last id
/// is the cursor either way); locked until the transaction ends when `lock` (PostgreSQL: only
/// the enrollment rows, so a writer that holds one and updates its keys row cannot deadlock
/// with this read). Each status is read along the keys index in id order and the two merged,
/// so a page costs the same at the end of a million enrollments as at the start.
fn live_page_sql(lock: bool) -> String {
    let branch = |status: &str| {
        format!(
            "SELECT id FROM (SELECT id FROM enrollment_keys WHERE account_id = $1 AND flow_id = $2 \
             AND status = '{status}' AND id > $3 ORDER BY id LIMIT $4) AS {status}"
        )
    };
    format!(
        "SELECT e.id, e.account_id, e.flow_id, e.flow_version, e.contact_id, e.sender_id, \
         e.status, e.client_key, e.state, e.next_run_at, e.journey_seq, e.journey_xid, \
         e.created_at, e.updated_at, e.allow_duplicate FROM enrollments e \
         WHERE e.id IN (SELECT id FROM ({} UNION ALL {}) AS live ORDER BY id LIMIT $4) \
         ORDER BY e.id{}",
        branch(LIVE[0]),
        branch(LIVE[1]),
        if lock { " FOR UPDATE OF e" } else { "" }
    )
}

macro_rules! live_page {
    ($sql:expr, $account_id:expr, $flow_id:expr, $after_id:expr, $limit:expr) => {
        diesel::sql_query($sql)
            .bind::<Text, _>($account_id)
            .bind::<Text, _>($flow_id)
            .bind::<Text, _>($after_id)
            .bind::<BigInt, _>($limit)
    };
}

/// A page of the flow's live enrollments after `after_id`, unlocked: what the plan of a move
/// (and its dry run) counts.
pub async fn live_page(
    db: &Db,
    account_id: &str,
    flow_id: &str,
    after_id: &str,
    limit: i64,
) -> Result<Vec<EnrollmentRow>, StoreError> {
    let sql = live_page_sql(false);
    let conn = db.conn().await?;
    Ok(
        with_conn!(conn, c => live_page!(sql, account_id, flow_id, after_id, limit)
        .load::<EnrollmentRow>(c)
        .await)?,
    )
}

/// How many live enrollments of the flow run on each version, by version.
pub async fn live_by_version(
    db: &Db,
    account_id: &str,
    flow_id: &str,
) -> Result<Vec<(i32, i64)>, StoreError> {
    let conn = db.conn().await?;
    Ok(with_conn!(conn, c => enrollments::table
        .inner_join(enrollment_keys::table)
        .filter(enrollment_keys::account_id.eq(account_id))
        .filter(enrollment_keys::flow_id.eq(flow_id))
        .filter(enrollment_keys::status.eq_any(LIVE))
        .group_by(enrollments::flow_version)
        .select((enrollments::flow_version, diesel::dsl::count_star()))
        .order(enrollments::flow_version.asc())
        .load(c)
        .await)?)
}

/// The account's move with this key, if any.
pub async fn by_client_key(
    db: &Db,
    account_id: &str,
    client_key: &str,
) -> Result<Option<MigrationRow>, StoreError> {
    let conn = db.conn().await?;
    Ok(with_conn!(conn, c => enrollment_migrations::table
        .filter(enrollment_migrations::account_id.eq(account_id))
        .filter(enrollment_migrations::client_key.eq(client_key))
        .select(MigrationRow::as_select())
        .first(c)
        .await
        .optional())?)
}

/// Takes over the moves still running whose runner's lease ran out before `now_ms` (its
/// replica stopped): each is leased to the caller until `lease_until`, one caller each.
pub async fn claim_abandoned(
    db: &Db,
    now_ms: i64,
    lease_until: i64,
) -> Result<Vec<MigrationRow>, StoreError> {
    let conn = db.conn().await?;
    Ok(with_conn!(conn, c => diesel::update(
        enrollment_migrations::table
            .filter(enrollment_migrations::status.eq(MigrationStatus::Running.as_str()))
            .filter(enrollment_migrations::lease_until.lt(now_ms)),
    )
    .set(enrollment_migrations::lease_until.eq(lease_until))
    .returning(MigrationRow::as_returning())
    .get_results(c)
    .await)?)
}

impl Tx {
    /// Stores a new move, or finds the one the account already has under its key: the stored
    /// row either way.
    pub async fn start_migration(
        &mut self,
        row: &MigrationRow,
    ) -> Result<MigrationRow, StoreError> {
        on_conn!(&mut self.conn, c => diesel::insert_into(enrollment_migrations::table)
            .values(row)
            .on_conflict((
                enrollment_migrations::account_id,
                enrollment_migrations::client_key,
            ))
            .do_nothing()
            .execute(c)
            .await)?;
        self.lock_migration(&row.account_id, &row.client_key)
            .await?
            .ok_or_else(|| StoreError::Corrupt(format!("migration {} vanished", row.id)))
    }

    /// The account's move with this key, locked until the transaction ends (a batch adds its
    /// counts to it).
    pub async fn lock_migration(
        &mut self,
        account_id: &str,
        client_key: &str,
    ) -> Result<Option<MigrationRow>, StoreError> {
        macro_rules! find {
            () => {
                enrollment_migrations::table
                    .filter(enrollment_migrations::account_id.eq(account_id))
                    .filter(enrollment_migrations::client_key.eq(client_key))
                    .select(MigrationRow::as_select())
            };
        }
        Ok(match &mut self.conn {
            Conn::Postgres(c) => find!().for_update().first(&mut **c).await.optional()?,
            Conn::Sqlite(c) => find!().first(&mut **c).await.optional()?,
        })
    }

    /// Writes a move's progress: its counts, cursor, status and lease.
    pub async fn save_migration(&mut self, row: &MigrationRow) -> Result<(), StoreError> {
        on_conn!(&mut self.conn, c => diesel::update(
            enrollment_migrations::table.filter(enrollment_migrations::id.eq(&row.id)),
        )
        .set((
            enrollment_migrations::status.eq(&row.status),
            enrollment_migrations::moved.eq(row.moved),
            enrollment_migrations::groups.eq(&row.groups),
            enrollment_migrations::cursor.eq(&row.cursor),
            enrollment_migrations::lease_until.eq(row.lease_until),
            enrollment_migrations::finished_at.eq(row.finished_at),
        ))
        .execute(c)
        .await)?;
        Ok(())
    }

    /// A page of the flow's live enrollments after `after_id`, locked in id order (PostgreSQL
    /// waits for a row another transaction holds, then reads it as committed: one the planner
    /// just finished comes back finished, for the caller to leave).
    pub async fn lock_live_page(
        &mut self,
        account_id: &str,
        flow_id: &str,
        after_id: &str,
        limit: i64,
    ) -> Result<Vec<EnrollmentRow>, StoreError> {
        let lock = matches!(self.conn, Conn::Postgres(_));
        let sql = live_page_sql(lock);
        Ok(
            on_conn!(&mut self.conn, c => live_page!(sql, account_id, flow_id, after_id, limit)
            .load::<EnrollmentRow>(c)
            .await)?,
        )
    }

    /// Records that the enrollments `ids` now run `version` of their flow (their state says
    /// so already: this is the column the flow is found by).
    pub async fn set_flow_version(&mut self, ids: &[&str], version: i32) -> Result<(), StoreError> {
        if ids.is_empty() {
            return Ok(());
        }
        on_conn!(&mut self.conn, c => diesel::update(
            enrollments::table.filter(enrollments::id.eq_any(ids)),
        )
        .set(enrollments::flow_version.eq(version))
        .execute(c)
        .await)?;
        Ok(())
    }
}
