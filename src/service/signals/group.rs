//! Group commit for signals: one transaction for every signal waiting, not one per signal.
//!
//! A commit and the round trips around it cost far more than the engine step, so under load
//! per-signal transactions cap throughput. [`Router`] is a queue drained by a few tasks; each
//! takes whatever is queued (up to [`MAX_GROUP`]) and routes it in one transaction with
//! set-based statements: the signals inserted `ON CONFLICT DO NOTHING`, every enrollment they
//! reach loaded and locked at once (PostgreSQL `FOR UPDATE`, in id order so concurrent groups
//! cannot deadlock), the engine run in memory in arrival order (two signals to the same
//! enrollment see each other's effect), then one [`write_all!`], one insert of the
//! `signal_deliveries` rows and one `routed_at` update. The answers are the ones the
//! one-signal path gives, which is still used:
//!
//! - when the group transaction fails, every signal of it is routed alone, so one bad signal
//!   fails only its own caller;
//! - for opt-outs, which update the contact first (rare, and outside this transaction);
//! - for a repeated provider id whose stored signal is an opt-out cut short by a crash.

use super::{delivery_of, engine_signal, stored_opt_out, Arrival, Delivery, Receipt, Received};
use crate::api::AppState;
use crate::clock::to_millis;
use crate::engine::Input;
use crate::planner::{self, apply};
use crate::service::ServiceError;
use crate::signals::SignalKind;
use crate::store::enrollments::{EnrollmentRow, Writes};
use crate::store::pg_batch;
use crate::store::schema::{
    accounts, contacts, enrollments, signal_deliveries, signals, webhook_replays,
};
use crate::store::signals::{DeliveryRow, SignalRow, REPLAY_MEMORY_MS};
use crate::store::{self as db_store, Conn, StoreError, TxError};
use crate::{load_flows, write_all};
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::{AsyncConnection, RunQueryDsl};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot, Mutex};

/// The most signals one transaction routes: enough to amortise a commit, small enough that a
/// group's locks are held briefly.
pub const MAX_GROUP: usize = 256;
/// Tasks draining the queue: while one group commits, the next is being built.
const WORKERS: usize = 3;
/// Signals queued before callers wait to enqueue.
const QUEUE: usize = 4 * MAX_GROUP;

/// The queue in front of the group-commit tasks. Cheap to clone; [`Router::default`] is a
/// detached router, with which every signal takes the one-signal path.
#[derive(Clone, Default)]
pub struct Router {
    tx: Option<mpsc::Sender<Job>>,
}

/// A signal waiting for its group.
pub struct Pending {
    pub account_id: String,
    /// With `phone`, `arrival.contacts` is found in the group: the contacts with that E.164
    /// number, or the answer is `NotFound` and nothing is stored.
    pub arrival: Arrival,
    pub phone: Option<String>,
    pub now: DateTime<Utc>,
}

struct Job {
    signal: Pending,
    reply: oneshot::Sender<Result<Received, ServiceError>>,
}

impl Router {
    /// Starts the tasks on the current runtime. They hold `state` with a detached router (so
    /// their fallback takes the one-signal path) and stop when every [`Router`] clone is gone.
    pub fn start(state: &AppState) -> Router {
        let (tx, rx) = mpsc::channel(QUEUE);
        let rx = Arc::new(Mutex::new(rx));
        let mut own = state.clone();
        own.signals = Router::default();
        for _ in 0..WORKERS {
            tokio::spawn(work(own.clone(), rx.clone()));
        }
        Router { tx: Some(tx) }
    }

    /// Routes `signal` in the next group; `Err` gives it back when no router runs.
    pub(super) async fn submit(
        &self,
        signal: Pending,
    ) -> Result<Result<Received, ServiceError>, Pending> {
        let Some(tx) = &self.tx else {
            return Err(signal);
        };
        let (reply, answer) = oneshot::channel();
        if let Err(mpsc::error::SendError(job)) = tx.send(Job { signal, reply }).await {
            return Err(job.signal);
        }
        Ok(answer.await.unwrap_or_else(|_| {
            Err(ServiceError::Store(StoreError::Contention(
                "the signal router stopped while routing this signal".into(),
            )))
        }))
    }
}

