//! The planner: wakes enrollments whose `next_run_at` has come and applies the interpreter's
//! `Wake` to them (SPEC §5, §8).
//!
//! [`Planner::run_batch`] is the unit of work, and what tests call directly: claim up to
//! `batch` due enrollments (PostgreSQL: `FOR UPDATE SKIP LOCKED`, so replicas never process the
//! same enrollment twice; SQLite: one writer, a plain transaction), run the engine on each, and
//! write every new state, journey entry, dispatch and task in that same transaction.
//!
//! [`Planner::run`] is the loop inside `nudge serve`: run batches while there is due work, then
//! sleep until the earliest `next_run_at` (at most [`POLL`]), woken early by [`Wakeup`] when a
//! writer in this process stores an earlier timer, and by PostgreSQL `LISTEN/NOTIFY` when a
//! writer in another replica does ([`listen`]). With the manual clock there is no loop: time
//! moves only through `TestClockService.Advance`, which calls [`Planner::advance_to`].

pub mod flows;

pub use flows::FlowCache;

use crate::api::AppState;
use crate::clock::{from_millis, to_millis};
use crate::engine::{self, Ctx, Effect, EnrollmentState, Input, JourneyEntry, Status};
use crate::store::enrollments::{EnrollmentRow, Writes};
use crate::store::schema::enrollments;
use crate::store::{Conn, Db, StoreError, TxError};
use crate::timing::Duration;
use crate::write_all;
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::{AsyncConnection, RunQueryDsl};
use std::collections::HashMap;
use std::sync::Arc;
use tokio::sync::Notify;

/// The longest the loop sleeps without looking: a safety net under the wake-ups.
pub const POLL: std::time::Duration = std::time::Duration::from_secs(5);
/// How many enrollments one batch claims by default.
pub const DEFAULT_BATCH: usize = 1_000;
/// How many batches run at once on PostgreSQL while a backlog drains: one computes while
/// another waits on the database. SQLite has one writer, so it always runs one.
pub const DEFAULT_WORKERS: usize = 4;
/// The PostgreSQL channel replicas wake each other on.
pub const CHANNEL: &str = "nudge_planner";

/// Tells this process's planner that an earlier timer may have been written.
#[derive(Clone, Default)]
pub struct Wakeup(Arc<Notify>);

impl Wakeup {
    pub fn wake(&self) {
        self.0.notify_one();
    }

    pub async fn woken(&self) {
        self.0.notified().await
    }
}

/// Fires once when the server shuts down; every background task holds a clone.
#[derive(Clone)]
pub struct Stop(tokio::sync::watch::Receiver<bool>);

impl Stop {
    /// A stop signal and the sender that fires it.
    pub fn new() -> (tokio::sync::watch::Sender<bool>, Stop) {
        let (tx, rx) = tokio::sync::watch::channel(false);
        (tx, Stop(rx))
    }

    /// Completes once the stop has fired (or its sender is gone).
    pub async fn stopped(&mut self) {
        // An error means the sender was dropped: stop too.
        let _ = self.0.wait_for(|stopped| *stopped).await;
    }
}

/// What the planner shares with the services: parsed flows and the wake-up.
#[derive(Clone, Default)]
pub struct EngineShared {
    pub flows: FlowCache,
    pub wakeup: Wakeup,
}

/// What one batch did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchOutcome {
    /// Enrollments woken.
    pub processed: usize,
    /// The earliest `next_run_at` left after the batch, if any.
    pub next_due: Option<DateTime<Utc>>,
}

/// Tells the planners an enrollment wants waking at `wake_ms`: this process's at once, other
/// replicas' through `NOTIFY` when the time is sooner than their fallback poll. Errors are
/// logged, not returned: the write is already committed and the poll catches up.
pub async fn announce(state: &AppState, wake_ms: Option<i64>) {
    let Some(wake_ms) = wake_ms else { return };
    state.engine.wakeup.wake();
    let soon = to_millis(state.clock.now()) + POLL.as_millis() as i64;
    if wake_ms > soon {
        return;
    }
    if let Db::Postgres(_) = state.db {
        let result = async {
            let conn = state.db.conn().await?;
            if let Conn::Postgres(mut c) = conn {
                diesel::sql_query(format!("NOTIFY {CHANNEL}"))
                    .execute(&mut *c)
                    .await?;
            }
            Ok::<_, StoreError>(())
        }
        .await;
        if let Err(e) = result {
            tracing::warn!(error = %e, "cannot notify other replicas");
        }
    }
}

