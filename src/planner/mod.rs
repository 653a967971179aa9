//! The planner: wakes enrollments whose `next_run_at` has come and applies the interpreter's
//! `Wake` to them (docs/signals.md; docs/engine-storage.md, "Several replicas").
//!
//! [`Planner::run_batch`] is the unit of work, and what tests call directly: claim up to
//! `batch` due enrollments (PostgreSQL: `FOR UPDATE SKIP LOCKED`, so replicas never process the
//! same enrollment twice; SQLite: one writer, a plain transaction), run the engine on each, and
//! write every new state, journey entry, dispatch and task in that same transaction.
//!
//! [`Planner::run`] is the loop inside `nudge serve`: run batches while there is due work (on
//! PostgreSQL several in flight, each claimed as soon as the last has its rows), then sleep
//! until the earliest `next_run_at` (at most [`POLL`]), woken early by
//! [`Wakeup`](crate::runtime::Wakeup) when a
//! writer in this process stores an earlier timer, and by PostgreSQL `LISTEN/NOTIFY` when a
//! writer in another replica does ([`crate::runtime::listen`]). The planner owns a
//! [`Core`]; what it shares with the services (apply, wake-ups, the flow cache) lives in
//! [`crate::runtime`]. With the manual clock there is no loop: time
//! moves only through `TestClockService.Advance`, which calls [`Planner::advance_to`].

pub mod fetch;

use crate::clock::to_millis;
use crate::engine::Input;
use crate::runtime::{apply_unread, Core, StepContext, Stop};
use crate::store::{self, Committed, StoreError, Tx, Writes};
use chrono::{DateTime, Utc};
use std::sync::Arc;

pub use crate::runtime::POLL;

/// How many enrollments one batch claims by default.
pub const DEFAULT_BATCH: usize = 1_000;
/// How many batches run at once on PostgreSQL while a backlog drains: one computes while
/// another waits on the database. SQLite has one writer, so it always runs one.
pub const DEFAULT_WORKERS: usize = 4;

/// Where a drain's last claim ended: the due time and id of the last row it took.
type Cursor = Arc<tokio::sync::Mutex<Option<(i64, String)>>>;

/// What one batch did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchOutcome {
    /// Enrollments woken.
    pub processed: usize,
    /// The earliest `next_run_at` left after the batch, if any.
    pub next_due: Option<DateTime<Utc>>,
}

/// Wakes due enrollments, one batch at a time.
#[derive(Clone)]
pub struct Planner {
    /// The runtime it wakes enrollments with.
    pub core: Core,
    /// Enrollments claimed per batch.
    pub batch: usize,
    /// Concurrent batches while draining a backlog (PostgreSQL only).
    pub workers: usize,
}

impl Planner {
    /// A planner with the default batch size and workers.
    pub fn new(core: Core) -> Planner {
        Planner {
            core,
            batch: DEFAULT_BATCH,
            workers: DEFAULT_WORKERS,
        }
    }

    /// Claims up to `batch` enrollments due at `now`, wakes them, and writes everything in one
    /// transaction.
    pub async fn run_batch(&self, now: DateTime<Utc>) -> Result<BatchOutcome, StoreError> {
        let processed = self.run_shard(now, None, None).await?;
        let next_due = store::enrollments::next_due(&self.core.db).await?;
        Ok(BatchOutcome {
            processed,
            next_due,
        })
    }

    /// One batch of [`Planner::run_batch`] or [`Planner::drain`]: how many it woke. `shard`
    /// `(k, of)` claims only the capped senders of that shard, and `cursor` is the drain's
    /// claim position, shared by its batches (see
    /// [`Tx::claim_due`](crate::store::Tx::claim_due)).
    async fn run_shard(
        &self,
        now: DateTime<Utc>,
        shard: Option<(u32, u32)>,
        cursor: Option<&Cursor>,
    ) -> Result<usize, StoreError> {
        self.run_shard_reporting(now, shard, cursor, None).await
    }

    /// [`Planner::run_shard`], telling `claimed` how many rows it claimed once it has them.
    async fn run_shard_reporting(
        &self,
        now: DateTime<Utc>,
        shard: Option<(u32, u32)>,
        cursor: Option<&Cursor>,
        claimed: Option<tokio::sync::oneshot::Sender<usize>>,
    ) -> Result<usize, StoreError> {
        let started = std::time::Instant::now();
        let mut tx = self.core.db.begin().await?;
        let woken = self.wake_due(&mut tx, now, shard, cursor, claimed).await;
        let (processed, committed, lateness) = tx.finish(woken).await?;
        if processed > 0 {
            let metrics = &self.core.metrics;
            metrics.timer_lateness(&lateness);
            metrics.transitions(&committed.transitions);
            metrics.planner_batch(started.elapsed());
        }
        Ok(processed)
    }