async fn work(state: AppState, rx: Arc<Mutex<mpsc::Receiver<Job>>>) {
    loop {
        let mut jobs = Vec::new();
        {
            let mut rx = rx.lock().await;
            let Some(first) = rx.recv().await else { return };
            jobs.push(first);
            while jobs.len() < MAX_GROUP {
                match rx.try_recv() {
                    Ok(job) => jobs.push(job),
                    Err(_) => break,
                }
            }
        }
        // Its own task, so a panic drops this group's answers (its callers get an error)
        // instead of stopping the router.
        let state = state.clone();
        let _ = tokio::spawn(async move {
            let (signals, replies): (Vec<Pending>, Vec<_>) =
                jobs.into_iter().map(|j| (j.signal, j.reply)).unzip();
            let answers = receive_group(&state, signals).await;
            for (reply, answer) in replies.into_iter().zip(answers) {
                let _ = reply.send(answer);
            }
        })
        .await;
    }
}

/// What the group decided for one signal.
enum Outcome {
    Answer(Received),
    /// No contact has its phone number: nothing stored.
    Unknown(String),
    /// Route it alone; its replay key is already stored by this arrival, so without it.
    Alone,
}

/// Routes `signals` as one group (what each router task does with what is queued; tests call
/// it directly) and answers each as [`super::receive`] would, in order.
pub async fn receive_group(
    state: &AppState,
    signals: Vec<Pending>,
) -> Vec<Result<Received, ServiceError>> {
    let mut answers: Vec<Option<Result<Received, ServiceError>>> =
        signals.iter().map(|_| None).collect();
    // Opt-outs update the contact first: the one-signal path does that.
    let (alone, together): (Vec<usize>, Vec<usize>) = (0..signals.len()).partition(|&i| {
        let s = &signals[i];
        (s.phone.is_none() && s.arrival.contacts.is_empty())
            || matches!(s.arrival.kind, SignalKind::OptOut { .. })
    });
    let group: Vec<&Pending> = together.iter().map(|&i| &signals[i]).collect();
    let mut retry: Vec<(usize, bool)> = alone.into_iter().map(|i| (i, true)).collect();
    let routed = if group.is_empty() {
        Ok((Vec::new(), None))
    } else {
        route_together(state, &group).await
    };
    match routed {
        Ok((outcomes, wake)) => {
            planner::announce(state, wake).await;
            for (&i, outcome) in together.iter().zip(outcomes) {
                match outcome {
                    Outcome::Answer(received) => answers[i] = Some(Ok(received)),
                    Outcome::Unknown(phone) => {
                        answers[i] = Some(Err(ServiceError::NotFound {
                            what: "contact",
                            id: phone,
                        }))
                    }
                    Outcome::Alone => retry.push((i, false)),
                }
            }
        }
        Err(e) => {
            if group.len() > 1 {
                tracing::warn!(error = %e, signals = group.len(), "a group of signals failed; routing each alone");
            }
            retry.extend(together.iter().map(|&i| (i, true)));
        }
    }
    retry.sort();
    for (i, keep_replay_key) in retry {
        let signal = &signals[i];
        let mut arrival = signal.arrival.clone();
        if !keep_replay_key {
            // This arrival stored its replay key in the group.
            arrival.replay_key = None;
        }
        answers[i] = Some(alone_addressed(state, signal, arrival).await);
    }
    answers
        .into_iter()
        .map(|a| a.expect("every signal is answered"))
        .collect()
}

/// The one-signal path, its contacts found first when it came with a phone number.
async fn alone_addressed(
    state: &AppState,
    signal: &Pending,
    mut arrival: Arrival,
) -> Result<Received, ServiceError> {
    if let Some(phone) = &signal.phone {
        let reference = super::ContactRef::Phone(phone.clone());
        arrival.contacts = super::find_contacts(state, &signal.account_id, &reference).await?;
    }
    super::receive_alone(state, &signal.account_id, arrival, signal.now).await
}

/// One distinct signal of the group: inserted now or found stored.
struct Stored {
    row: SignalRow,
    /// Inserted by this group.
    new: bool,
    /// When the job that brought it first arrived.
    now: DateTime<Utc>,
    /// Routed by this group (its fan-out was not complete).
    route: bool,
    /// Left to the one-signal path (a stored opt-out whose fan-out was cut short).
    alone: bool,
    deliveries: Vec<Delivery>,
}