/// The account settings the interpreter needs.
pub fn ctx_for(max_wait: Option<&str>) -> Ctx {
    Ctx {
        max_wait: max_wait.and_then(|t| Duration::parse(t).ok()),
        seed: 0,
    }
}

/// Applies `input` to a stored enrollment and adds the result to `writes`. A flow that cannot
/// be loaded fails the enrollment with a journey entry instead of stopping the batch.
pub fn apply(
    writes: &mut Writes,
    flows: &FlowCache,
    definitions: &HashMap<(String, i32), String>,
    ctx: &Ctx,
    row: EnrollmentRow,
    input: Input,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    let before = row.engine_state()?;
    let outcome = match &input {
        Input::TaskOutcome { outcome, .. } => Some(outcome.clone()),
        _ => None,
    };
    let key = (row.flow_id.clone(), row.flow_version);
    let flow = flows.get_or_parse(&key, definitions.get(&key).map(String::as_str));
    let (after, effects) = match flow {
        Ok(flow) => engine::step(&before, &flow, input, now, ctx),
        Err(message) => flow_unavailable(&before, message),
    };
    writes.add_step(row, &before, &after, &effects, now, outcome.as_deref());
    Ok(())
}

fn flow_unavailable(before: &EnrollmentState, message: String) -> (EnrollmentState, Vec<Effect>) {
    let mut after = before.clone();
    after.status = Status::Failed;
    after.next_run_at = None;
    after.reason = Some(format!("FLOW_UNAVAILABLE: {message}"));
    (
        after,
        vec![Effect::Journey(JourneyEntry::Failed {
            code: crate::code::Code::FlowUnavailable,
            message,
        })],
    )
}

/// Loads the definitions of the flow versions `rows` run that `flows` has not parsed yet;
/// evaluates to `QueryResult<definitions>` (none to read when the cache has them all).
#[macro_export]
macro_rules! load_flows {
    ($c:expr, $flows:expr, $rows:expr) => {{
        use $crate::store::schema::flow_versions;
        let rows: &[$crate::store::enrollments::EnrollmentRow] = $rows;
        let flows: &$crate::planner::FlowCache = $flows;
        async {
            let mut wanted: Vec<String> = rows
                .iter()
                .filter(|r| !flows.contains(&(r.flow_id.clone(), r.flow_version)))
                .map(|r| r.flow_id.clone())
                .collect();
            wanted.sort();
            wanted.dedup();
            let mut definitions = std::collections::HashMap::new();
            if !wanted.is_empty() {
                let found: Vec<(String, i32, String)> = flow_versions::table
                    .filter(flow_versions::flow_id.eq_any(&wanted))
                    .select((
                        flow_versions::flow_id,
                        flow_versions::version,
                        flow_versions::definition,
                    ))
                    .load($c)
                    .await?;
                for (id, version, definition) in found {
                    definitions.insert((id, version), definition);
                }
            }
            Ok::<_, diesel::result::Error>(definitions)
        }
        .await
    }};
}

/// The engine's context of each account from its stored settings (`id`, `max_wait`).
pub fn ctx_by_account(
    settings: Vec<(String, Option<String>)>,
) -> std::collections::HashMap<String, Ctx> {
    settings
        .into_iter()
        .map(|(id, max_wait)| (id, ctx_for(max_wait.as_deref())))
        .collect()
}