    /// Claims a batch: after the drain's cursor when there is one (and moves it past what it
    /// took), from the earliest due row when the cursor has passed the last one or there is
    /// none.
    async fn claim(
        &self,
        tx: &mut Tx,
        now_ms: i64,
        shard: Option<(u32, u32)>,
        cursor: Option<&Cursor>,
    ) -> Result<Vec<store::EnrollmentRow>, StoreError> {
        let limit = self.batch as i64;
        let Some(cursor) = cursor else {
            return tx.claim_due(now_ms, limit, shard, None).await;
        };
        // Claims of one drain take turns, so each starts where the last one ended.
        let mut after = cursor.lock().await;
        let mut rows = tx.claim_due(now_ms, limit, shard, after.as_ref()).await?;
        if rows.is_empty() && after.is_some() {
            // Past the last due row: whatever is left (rows a sibling or another replica held
            // when the cursor passed, rows due since) is found from the start.
            rows = tx.claim_due(now_ms, limit, shard, None).await?;
        }
        if let Some(last) = rows.last() {
            *after = Some((last.next_run_at.unwrap_or(i64::MIN), last.id.clone()));
        }
        Ok(rows)
    }

    /// The body of a batch, inside its transaction: how many it woke, what to count once
    /// committed, and how late each one was (wake minus due).
    async fn wake_due(
        &self,
        tx: &mut Tx,
        now: DateTime<Utc>,
        shard: Option<(u32, u32)>,
        cursor: Option<&Cursor>,
        claimed: Option<tokio::sync::oneshot::Sender<usize>>,
    ) -> Result<(usize, Committed, Vec<chrono::Duration>), StoreError> {
        let mut rows = self.claim(tx, to_millis(now), shard, cursor).await?;
        if let Some(claimed) = claimed {
            let _ = claimed.send(rows.len());
        }
        if rows.is_empty() {
            return Ok((0, Committed::default(), Vec::new()));
        }
        let flows = &self.core.flows;
        let mut context = StepContext::load(tx, flows, &rows, &self.core.quiet_hours).await?;
        if context.has_caps() {
            // docs/capacity.md: lock the capped senders and read their ledgers, then step their
            // enrollments in priority order, so a short capacity goes to the right steps.
            context.lock_books(tx, to_millis(now)).await?;
            sort_by_priority(&mut rows, &context);
        }
        let mut writes = Writes::for_steps(rows.len());
        let processed = rows.len();
        let mut lateness = Vec::with_capacity(processed);
        // One vector for every step's effects: allocated once a batch, not once a step.
        let mut effects = Vec::new();
        for row in rows {
            if let Some(due) = row.next_run_at {
                lateness.push(now - crate::clock::from_millis(due));
            }
            apply_unread(
                &mut writes,
                flows,
                &context,
                row,
                Input::Wake,
                now,
                &mut effects,
            )?;
        }
        tx.write_all(&writes).await?;
        Ok((processed, writes.committed(), lateness))
    }
}

/// docs/capacity.md's order for the rows of capped senders (the others go first, in claim order: they
/// share nothing): an operator's `MoveTo`, then follow-ups (the enrollment already sent on the
/// step's channel), then first touches; within each the earliest due (the step's scheduled
/// instant, windows applied), then the lower enrollment id.
fn sort_by_priority(rows: &mut [store::EnrollmentRow], context: &StepContext) {
    rows.sort_by_cached_key(|row| {
        if !context.is_capped(row) {
            return (0u8, 0u8, i64::MIN, String::new());
        }
        let (class, due) = match row.engine_state() {
            Ok(state) => crate::engine::campaign::priority(&state),
            Err(_) => (2, i64::MAX),
        };
        (1, class, due, row.id.clone())
    });
}