/// Where a job's answer comes from.
enum Slot {
    Replayed,
    /// No contact has its phone number.
    Unknown,
    /// The index of its signal in the group's distinct signals; `duplicate` when its provider
    /// id was stored before it (by an earlier call or an earlier job of the group).
    Signal {
        index: usize,
        duplicate: bool,
    },
}

/// Writes what a group did: the engine's rows ([`write_all!`]), the delivery rows, and
/// `routed_at` on the signals routed. On PostgreSQL the statements go out pipelined (one round
/// trip, [`pg_batch::write_with`]); SQLite takes them one by one, a row at a time for the
/// deliveries (no multi-row inserts through the async wrapper).
macro_rules! write_group {
    (pg: $c:expr, $writes:expr, $deliveries:expr, $routed:expr, $at:expr) => {{
        let c: &diesel_async::AsyncPgConnection = $c;
        let mut more = vec![pg_batch::insert_deliveries(c, $deliveries)];
        if !$routed.is_empty() {
            more.push(
                diesel::update(signals::table.filter(signals::id.eq_any($routed)))
                    .set(signals::routed_at.eq(Some($at)))
                    .execute(&mut &*c),
            );
        }
        pg_batch::write_with(c, $writes, more).await?;
    }};
    (sqlite: $c:expr, $writes:expr, $deliveries:expr, $routed:expr, $at:expr) => {{
        write_all!(sqlite: $c, $writes)?;
        for row in $deliveries.iter() {
            diesel::insert_into(signal_deliveries::table)
                .values(row)
                .execute($c)
                .await?;
        }
        if !$routed.is_empty() {
            diesel::update(signals::table.filter(signals::id.eq_any($routed)))
                .set(signals::routed_at.eq(Some($at)))
                .execute($c)
                .await?;
        }
    }};
}

/// The (account, phone, contact id) of every contact with one of the (account, E.164 phone)
/// `pairs`, oldest contact first.
macro_rules! by_phone {
    (pg: $c:expr, $pairs:expr) => {
        pg_batch::contacts_by_phone($c, $pairs).await?
    };
    (sqlite: $c:expr, $pairs:expr) => {{
        let pairs: &[(String, String)] = $pairs;
        let accounts: Vec<&str> = pairs.iter().map(|(a, _)| a.as_str()).collect();
        let phones: Vec<&str> = pairs.iter().map(|(_, p)| p.as_str()).collect();
        // The cross product of accounts and phones; the caller keeps each signal's own.
        contacts::table
            .filter(contacts::account_id.eq_any(accounts))
            .filter(contacts::phone.eq_any(phones))
            .order((contacts::created_at.asc(), contacts::id.asc()))
            .select((contacts::account_id, contacts::phone, contacts::id))
            .load::<(String, Option<String>, String)>($c)
            .await?
    }};
}

/// Inserts the group's new signal rows, and reads the enrollments the (account, contact)
/// `wanted` pairs reach (locked, [`reached!`]) and the settings (`id`, `max_wait`) of its
/// accounts; evaluates to `(ids inserted, enrollments, settings)`. PostgreSQL gets the three
/// statements pipelined, in one round trip.
macro_rules! insert_and_reach {
    (pg: $c:expr, $candidates:expr, $wanted:expr, $accounts:expr) => {{
        let c: &diesel_async::AsyncPgConnection = $c;
        futures_util::try_join!(
            pg_batch::insert_signals(c, $candidates),
            pg_batch::reached_enrollments(c, $wanted),
            accounts::table
                .filter(accounts::id.eq_any($accounts))
                .select((accounts::id, accounts::max_wait))
                .load::<(String, Option<String>)>(&mut &*c),
        )?
    }};
    (sqlite: $c:expr, $candidates:expr, $wanted:expr, $accounts:expr) => {{
        // One statement a row: no multi-row inserts through the async wrapper.
        let mut inserted: Vec<String> = Vec::new();
        for row in $candidates.iter() {
            let n = diesel::insert_into(signals::table)
                .values(row)
                .on_conflict_do_nothing()
                .execute($c)
                .await?;
            if n == 1 {
                inserted.push(row.id.clone());
            }
        }
        let rows: Vec<EnrollmentRow> = if $wanted.is_empty() {
            Vec::new()
        } else {
            reached!(sqlite: $c, $wanted)
        };
        let settings: Vec<(String, Option<String>)> = accounts::table
            .filter(accounts::id.eq_any($accounts))
            .select((accounts::id, accounts::max_wait))
            .load($c)
            .await?;
        (inserted, rows, settings)
    }};
}