/// [`load_flows!`], and the accounts' settings; evaluates to
/// `QueryResult<(definitions, ctx by account)>`.
#[macro_export]
macro_rules! load_flows_and_ctx {
    ($c:expr, $flows:expr, $rows:expr) => {{
        use $crate::store::schema::accounts;
        let rows: &[$crate::store::enrollments::EnrollmentRow] = $rows;
        async {
            let definitions = $crate::load_flows!($c, $flows, rows)?;
            let mut account_ids: Vec<&str> = rows.iter().map(|r| r.account_id.as_str()).collect();
            account_ids.sort();
            account_ids.dedup();
            let settings: Vec<(String, Option<String>)> = accounts::table
                .filter(accounts::id.eq_any(&account_ids))
                .select((accounts::id, accounts::max_wait))
                .load($c)
                .await?;
            Ok::<_, diesel::result::Error>((definitions, $crate::planner::ctx_by_account(settings)))
        }
        .await
    }};
}

/// Wakes due enrollments, one batch at a time.
#[derive(Clone)]
pub struct Planner {
    pub state: AppState,
    pub batch: usize,
    /// Concurrent batches while draining a backlog (PostgreSQL only).
    pub workers: usize,
}

impl Planner {
    pub fn new(state: AppState) -> Planner {
        Planner {
            state,
            batch: DEFAULT_BATCH,
            workers: DEFAULT_WORKERS,
        }
    }

    /// Claims up to `batch` enrollments due at `now`, wakes them, and writes everything in one
    /// transaction.
    pub async fn run_batch(&self, now: DateTime<Utc>) -> Result<BatchOutcome, StoreError> {
        let now_ms = to_millis(now);
        let limit = self.batch as i64;
        let flows = &self.state.engine.flows;
        macro_rules! due {
            () => {
                enrollments::table
                    .filter(enrollments::next_run_at.le(now_ms))
                    .order(enrollments::next_run_at.asc())
                    .limit(limit)
                    .select(EnrollmentRow::as_select())
            };
        }
        // The same body for both backends once the rows are claimed.
        macro_rules! wake_rows {
            ($mode:ident: $c:expr, $rows:expr) => {{
                let rows: Vec<EnrollmentRow> = $rows;
                let (definitions, ctx) = load_flows_and_ctx!($c, flows, &rows)?;
                let mut writes = Writes::default();
                let processed = rows.len();
                for row in rows {
                    let account_ctx = ctx.get(&row.account_id).cloned().unwrap_or_default();
                    apply(
                        &mut writes,
                        flows,
                        &definitions,
                        &account_ctx,
                        row,
                        Input::Wake,
                        now,
                    )
                    .map_err(TxError::Store)?;
                }
                write_all!($mode: $c, &writes)?;
                Ok::<usize, TxError>(processed)
            }};
        }
        let conn = self.state.db.conn().await?;
        let processed = match conn {
            Conn::Postgres(mut pooled) => {
                let c = &mut *pooled;
                c.transaction(async |c| {
                    let rows = due!().for_update().skip_locked().load(c).await?;
                    wake_rows!(pg: c, rows)
                })
                .await?
            }
            Conn::Sqlite(mut pooled) => {
                let c = &mut *pooled;
                c.transaction(async |c| {
                    let rows = due!().load(c).await?;
                    wake_rows!(sqlite: c, rows)
                })
                .await?
            }
        };
        let next_due = next_due(&self.state.db).await?;
        Ok(BatchOutcome {
            processed,
            next_due,
        })
    }

    /// Runs batches at `now` until nothing is due; returns how many enrollments were woken.
    /// On PostgreSQL `workers` loops claim batches side by side (`SKIP LOCKED` keeps them
    /// apart), each on its own task so the engine runs on every core.
    pub async fn drain(&self, now: DateTime<Utc>) -> Result<usize, StoreError> {
        let workers = match self.state.db {
            Db::Postgres(_) => self.workers.max(1),
            Db::Sqlite(_) => 1,
        };
        let mut loops = tokio::task::JoinSet::new();
        for _ in 0..workers {
            let planner = self.clone();
            loops.spawn(async move {
                let mut total = 0;
                loop {
                    let outcome = planner.run_batch(now).await?;
                    total += outcome.processed;
                    if outcome.processed == 0 {
                        return Ok::<usize, StoreError>(total);
                    }
                }
            });
        }
        let mut total = 0;
        while let Some(joined) = loops.join_next().await {
            total += joined.map_err(|e| StoreError::Worker(e.to_string()))??;
        }
        Ok(total)
    }