impl Planner {
    /// Runs batches at `now` until nothing is due; returns how many enrollments were woken.
    /// On PostgreSQL `workers` loops claim batches side by side (`SKIP LOCKED` keeps them
    /// apart), each on its own task so the engine runs on every core.
    pub async fn drain(&self, now: DateTime<Utc>) -> Result<usize, StoreError> {
        let workers = if self.core.db.is_postgres() {
            self.workers.max(1)
        } else {
            1
        };
        // Batches that reserve capacity lock their senders until they commit: side by side,
        // each takes the capped senders of its own shard, so they do not queue on each other.
        let sharded = workers > 1 && store::capacity::any_capped_sender(&self.core.db).await?;
        // One claim position for every batch of this drain (sharded batches claim different
        // rows, so each shard keeps its own).
        let shared: Cursor = Arc::default();
        let mut loops = tokio::task::JoinSet::new();
        for k in 0..workers {
            let planner = self.clone();
            let shard = sharded.then_some((k as u32, workers as u32));
            let cursor = if sharded {
                Arc::default()
            } else {
                shared.clone()
            };
            loops.spawn(async move {
                let mut total = 0;
                loop {
                    let processed = planner.run_shard(now, shard, Some(&cursor)).await?;
                    total += processed;
                    if processed == 0 {
                        return Ok::<usize, StoreError>(total);
                    }
                }
            });
        }
        let mut total = 0;
        while let Some(joined) = loops.join_next().await {
            total += joined??;
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
        while let Some(due) = store::enrollments::next_due(&self.core.db).await? {
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
    ///
    /// Batches are pipelined (PostgreSQL: up to `workers` in flight; SQLite: one): the next
    /// claim starts as soon as the last one has its rows, not once they are committed, so what
    /// falls due while a batch computes and commits is woken in its own batch at its own time
    /// instead of queueing behind that commit (a wake's lateness was a whole
    /// batch's duration under load). `SKIP LOCKED` keeps batches in flight apart. A full batch
    /// means a backlog: the loop lets its batches finish and [`Planner::drain`]s it, whose
    /// claims follow one cursor (and shards for capped senders).
    pub async fn run(self, mut stop: Stop) {
        tracing::info!(batch = self.batch, "planner started");
        let clock = &self.core.clock;
        let poll = chrono::Duration::from_std(POLL).expect("POLL fits");
        let slots = if self.core.db.is_postgres() {
            self.workers.max(1)
        } else {
            1
        };
        let mut in_flight = tokio::task::JoinSet::new();
        // After a failed batch the loop waits a second before it claims again.
        let mut retry_at: Option<DateTime<Utc>> = None;
        loop {
            while in_flight.len() >= slots {
                if let Some(joined) = in_flight.join_next().await {
                    retry_at = retry_at.or(failed(joined, clock.now()));
                }
            }
            let now = clock.now();
            let wake_at = if let Some(at) = retry_at.filter(|at| *at > now) {
                at
            } else {
                retry_at = None;
                let (claimed_tx, claimed) = tokio::sync::oneshot::channel();
                let planner = self.clone();
                in_flight.spawn(async move { planner.run_claimed(now, claimed_tx).await });
                // A dropped sender is a claim that failed; its batch's error comes out of the join.
                match claimed.await.unwrap_or(0) {
                    n if n >= self.batch => {
                        // A backlog: the batches in flight finish, then every worker drains it.
                        while let Some(joined) = in_flight.join_next().await {
                            retry_at = retry_at.or(failed(joined, clock.now()));
                        }
                        if retry_at.is_none() {
                            retry_at = failed(Ok(self.drain(now).await), clock.now());
                        }
                        continue;
                    }
                    _ => {}
                }
                // Every row due at `now` is claimed (or held by another writer): sleep until the
                // first due time after it (rows at or before it are in the batches in flight),
                // or the poll; a row that fell due meanwhile makes that at once.
                let latest = clock.now() + poll;
                match store::enrollments::next_due_after(&self.core.db, to_millis(now)).await {
                    Ok(next) => next.map_or(latest, |due| due.min(latest)),
                    Err(e) => {
                        tracing::error!(error = %e, "planner could not read the next due time; retrying");
                        clock.now() + chrono::Duration::seconds(1)
                    }
                }
            };
            if wake_at <= clock.now() {
                continue;
            }
            loop {
                tokio::select! {
                    () = clock.sleep_until(wake_at) => break,
                    () = self.core.wakeup.woken() => break,
                    // A batch that stepped something may have written a timer before `wake_at`
                    // (or failed): look again. One that found nothing changes nothing.
                    Some(joined) = in_flight.join_next(), if !in_flight.is_empty() => {
                        if !matches!(joined, Ok(Ok(0))) {
                            retry_at = retry_at.or(failed(joined, clock.now()));
                            break;
                        }
                    }
                    () = stop.stopped() => {
                        while let Some(joined) = in_flight.join_next().await {
                            failed(joined, clock.now());
                        }
                        tracing::info!("planner stopped");
                        return;
                    }
                }
            }
        }
    }

    /// One batch of the loop: [`Planner::run_shard`] that says through `claimed` how many rows
    /// it claimed as soon as it has them.
    async fn run_claimed(
        &self,
        now: DateTime<Utc>,
        claimed: tokio::sync::oneshot::Sender<usize>,
    ) -> Result<usize, StoreError> {
        self.run_shard_reporting(now, None, None, Some(claimed))
            .await
    }
}

/// A batch's result as the loop sees it: logged when it failed, and then when to retry.
fn failed(
    joined: Result<Result<usize, StoreError>, tokio::task::JoinError>,
    now: DateTime<Utc>,
) -> Option<DateTime<Utc>> {
    let error = match joined {
        Ok(Ok(_)) => return None,
        Ok(Err(e)) => e.to_string(),
        Err(e) => e.to_string(),
    };
    tracing::error!(error = %error, "planner batch failed; retrying");
    Some(now + chrono::Duration::seconds(1))
}