/// The active or paused enrollments of the (account, contact) `pairs`, in id order; locked
/// on PostgreSQL (in that order, so concurrent groups cannot deadlock).
macro_rules! reached {
    (pg: $c:expr, $pairs:expr) => {
        pg_batch::reached_enrollments($c, $pairs).await?
    };
    (sqlite: $c:expr, $pairs:expr) => {{
        let pairs: &[(String, String)] = $pairs;
        let accounts: Vec<&str> = pairs.iter().map(|(a, _)| a.as_str()).collect();
        let contacts: Vec<&str> = pairs.iter().map(|(_, c)| c.as_str()).collect();
        // The cross product of accounts and contacts; the caller keeps each signal's own.
        enrollments::table
            .filter(enrollments::account_id.eq_any(accounts))
            .filter(enrollments::contact_id.eq_any(contacts))
            .filter(enrollments::status.eq_any(["active", "paused"]))
            .order(enrollments::id.asc())
            .select(EnrollmentRow::as_select())
            .load::<EnrollmentRow>($c)
            .await?
    }};
}

/// Routes `jobs` in one transaction; answers one [`Outcome`] per job, in order, and the
/// earliest wake to announce.
async fn route_together(
    state: &AppState,
    jobs: &[&Pending],
) -> Result<(Vec<Outcome>, Option<i64>), StoreError> {
    let flows = &state.engine.flows;
    macro_rules! body {
        ($mode:ident: $c:expr) => {{
            // 1. The contacts of signals addressed by phone; none: refused, nothing stored.
            let mut slots: Vec<Option<Slot>> = jobs.iter().map(|_| None).collect();
            let mut contacts_by_job: Vec<Option<Vec<String>>> = jobs.iter().map(|_| None).collect();
            let phones: Vec<&str> = jobs.iter().filter_map(|j| j.phone.as_deref()).collect();
            if !phones.is_empty() {
                let pairs: Vec<(String, String)> = jobs
                    .iter()
                    .filter_map(|j| Some((j.account_id.clone(), j.phone.clone()?)))
                    .collect();
                let found: Vec<(String, Option<String>, String)> = by_phone!($mode: $c, &pairs);
                for ((job, slot), contacts) in
                    jobs.iter().zip(slots.iter_mut()).zip(contacts_by_job.iter_mut())
                {
                    let Some(phone) = &job.phone else { continue };
                    let ids: Vec<String> = found
                        .iter()
                        .filter(|(a, p, _)| *a == job.account_id && p.as_ref() == Some(phone))
                        .map(|(_, _, id)| id.clone())
                        .collect();
                    if ids.is_empty() {
                        *slot = Some(Slot::Unknown);
                    } else {
                        *contacts = Some(ids);
                    }
                }
            }
            let arrival_of = |i: usize| -> std::borrow::Cow<'_, Arrival> {
                match &contacts_by_job[i] {
                    Some(contacts) => {
                        let mut arrival = jobs[i].arrival.clone();
                        arrival.contacts = contacts.clone();
                        std::borrow::Cow::Owned(arrival)
                    }
                    None => std::borrow::Cow::Borrowed(&jobs[i].arrival),
                }
            };

            // 2. Webhook signatures seen before: refused, nothing stored.
            let mut forget_before: Option<i64> = None;
            for (job, slot) in jobs.iter().zip(slots.iter_mut()) {
                if slot.is_some() {
                    continue;
                }
                let Some(key) = &job.arrival.replay_key else {
                    continue;
                };
                let at = to_millis(job.now);
                let fresh = diesel::insert_into(webhook_replays::table)
                    .values((
                        webhook_replays::account_id.eq(&job.account_id),
                        webhook_replays::signature.eq(key),
                        webhook_replays::seen_at.eq(at),
                    ))
                    .on_conflict((webhook_replays::account_id, webhook_replays::signature))
                    .do_nothing()
                    .execute($c)
                    .await?;
                if fresh == 0 {
                    *slot = Some(Slot::Replayed);
                } else {
                    let before = at - REPLAY_MEMORY_MS;
                    forget_before = Some(forget_before.map_or(before, |b: i64| b.min(before)));
                }
            }
            if let Some(before) = forget_before {
                // Old signatures can no longer pass the timestamp check: forget them.
                diesel::delete(webhook_replays::table.filter(webhook_replays::seen_at.lt(before)))
                    .execute($c)
                    .await?;
            }

            // 3. The signals, once per (account, provider id): a later job of the group with
            // the same provider id is a duplicate of the earlier one.
            let mut stored: Vec<Stored> = Vec::new();
            let mut by_provider: HashMap<(&str, &str), usize> = HashMap::new();
            for (i, (job, slot)) in jobs.iter().zip(slots.iter_mut()).enumerate() {
                if slot.is_some() {
                    continue;
                }
                if let Some(provider) = job.arrival.provider_id.as_deref() {
                    if let Some(&index) = by_provider.get(&(job.account_id.as_str(), provider)) {
                        *slot = Some(Slot::Signal { index, duplicate: true });
                        continue;
                    }
                    by_provider.insert((job.account_id.as_str(), provider), stored.len());
                }
                *slot = Some(Slot::Signal { index: stored.len(), duplicate: false });
                stored.push(Stored {
                    row: SignalRow {
                        // Routed in this transaction: if it commits, the fan-out is complete.
                        routed_at: Some(to_millis(job.now)),
                        ..new_row(&job.account_id, &arrival_of(i), job.now)
                    },
                    new: true,
                    now: job.now,
                    route: true,
                    alone: false,
                    deliveries: Vec::new(),
                });
            }
            // Sorted, so groups inserting the same provider ids meet them in the same order.
            let mut candidates: Vec<&SignalRow> = stored.iter().map(|s| &s.row).collect();
            candidates.sort_by(|a, b| {
                (&a.account_id, &a.provider_id).cmp(&(&b.account_id, &b.provider_id))
            });
            let candidates: Vec<SignalRow> = candidates.into_iter().cloned().collect();
            // What the new signals reach, and the accounts' settings, are read in the same
            // trip as the insert; a duplicate whose stored fan-out was cut short may reach
            // other contacts, read after.
            let mut wanted: Vec<(String, String)> = Vec::new();
            for s in &stored {
                wanted.extend(contacts_of(&s.row)?.into_iter().map(|c| (s.row.account_id.clone(), c)));
            }
            wanted.sort();
            wanted.dedup();
            let mut group_accounts: Vec<String> = stored.iter().map(|s| s.row.account_id.clone()).collect();
            group_accounts.sort();
            group_accounts.dedup();
            let (inserted, mut rows, settings) =
                insert_and_reach!($mode: $c, &candidates, &wanted, &group_accounts);
            let inserted: HashSet<String> = inserted.into_iter().collect();
            let known_accounts: Vec<&str> = stored
                .iter()
                .filter(|s| !inserted.contains(&s.row.id))
                .map(|s| s.row.account_id.as_str())
                .collect();
            let known: Vec<&str> = stored
                .iter()
                .filter(|s| !inserted.contains(&s.row.id))
                .filter_map(|s| s.row.provider_id.as_deref())
                .collect();
            if !known.is_empty() {
                let found: Vec<SignalRow> = signals::table
                    .filter(signals::account_id.eq_any(&known_accounts))
                    .filter(signals::provider_id.eq_any(&known))
                    .select(SignalRow::as_select())
                    .load($c)
                    .await?;
                for s in stored.iter_mut().filter(|s| !inserted.contains(&s.row.id)) {
                    let existing = found
                        .iter()
                        .find(|f| f.account_id == s.row.account_id && f.provider_id == s.row.provider_id)
                        .ok_or_else(|| {
                            StoreError::Corrupt(format!(
                                "signal {:?} was neither inserted nor found",
                                s.row.provider_id
                            ))
                        })
                        .map_err(TxError::Store)?;
                    s.row = existing.clone();
                    s.new = false;
                    s.route = s.row.routed_at.is_none();
                    s.alone = s.route && stored_opt_out(&s.row).is_some();
                    if s.alone {
                        s.route = false;
                    }
                }
                let mut more: Vec<(String, String)> = Vec::new();
                for s in stored.iter().filter(|s| s.route && !s.new) {
                    more.extend(
                        contacts_of(&s.row)?
                            .into_iter()
                            .map(|c| (s.row.account_id.clone(), c))
                            .filter(|pair| wanted.binary_search(pair).is_err()),
                    );
                }
                more.sort();
                more.dedup();
                if !more.is_empty() {
                    let have: HashSet<String> = rows.iter().map(|r| r.id.clone()).collect();
                    let extra: Vec<EnrollmentRow> = reached!($mode: $c, &more);
                    rows.extend(extra.into_iter().filter(|r| !have.contains(&r.id)));
                    rows.sort_by(|a, b| a.id.cmp(&b.id));
                }
            }

            // 4. Every enrollment each signal to route reaches, with the deliveries a
            // cut-short fan-out already made.
            let mut reach: Vec<Vec<String>> = stored.iter().map(|_| Vec::new()).collect();
            for (i, s) in stored.iter().enumerate() {
                if !s.route {
                    continue;
                }
                let contacts = contacts_of(&s.row)?;
                let mut mine: Vec<&EnrollmentRow> = rows
                    .iter()
                    .filter(|r| r.account_id == s.row.account_id && contacts.contains(&r.contact_id))
                    .collect();
                mine.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
                reach[i] = mine.into_iter().map(|r| r.id.clone()).collect();
            }
            let resumed: Vec<&str> = stored
                .iter()
                .filter(|s| s.route && !s.new)
                .map(|s| s.row.id.as_str())
                .collect();
            let seen: HashSet<(String, String)> = if resumed.is_empty() {
                HashSet::new()
            } else {
                signal_deliveries::table
                    .filter(signal_deliveries::signal_id.eq_any(&resumed))
                    .select((signal_deliveries::signal_id, signal_deliveries::enrollment_id))
                    .load::<(String, String)>($c)
                    .await?
                    .into_iter()
                    .collect()
            };

            // 5. The engine, signal after signal in arrival order, on the evolving rows.
            let definitions = load_flows!($c, flows, &rows)?;
            let ctx = planner::ctx_by_account(settings);
            let was: HashMap<String, Option<i64>> =
                rows.iter().map(|r| (r.id.clone(), r.next_run_at)).collect();
            let mut current: HashMap<String, EnrollmentRow> =
                rows.into_iter().map(|r| (r.id.clone(), r)).collect();
            let mut touched: Vec<String> = Vec::new();
            let mut writes = Writes::default();
            let mut delivery_rows: Vec<DeliveryRow> = Vec::new();
            for (i, s) in stored.iter_mut().enumerate() {
                if !s.route {
                    continue;
                }
                let signal = engine_signal(&s.row).map_err(TxError::Store)?;
                let now_ms = to_millis(s.now);
                for enrollment_id in &reach[i] {
                    let Some(row) = current.get(enrollment_id) else {
                        continue;
                    };
                    if row.status != "active" && row.status != "paused" {
                        continue;
                    }
                    if !s.new && seen.contains(&(s.row.id.clone(), enrollment_id.clone())) {
                        continue;
                    }
                    let account_ctx = ctx.get(&row.account_id).cloned().unwrap_or_default();
                    let from = writes.journey.len();
                    apply(
                        &mut writes,
                        flows,
                        &definitions,
                        &account_ctx,
                        row.clone(),
                        Input::Signal(signal.clone()),
                        s.now,
                    )
                    .map_err(TxError::Store)?;
                    let after = writes.enrollments.pop().expect("apply adds the row");
                    current.insert(enrollment_id.clone(), after);
                    if !touched.contains(enrollment_id) {
                        touched.push(enrollment_id.clone());
                    }
                    let (effect, branch) = delivery_of(&s.row.id, &writes.journey[from..]);
                    delivery_rows.push(DeliveryRow {
                        signal_id: s.row.id.clone(),
                        enrollment_id: enrollment_id.clone(),
                        effect: effect.clone(),
                        branch: branch.clone(),
                        at: now_ms,
                    });
                    s.deliveries.push(Delivery {
                        enrollment_id: enrollment_id.clone(),
                        effect,
                        branch,
                    });
                }
            }
            // One row per enrollment, its last state; the upsert cannot touch a row twice.
            touched.sort();
            let mut wake: Option<i64> = None;
            for id in &touched {
                let row = current.remove(id).expect("a touched enrollment is loaded");
                // Only a sooner timer is news to the planners.
                if let Some(t) = row.next_run_at {
                    if was.get(id).copied().flatten().is_none_or(|w| t < w) {
                        wake = Some(wake.map_or(t, |e: i64| e.min(t)));
                    }
                }
                writes.enrollments.push(row);
            }

            // 6. Everything written at once.
            // New signals were stored routed; a resumed fan-out is complete now.
            let routed: Vec<&str> = stored
                .iter()
                .filter(|s| s.route && !s.new)
                .map(|s| s.row.id.as_str())
                .collect();
            let routed_at = jobs.iter().map(|j| to_millis(j.now)).max().unwrap_or_default();
            write_group!($mode: $c, &writes, &delivery_rows, &routed, routed_at);

            // 7. A duplicate answers with the first result: every delivery of its signal.
            let repeated: Vec<&str> = jobs
                .iter()
                .zip(&slots)
                .filter_map(|(_, slot)| match slot {
                    Some(Slot::Signal { index, duplicate }) => {
                        let s = &stored[*index];
                        (*duplicate || !s.new).then_some(s.row.id.as_str())
                    }
                    _ => None,
                })
                .collect();
            let mut first_results: HashMap<String, Vec<Delivery>> = HashMap::new();
            if !repeated.is_empty() {
                let found: Vec<DeliveryRow> = signal_deliveries::table
                    .filter(signal_deliveries::signal_id.eq_any(&repeated))
                    .order((signal_deliveries::at.asc(), signal_deliveries::enrollment_id.asc()))
                    .select(DeliveryRow::as_select())
                    .load($c)
                    .await?;
                for d in found {
                    first_results.entry(d.signal_id).or_default().push(Delivery {
                        enrollment_id: d.enrollment_id,
                        effect: d.effect,
                        branch: d.branch,
                    });
                }
            }
            let outcomes: Vec<Outcome> = slots
                .into_iter()
                .zip(jobs)
                .map(|(slot, job)| match slot.expect("every job has a slot") {
                    Slot::Replayed => Outcome::Answer(Received::Replayed),
                    Slot::Unknown => Outcome::Unknown(job.phone.clone().unwrap_or_default()),
                    Slot::Signal { index, duplicate } => {
                        let s = &stored[index];
                        if s.alone {
                            return Outcome::Alone;
                        }
                        let duplicate = duplicate || !s.new;
                        let deliveries = if duplicate {
                            first_results.get(&s.row.id).cloned().unwrap_or_default()
                        } else {
                            s.deliveries.clone()
                        };
                        Outcome::Answer(Received::Done(Receipt {
                            signal_id: s.row.id.clone(),
                            duplicate,
                            deliveries,
                        }))
                    }
                })
                .collect();
            Ok::<_, TxError>((outcomes, wake))
        }};
    }
    let conn = state.db.conn().await?;
    let done = match conn {
        Conn::Postgres(mut pooled) => {
            let c = &mut *pooled;
            c.transaction(async |c| body!(pg: c)).await
        }
        Conn::Sqlite(mut pooled) => {
            let c = &mut *pooled;
            c.transaction(async |c| body!(sqlite: c)).await
        }
    };
    Ok(done?)
}

/// The contacts a stored signal is addressed to.
fn contacts_of(row: &SignalRow) -> Result<Vec<String>, TxError> {
    serde_json::from_str(&row.contact_ids).map_err(|e| {
        TxError::Store(StoreError::Corrupt(format!(
            "signal {}: contact_ids: {e}",
            row.id
        )))
    })
}

/// The row a new signal is stored as.
pub(super) fn new_row(account_id: &str, arrival: &Arrival, now: DateTime<Utc>) -> SignalRow {
    SignalRow {
        id: db_store::new_id("sg"),
        account_id: account_id.to_string(),
        contact_id: <[String]>::first(&arrival.contacts)
            .cloned()
            .unwrap_or_default(),
        source: arrival.source.to_string(),
        provider_id: arrival.provider_id.clone(),
        raises: serde_json::to_string(&arrival.kind.raises()).expect("strings serialize"),
        payload: arrival.payload.to_string(),
        created_at: to_millis(now),
        kind: arrival.kind.name().to_string(),
        channel: arrival.kind.channel().map(str::to_string),
        contact_ids: serde_json::to_string(&arrival.contacts).expect("strings serialize"),
        routed_at: None,
    }
}