    /// Manual clock: moves the clock to `target` through every due time on the way, waking
    /// what is due at each (so a step runs at its own time, as it would in reality), and
    /// returns how many wakes ran.
    pub async fn advance_to(
        &self,
        clock: &crate::clock::ManualClock,
        target: DateTime<Utc>,
    ) -> Result<usize, StoreError> {
        use crate::clock::Clock;
        let mut total = self.drain(clock.now()).await?;
        while let Some(due) = next_due(&self.state.db).await? {
            if due > target {
                break;
            }
            if due > clock.now() {
                clock.set(due);
            }
            total += self.drain(clock.now()).await?;
        }
        if target > clock.now() {
            clock.set(target);
        }
        Ok(total)
    }

    /// The loop of `nudge serve` (system clock): until `stop` fires. It sleeps through the
    /// clock ([`Clock::sleep_until`](crate::clock::Clock::sleep_until)), so tests can run it on
    /// a manual clock.
    pub async fn run(self, mut stop: Stop) {
        tracing::info!(batch = self.batch, "planner started");
        let clock = &self.state.clock;
        let poll = chrono::Duration::from_std(POLL).expect("POLL fits");
        loop {
            let now = clock.now();
            let wake_at = match self.run_batch(now).await {
                // A backlog: drain it with every worker, then look again.
                Ok(outcome) if outcome.processed == self.batch => match self.drain(now).await {
                    Ok(_) => continue,
                    Err(e) => {
                        tracing::error!(error = %e, "planner batch failed; retrying");
                        clock.now() + chrono::Duration::seconds(1)
                    }
                },
                Ok(outcome) => {
                    if outcome.processed > 0 {
                        tracing::debug!(processed = outcome.processed, "planner batch");
                    }
                    let latest = clock.now() + poll;
                    outcome.next_due.map_or(latest, |due| due.min(latest))
                }
                Err(e) => {
                    tracing::error!(error = %e, "planner batch failed; retrying");
                    clock.now() + chrono::Duration::seconds(1)
                }
            };
            if wake_at <= clock.now() {
                continue;
            }
            tokio::select! {
                () = clock.sleep_until(wake_at) => {}
                () = self.state.engine.wakeup.woken() => {}
                () = stop.stopped() => break,
            }
        }
        tracing::info!("planner stopped");
    }
}

/// The earliest `next_run_at` stored.
pub async fn next_due(db: &Db) -> Result<Option<DateTime<Utc>>, StoreError> {
    let conn = db.conn().await?;
    let min: Option<i64> = crate::with_conn!(conn, c => enrollments::table
        .select(diesel::dsl::min(enrollments::next_run_at))
        .first(c)
        .await)?;
    Ok(min.map(from_millis))
}

/// PostgreSQL: listens on [`CHANNEL`] with a dedicated connection and wakes this process's
/// planner on every notification. Reconnects after a failure; stops when `stop` is woken.
pub async fn listen(url: String, wakeup: Wakeup, mut stop: Stop) {
    use diesel_async::AsyncPgConnection;
    use futures_util::StreamExt;
    loop {
        let session = async {
            let mut conn = AsyncPgConnection::establish(&url).await?;
            diesel::sql_query(format!("LISTEN {CHANNEL}"))
                .execute(&mut conn)
                .await?;
            // Anything written while we were not listening is caught by this first wake.
            wakeup.wake();
            let mut stream = std::pin::pin!(conn.notifications_stream());
            while let Some(note) = stream.next().await {
                note?;
                wakeup.wake();
            }
            Ok::<_, Box<dyn std::error::Error + Send + Sync>>(())
        };
        tokio::select! {
            result = session => {
                if let Err(e) = result {
                    tracing::warn!(error = %e, "planner LISTEN connection lost; reconnecting");
                }
            }
            () = stop.stopped() => return,
        }
        tokio::select! {
            () = tokio::time::sleep(std::time::Duration::from_secs(1)) => {}
            () = stop.stopped() => return,
        }
    }
}
