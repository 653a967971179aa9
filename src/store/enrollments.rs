//! Enrollments and what an engine step writes: the enrollment row (state, `status`,
//! `next_run_at`), journey entries, dispatches (the outbox, docs/service.md, "Delivery") and tasks.
//!
//! [`Writes`] is everything one or many [`crate::engine::step`] calls produce, turned into
//! rows by [`Writes::add_step`]; [`Tx::write_all`] stores them inside the
//! caller's transaction with one statement per table (and chunk): new enrollments inserted,
//! the others updated (an update of a row that is not stored is an error), dispatches inserted
//! once per key (`enrollment:run`, unique: a repeat is an error; a held step's `<key>:held` row
//! keeps its first hold, `ON CONFLICT DO NOTHING`).
//!
//! Queries that must commit together are methods of [`Tx`]; one-shot reads take a [`Db`].

use super::journey::{first_step_columns, JourneyRow, JourneyStep, StoredStep};
use super::schema::{dispatches, enrollment_keys, enrollments, tasks};
use super::{Conn, Db, DispatchStatus, StoreError, TaskStatus, Tx};
use crate::clock::to_millis;
use crate::engine::state::TaskPhase;
use crate::engine::{Effect, EnrollmentState, Status};
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use std::borrow::Cow;

/// The predicate of the partial indexes of live enrollments made with `allow_duplicate`
/// (migration `live_duplicates`), as a query must spell it for the index to serve it.
macro_rules! live_duplicate_predicate {
    () => {
        "allow_duplicate AND status IN ('active', 'paused')"
    };
}
pub(crate) use live_duplicate_predicate;

/// The statuses of an enrollment a signal still reaches and a duplicate check still counts.
pub const LIVE: [&str; 2] = [Status::LIVE[0].as_str(), Status::LIVE[1].as_str()];

/// The room a new enrollment's first encoded state is written into (a usual one is 250–400
/// bytes).
const NEW_STATE_ROOM: usize = 512;

/// The most rows a claim's vector has room for before any is read (a larger limit grows it).
const MAX_CLAIM_ROOM: usize = 10_000;

/// SQLite allows 32,766 bound values per statement and PostgreSQL 65,535: multi-row inserts
/// written as `VALUES` lists are cut into chunks of at most this many values.
pub const MAX_BINDS: usize = 30_000;

#[derive(Debug, Clone, PartialEq, Eq, Queryable, QueryableByName, Selectable, Insertable)]
#[diesel(table_name = enrollments, treat_none_as_default_value = false)]
pub struct EnrollmentRow {
    pub id: String,
    pub account_id: String,
    pub flow_id: String,
    pub flow_version: i32,
    pub contact_id: String,
    pub sender_id: String,
    pub status: String,
    pub client_key: Option<String>,
    /// The engine's [`EnrollmentState`], encoded by [`super::state_encoding`].
    pub state: Vec<u8>,
    pub next_run_at: Option<i64>,
    pub journey_seq: i64,
    /// The Watch key of its last journey row (PostgreSQL; 0 on SQLite): its next rows are keyed
    /// at least this high ([`super::pg_batch::journey_statement`]).
    pub journey_xid: i64,
    pub created_at: i64,
    pub updated_at: i64,
    /// Enrolled with `allow_duplicate`: outside the unique index `enrollments_one_live`, which
    /// holds every other live enrollment, one per (account, contact, flow).
    pub allow_duplicate: bool,
}

impl EnrollmentRow {
    /// The stored engine state.
    pub fn engine_state(&self) -> Result<EnrollmentState, super::StoreError> {
        super::state_encoding::decode(&self.state)
            .map_err(|e| super::StoreError::Corrupt(format!("enrollment {}: {e}", self.id)))
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Queryable, QueryableByName, Selectable, Insertable)]
#[diesel(table_name = dispatches, treat_none_as_default_value = false)]
pub struct DispatchRow {
    pub id: String,
    pub account_id: String,
    pub enrollment_id: String,
    pub run: i64,
    pub step: String,
    pub idempotency_key: String,
    /// A closed set (`email`, `sms`, …): a dispatch the engine makes names it without a copy.
    pub channel: Cow<'static, str>,
    pub recipient: String,
    pub template: String,
    pub input: String,
    /// The step's `params.channel` (e.g. a subject line) as JSON, for the delivery side.
    pub channel_params: Option<String>,
    pub message_id: Option<String>,
    /// `pending`, `sent`, `failed`, or `held` (nothing will be sent; shown in the stream).
    pub status: Cow<'static, str>,
    pub lease_owner: Option<String>,
    pub lease_until: Option<i64>,
    pub attempts: i32,
    pub provider_message_id: Option<String>,
    pub failure: Option<String>,
    pub created_at: i64,
    /// When it is (or was) due: when the step ran, or the time a retry ack asked for.
    pub due_at: i64,
    /// Held: why (`ZONE_UNKNOWN`, `NO_OPENING`, …); `failure` says what to fix.
    pub hold_code: Option<String>,
    /// The step's variant it sends, when the step has variants.
    pub variant: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = tasks, treat_none_as_default_value = false)]
pub struct TaskRow {
    pub id: String,
    pub account_id: String,
    pub enrollment_id: String,
    pub run: i64,
    pub kind: String,
    pub step: String,
    /// `open`, `completed` (an outcome took it), or `closed` (its run ended otherwise).
    pub status: String,
    pub outcome: Option<String>,
    pub params: String,
    pub due_by: Option<i64>,
    pub created_at: i64,
    pub completed_at: Option<i64>,
}

/// A task whose run ended in this step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskClosure {
    pub enrollment_id: String,
    pub run: i64,
    /// `Completed` or `Closed`.
    pub status: TaskStatus,
    pub outcome: Option<String>,
    pub at: i64,
}

/// An approval run whose link is to be signed and dispatched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalLink {
    pub account_id: String,
    pub enrollment_id: String,
    pub sender_id: String,
    pub run: i64,
    pub step: String,
    pub title: String,
    pub expires_at: i64,
    pub created_at: i64,
}

/// The rows some engine steps produce, written together in one transaction.
#[derive(Debug, Default, Clone)]
pub struct Writes {
    /// Rows to store: inserted when their id is in `created`, else updated (state, status,
    /// next_run_at, journey_seq). The last row of an id wins.
    pub enrollments: Vec<EnrollmentRow>,
    /// Enrollments these writes make ([`Writes::add_created`]): inserted, with their
    /// `enrollment_keys` row.
    pub created: super::FastSet<String>,
    /// The status each stepped enrollment had before its first step here: where its last row's
    /// status differs, its `enrollment_keys` row is updated too (PostgreSQL). A row pushed
    /// without a step keeps its status.
    pub status_before: super::FastMap<String, Status>,
    /// One row per step that wrote entries ([`super::journey`]).
    pub journey: Vec<JourneyStep>,
    pub dispatches: Vec<DispatchRow>,
    pub tasks: Vec<TaskRow>,
    pub closed_tasks: Vec<TaskClosure>,
    /// `fetch` attempts to send (docs/flows.md, "fetch").
    pub fetches: Vec<super::fetches::FetchRow>,
    /// Approval links to sign and hand out as dispatches (docs/flows.md, "approval"), in
    /// [`Tx::write_all`], where the link secret is read.
    pub approvals: Vec<ApprovalLink>,
    /// Events a task outcome raised (docs/signals.md, "Kinds of signal and the events they raise"), by enrollment: the caller routes them to the
    /// contact's other enrollments.
    pub raised: Vec<(String, Vec<String>)>,
    /// The earliest `next_run_at` written, to wake the planner early.
    pub earliest_wake: Option<i64>,
    /// Capacity slots reserved by these dispatches and tasks (docs/capacity.md), written with them.
    pub ledger: Vec<super::capacity::LedgerRow>,
    /// Runs entered, by step type (`nudge_transitions_total`, counted once stored).
    pub transitions: std::collections::BTreeMap<&'static str, u64>,
    /// The flows' funnel counts these writes add ([`super::flow_stats`]).
    pub counts: super::flow_stats::Tally,
    /// Goal events that may convert step-experiment exposures.
    pub conversions: Vec<super::flow_stats::Conversion>,
    /// Enrollments whose outreach message was acknowledged as sent, in flows with step
    /// experiments: their open windows close (before `exposures` go in). One per enrollment.
    pub closings: Vec<super::flow_stats::Closing>,
    /// A variant's messages acknowledged as sent: inserted unless the enrollment was exposed to
    /// that experiment before, each one inserted counting `exposed`.
    pub exposures: Vec<super::flow_stats::ExposureRow>,
    /// The instants the journey entries of these writes spelled last (their steps mostly share
    /// a `now`): spelled once, not once a step.
    pub instants: super::journey::detail::Instants,
}

/// What a stored [`Writes`] means to this process once committed: the earliest wake to
/// announce to the planners, and the runs entered (counted in `nudge_transitions_total`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Committed {
    /// The earliest `next_run_at` written (or the sooner timer a signal group made).
    pub wake: Option<i64>,
    /// Runs entered, by step type.
    pub transitions: std::collections::BTreeMap<&'static str, u64>,
}

impl Committed {
    /// Adds what `other` means too: the sooner wake, both counts.
    pub fn absorb(&mut self, other: Committed) {
        self.wake = match (self.wake, other.wake) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        for (kind, n) in other.transitions {
            *self.transitions.entry(kind).or_insert(0) += n;
        }
    }
}

impl Writes {
    /// Empty writes with room for `steps` steps of a planner batch (each an enrollment row, a
    /// journey row and, mostly, a dispatch): grown a doubling at a time, these vectors of large
    /// rows were copied again and again.
    pub fn for_steps(steps: usize) -> Writes {
        Writes {
            enrollments: Vec::with_capacity(steps),
            status_before: super::FastMap::with_capacity_and_hasher(steps, Default::default()),
            journey: Vec::with_capacity(steps),
            dispatches: Vec::with_capacity(steps),
            ..Writes::default()
        }
    }

    /// What to announce and count once these writes are committed.
    pub fn committed(&self) -> Committed {
        Committed {
            wake: self.earliest_wake,
            transitions: self.transitions.clone(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.enrollments.is_empty()
    }

    /// Counts one `metric` of `row`'s flow at `step` (of `variant`, or `""`), at `at_ms`.
    pub fn count(
        &mut self,
        row: &EnrollmentRow,
        step: &str,
        metric: crate::engine::funnel::Metric,
        variant: &str,
        at_ms: i64,
    ) {
        self.counts.add_ref(
            super::flow_stats::CountRef {
                account_id: &row.account_id,
                flow_id: &row.flow_id,
                flow_version: row.flow_version,
                step,
                metric,
                variant,
                hour: super::flow_stats::hour_of(at_ms),
            },
            1,
        );
    }

    /// [`Writes::add_step`] for an enrollment these writes make: its row is inserted, not
    /// updated.
    pub fn add_created(
        &mut self,
        row: EnrollmentRow,
        before: &crate::engine::state::Before,
        after: &EnrollmentState,
        effects: &[Effect],
        now: DateTime<Utc>,
    ) {
        self.created.insert(row.id.clone());
        self.add_step(row, before, after, effects, now, None);
    }

    /// Adds what one engine step did to `row` (the row before the step): the updated row and a
    /// row for each effect. `outcome` is the task outcome the step applied, if it was one.
    pub fn add_step(
        &mut self,
        row: EnrollmentRow,
        before: &crate::engine::state::Before,
        after: &EnrollmentState,
        effects: &[Effect],
        now: DateTime<Utc>,
        outcome: Option<&str>,
    ) {
        let (row, now_ms) = self.open_step(row, before, effects, now);
        for effect in effects {
            self.add_effect(&row, before, after, effect, now_ms, outcome);
        }
        self.close_step(row, after, now_ms);
    }

    /// [`Writes::add_step`] for a caller that has no use for the effects afterwards (the
    /// planner): they are taken out of `effects` (left empty, its room kept), a dispatch's
    /// strings moved into its row instead of being copied.
    pub fn add_step_owned(
        &mut self,
        row: EnrollmentRow,
        before: &crate::engine::state::Before,
        after: &EnrollmentState,
        effects: &mut Vec<Effect>,
        now: DateTime<Utc>,
        outcome: Option<&str>,
    ) {
        let (row, now_ms) = self.open_step(row, before, effects, now);
        for effect in effects.drain(..) {
            match effect {
                Effect::Dispatch(d) => self.add_dispatch(&row, d, now_ms),
                other => self.add_effect(&row, before, after, &other, now_ms, outcome),
            }
        }
        self.close_step(row, after, now_ms);
    }

    /// What a step writes before its effects' rows: the status it started from, its funnel
    /// counts and journey row, the runs it entered.
    fn open_step(
        &mut self,
        mut row: EnrollmentRow,
        before: &crate::engine::state::Before,
        effects: &[Effect],
        now: DateTime<Utc>,
    ) -> (EnrollmentRow, i64) {
        let now_ms = to_millis(now);
        if !self.status_before.contains_key(&row.id) {
            self.status_before.insert(row.id.clone(), before.status);
        }
        let mut step = JourneyStep::new(&row.id, &row.account_id, row.journey_seq + 1, now_ms);
        for (step_id, metric) in crate::engine::funnel::of_effects(before.step(), effects) {
            self.count(&row, step_id, metric, "", now_ms);
        }
        step.push_effects_with(effects, &mut self.instants);
        row.journey_seq += effects.len() as i64;
        for effect in effects {
            if let Effect::RunOpened(r) = effect {
                *self.transitions.entry(r.step_type.as_str()).or_insert(0) += 1;
            }
        }
        if step.n > 0 {
            self.journey.push(step);
        }
        (row, now_ms)
    }

    /// The capacity slot a dispatch or a task reserved, if any: its ledger row.
    fn reserve(
        &mut self,
        row: &EnrollmentRow,
        key: &str,
        reservation: Option<&crate::capacity::Entry>,
    ) {
        if let Some(e) = reservation {
            self.ledger.push(super::capacity::LedgerRow::of(
                key,
                &row.account_id,
                &row.sender_id,
                e,
            ));
        }
    }

    /// A dispatch's outbox row (and its capacity slot), its strings moved in.
    fn add_dispatch(&mut self, row: &EnrollmentRow, d: crate::engine::Dispatch, now_ms: i64) {
        self.reserve(row, &d.idempotency_key, d.reservation.as_ref());
        self.dispatches.push(DispatchRow {
            id: super::new_id("dp"),
            account_id: row.account_id.clone(),
            enrollment_id: row.id.clone(),
            run: d.run as i64,
            step: d.step,
            idempotency_key: d.idempotency_key,
            channel: Cow::Borrowed(d.channel.as_str()),
            recipient: d.recipient,
            template: d.template,
            input: json_text(&d.input),
            channel_params: d
                .channel_params
                .map(|p| serde_json::Value::Object(p).to_string()),
            message_id: d.message_id,
            status: Cow::Borrowed(DispatchStatus::Pending.as_str()),
            lease_owner: None,
            lease_until: None,
            attempts: 0,
            provider_message_id: None,
            failure: None,
            created_at: now_ms,
            due_at: now_ms,
            hold_code: None,
            variant: d.variant,
        })
    }

    /// The row an effect writes, if any (the runs entered are counted by
    /// [`Writes::open_step`]).
    fn add_effect(
        &mut self,
        row: &EnrollmentRow,
        before: &crate::engine::state::Before,
        after: &EnrollmentState,
        effect: &Effect,
        now_ms: i64,
        outcome: Option<&str>,
    ) {
        let open_task = before
            .run
            .as_ref()
            .filter(|(_, _, task)| *task == Some(TaskPhase::Open))
            .map(|(id, _, _)| *id);
        match effect {
            // Off the planner's path (which moves its dispatches in): a copy of the effect.
            Effect::Dispatch(d) => self.add_dispatch(row, d.clone(), now_ms),
            Effect::DispatchHeld {
                idempotency_key,
                run,
                channel,
                code,
                message,
            } => self.dispatches.push(DispatchRow {
                id: super::new_id("dp"),
                account_id: row.account_id.clone(),
                enrollment_id: row.id.clone(),
                run: *run as i64,
                step: before
                    .step()
                    .or(after.run.as_ref().map(|r| r.step.as_str()))
                    .unwrap_or_default()
                    .to_string(),
                // A held step may be planned again and sent later under the real key.
                idempotency_key: format!("{idempotency_key}:held"),
                channel: Cow::Borrowed(channel.as_str()),
                recipient: String::new(),
                template: String::new(),
                input: "{}".into(),
                channel_params: None,
                message_id: None,
                status: Cow::Borrowed(DispatchStatus::Held.as_str()),
                lease_owner: None,
                lease_until: None,
                attempts: 0,
                provider_message_id: None,
                failure: Some(message.clone()),
                created_at: now_ms,
                due_at: now_ms,
                hold_code: Some(code.as_str().to_string()),
                variant: None,
            }),
            Effect::TaskCreated(t) => {
                self.reserve(row, &t.idempotency_key, t.reservation.as_ref());
                self.tasks.push(TaskRow {
                    id: super::new_id("tk"),
                    account_id: row.account_id.clone(),
                    enrollment_id: row.id.clone(),
                    run: t.run as i64,
                    kind: t.step_type.clone(),
                    step: t.step.clone(),
                    status: TaskStatus::Open.as_str().into(),
                    outcome: None,
                    params: t.params.to_string(),
                    due_by: t.due_by.map(to_millis),
                    created_at: now_ms,
                    completed_at: None,
                })
            }
            Effect::RunClosed { run, .. } if Some(*run) == open_task => {
                self.closed_tasks.push(TaskClosure {
                    enrollment_id: row.id.clone(),
                    run: *run as i64,
                    status: if outcome.is_some() {
                        TaskStatus::Completed
                    } else {
                        TaskStatus::Closed
                    },
                    outcome: outcome.map(str::to_string),
                    at: now_ms,
                })
            }
            Effect::FetchRequested(r) => self.fetches.push(super::fetches::FetchRow {
                id: r.idempotency_key.clone(),
                account_id: row.account_id.clone(),
                enrollment_id: row.id.clone(),
                run: r.run as i64,
                attempt: r.attempt as i32,
                request: serde_json::to_string(r).expect("a fetch request serializes"),
                status: "pending".into(),
                lease_until: None,
                created_at: now_ms,
            }),
            Effect::ApprovalRequested {
                run,
                step,
                title,
                expires_at,
            } => self.approvals.push(ApprovalLink {
                account_id: row.account_id.clone(),
                enrollment_id: row.id.clone(),
                sender_id: row.sender_id.clone(),
                run: *run as i64,
                step: step.clone(),
                title: title.clone(),
                expires_at: to_millis(*expires_at),
                created_at: now_ms,
            }),
            Effect::RaiseSignal { raises, .. } => {
                self.raised.push((row.id.clone(), raises.clone()));
            }
            _ => {}
        }
    }

    /// The stepped row itself, last: its new status, timer and state.
    fn close_step(&mut self, mut row: EnrollmentRow, after: &EnrollmentState, now_ms: i64) {
        let status = after.status.as_str();
        if row.status != status {
            // Written over the old text (most steps keep it: no new string).
            row.status.clear();
            row.status.push_str(status);
        }
        row.next_run_at = after.next_run_at.map(to_millis);
        // Into a new buffer with room to spare: the old one has the stored state's exact length,
        // and growing it copied bytes about to be overwritten. A new enrollment has none yet:
        // room for a usual first state, so it is not grown from nothing a doubling at a time.
        let room = match row.state.len() {
            0 => NEW_STATE_ROOM,
            n => n + n / 2 + 64,
        };
        let mut state = Vec::with_capacity(room);
        super::state_encoding::encode_into(after, &mut state);
        row.state = state;
        row.updated_at = now_ms;
        if let Some(t) = row.next_run_at {
            self.earliest_wake = Some(self.earliest_wake.map_or(t, |e| e.min(t)));
        }
        self.enrollments.push(row);
    }
}

impl Writes {
    /// The rows to store, the last of each enrollment (in first-seen order: one statement may
    /// not touch a row twice, and a later step of the same enrollment supersedes the earlier),
    /// split into the enrollments these writes make and those they update.
    pub(super) fn rows_to_store(&self) -> (Vec<&EnrollmentRow>, Vec<&EnrollmentRow>) {
        let mut index: super::FastMap<&str, usize> =
            super::FastMap::with_capacity_and_hasher(self.enrollments.len(), Default::default());
        let mut last: Vec<&EnrollmentRow> = Vec::with_capacity(self.enrollments.len());
        for row in &self.enrollments {
            match index.get(row.id.as_str()) {
                Some(&i) => last[i] = row,
                None => {
                    index.insert(&row.id, last.len());
                    last.push(row);
                }
            }
        }
        last.into_iter().partition(|r| self.created.contains(&r.id))
    }

    /// Whether an updated enrollment's status differs from the one it had before its first
    /// step here (its `enrollment_keys` row must follow).
    pub(super) fn status_changed(&self, row: &EnrollmentRow) -> bool {
        self.status_before
            .get(&row.id)
            .is_some_and(|was| was.as_str() != row.status)
    }

    /// The status an updated enrollment had before its first step here, which its
    /// `enrollment_keys` row still holds (what finds that row); its own status when it was not
    /// stepped.
    pub(super) fn status_was<'a>(&self, row: &'a EnrollmentRow) -> &'a str {
        self.status_before
            .get(&row.id)
            .map_or(row.status.as_str(), |was| was.as_str())
    }

    /// The dispatches to store, split into new ones and held steps' rows. A new dispatch's key
    /// (`enrollment:run`) is new by construction: runs are numbered on the enrollment, whose row
    /// the writing transaction holds, and a run dispatches once. So both backends insert it
    /// plainly, and a repeat is an error (the unique index), never a silent skip: `ON
    /// CONFLICT`'s speculative insertion (the key's index probed before the row, a confirmation
    /// after it) was a quarter of PostgreSQL's insert. A held step is written again each time it
    /// is planned while still held, under `<key>:held`: those keep the first row.
    pub(super) fn new_and_held_dispatches(&self) -> (Vec<&DispatchRow>, Vec<&DispatchRow>) {
        self.dispatches
            .iter()
            .partition(|d| d.status != DispatchStatus::Held.as_str())
    }
}

/// `value`'s JSON text; an empty object (a dispatch's usual input) spelled without serde_json's
/// formatter.
fn json_text(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::Object(map) if map.is_empty() => "{}".to_string(),
        other => other.to_string(),
    }
}

/// `n` rows updated where `expected` were meant to be: an enrollment row that is not stored
/// was given as an update (new rows belong in [`Writes::created`]), which must not pass as done.
pub(super) fn all_updated(n: usize, expected: usize) -> QueryResult<usize> {
    if n == expected {
        return Ok(n);
    }
    Err(diesel::result::Error::QueryBuilderError(
        format!(
            "{} of {expected} enrollment rows to update are not stored (a new enrollment must \
             be written as created)",
            expected - n.min(expected)
        )
        .into(),
    ))
}

impl Tx {
    /// Stores `w` inside this transaction, one statement per table (and chunk). Enrollment rows
    /// are upserted, so a new enrollment and an updated one go through the same statement.
    ///
    /// PostgreSQL gets [`super::pg_batch`] (one array-bound statement per table, pipelined);
    /// SQLite gets [`super::sqlite_batch`] on the blocking pool, since diesel cannot send a
    /// multi-row insert to SQLite through the async wrapper.
    pub async fn write_all(&mut self, w: &Writes) -> Result<(), StoreError> {
        let with_links;
        let w = if w.approvals.is_empty() {
            w
        } else {
            let mut owned = w.clone();
            self.approval_dispatches(&mut owned).await?;
            with_links = owned;
            &with_links
        };
        // Few rows (one per fetch attempt): plain inserts, before the batch, whose last
        // statement numbers the journey (nothing may follow it but the commit).
        if !w.fetches.is_empty() {
            self.insert_fetches(&w.fetches).await?;
        }
        match &mut self.conn {
            Conn::Postgres(c) => {
                // Each place once: the rows written here move (a second write of one in this
                // transaction finds it by id).
                let locked = std::mem::take(&mut self.locked);
                super::pg_batch::write(c, w, &locked).await?
            }
            Conn::Sqlite(c) => {
                let owned = w.clone();
                c.spawn_blocking(move |conn| super::sqlite_batch::write(conn, &owned))
                    .await?
            }
        }
        Ok(())
    }

    /// docs/flows.md, "approval": each approval link signed with the server's secret (read in this
    /// transaction) becomes a dispatch on channel `approval` to the sender's email, its params
    /// `path` (`/approvals/{token}`), `title` and `expires_at`; the API adds the absolute `url`
    /// on the way out. The token lives only in this outbox row, never in the journey.
    async fn approval_dispatches(&mut self, w: &mut Writes) -> Result<(), StoreError> {
        use crate::inbound::link::{self, LinkClaims, LinkPurpose};
        let secret = self.link_secret().await?;
        for a in std::mem::take(&mut w.approvals) {
            let token = link::sign(
                &secret,
                &LinkClaims {
                    purpose: LinkPurpose::Approval,
                    account: a.account_id.clone(),
                    subject: a.enrollment_id.clone(),
                    run: Some(a.run),
                    expires_at_ms: Some(a.expires_at),
                },
            );
            let email = on_conn!(&mut self.conn, c => super::schema::senders::table
                .filter(super::schema::senders::account_id.eq(&a.account_id))
                .filter(super::schema::senders::id.eq(&a.sender_id))
                .select(super::schema::senders::email)
                .first::<Option<String>>(c)
                .await
                .optional())?
            .flatten();
            let params = serde_json::json!({
                "path": format!("/approvals/{token}"),
                "title": a.title,
                "expires_at": crate::engine::instant::format(crate::clock::from_millis(a.expires_at)),
            });
            w.dispatches.push(DispatchRow {
                id: super::new_id("dp"),
                account_id: a.account_id,
                enrollment_id: a.enrollment_id.clone(),
                run: a.run,
                step: a.step,
                idempotency_key: format!("{}:{}", a.enrollment_id, a.run),
                channel: "approval".into(),
                recipient: email.unwrap_or_default(),
                template: "approval".into(),
                input: "{}".into(),
                channel_params: Some(params.to_string()),
                message_id: None,
                status: DispatchStatus::Pending.as_str().into(),
                lease_owner: None,
                lease_until: None,
                attempts: 0,
                provider_message_id: None,
                failure: None,
                created_at: a.created_at,
                due_at: a.created_at,
                hold_code: None,
                variant: None,
            });
        }
        Ok(())
    }

    /// Claims up to `limit` enrollments due at `now_ms`, earliest first (by due time, then id).
    /// PostgreSQL locks them `FOR UPDATE SKIP LOCKED`, so replicas claiming at once never take
    /// the same one; SQLite has one writer.
    ///
    /// `after` is where the previous claim of the same drain ended (its last due time and id):
    /// the claim starts there instead of at the earliest due row. The batches of one drain run
    /// side by side, and a claim from the start walked over every row its siblings held and had
    /// not committed yet (each a heap fetch and a failed lock), a few thousand per claim with
    /// four batches in flight.
    ///
    /// With a `shard` `(k, of)` (PostgreSQL, a planner's concurrent batches), the enrollments
    /// of capped senders (docs/capacity.md) are only those whose sender hashes to `k` of `of`: a batch
    /// that reserves capacity locks its senders until it commits, so concurrent batches over
    /// the same senders would run one after the other; sharded, each batch has senders of its
    /// own. Enrollments of senders without caps go to whichever batch claims them first. The
    /// sender locks, not the shards, are what keep replicas from over-sending (a shard of
    /// another replica may overlap this one's: it then waits, it never double-counts).
    pub async fn claim_due(
        &mut self,
        now_ms: i64,
        limit: i64,
        shard: Option<(u32, u32)>,
        after: Option<&(i64, String)>,
    ) -> Result<Vec<EnrollmentRow>, StoreError> {
        use diesel::sql_types::{BigInt, Integer, Nullable, Text};
        // From the start (no cursor): a due time before every real one.
        let (after_due, after_id) = after.map_or((i64::MIN, ""), |(d, id)| (*d, id.as_str()));
        /// A claimed row and where it is (see [`super::LockedRows`]).
        #[derive(QueryableByName)]
        struct Claimed {
            #[diesel(embed)]
            enrollment: EnrollmentRow,
            #[diesel(sql_type = super::pg_array::Tid)]
            place: super::pg_array::Place,
        }
        let room = usize::try_from(limit).unwrap_or(0).min(MAX_CLAIM_ROOM);
        if let (Conn::Postgres(c), Some((k, of))) = (&mut self.conn, shard) {
            let claimed: Vec<Claimed> = super::pg_batch::Cached(
                diesel::sql_query(
                    "SELECT e.*, e.ctid AS place FROM enrollments e \
                     WHERE e.next_run_at <= $1 AND (e.next_run_at, e.id) > ($5, $6) \
                     AND (NOT EXISTS (SELECT 1 FROM senders s \
                     WHERE s.account_id = e.account_id AND s.id = e.sender_id \
                     AND s.caps IS NOT NULL) \
                     OR (hashtext(e.account_id || '/' || e.sender_id) & 2147483647) % $2 = $3) \
                     ORDER BY e.next_run_at, e.id LIMIT $4 FOR UPDATE OF e SKIP LOCKED",
                )
                .bind::<BigInt, _>(now_ms)
                .bind::<Integer, _>(of as i32)
                .bind::<Integer, _>(k as i32)
                .bind::<BigInt, _>(limit)
                .bind::<BigInt, _>(after_due)
                .bind::<Text, _>(after_id),
            )
            .load(&mut **c)
            .await?;
            let mut rows = Vec::with_capacity(claimed.len());
            self.locked.reserve(claimed.len());
            for Claimed { enrollment, place } in claimed {
                self.locked.push(&enrollment.id, place);
                rows.push(enrollment);
            }
            return Ok(rows);
        }
        // The same rows on both backends (a macro: a query is typed by its backend), each with
        // its place on PostgreSQL. The row comparison is spelled out: diesel has no row values.
        macro_rules! due_rows {
            () => {
                enrollments::table
                    .filter(enrollments::next_run_at.le(now_ms))
                    .filter(
                        diesel::dsl::sql::<diesel::sql_types::Bool>("(next_run_at, id) > (")
                            .bind::<Nullable<BigInt>, _>(Some(after_due))
                            .sql(", ")
                            .bind::<Text, _>(after_id)
                            .sql(")"),
                    )
                    .order((enrollments::next_run_at.asc(), enrollments::id.asc()))
                    .limit(limit)
            };
        }
        Ok(match &mut self.conn {
            Conn::Postgres(c) => {
                use futures_util::TryStreamExt;
                // Into a vector with room for the batch: collected from the stream, it grew a
                // doubling at a time, each time copying every (large) row read so far.
                let locked = &mut self.locked;
                locked.reserve(room);
                due_rows!()
                    .select((
                        EnrollmentRow::as_select(),
                        diesel::dsl::sql::<super::pg_array::Tid>("enrollments.ctid"),
                    ))
                    .for_update()
                    .skip_locked()
                    .load_stream::<(EnrollmentRow, super::pg_array::Place)>(&mut **c)
                    .await?
                    .try_fold(Vec::with_capacity(room), |mut rows, (row, place)| {
                        locked.push(&row.id, place);
                        rows.push(row);
                        std::future::ready(Ok(rows))
                    })
                    .await?
            }
            Conn::Sqlite(c) => {
                due_rows!()
                    .select(EnrollmentRow::as_select())
                    .load(&mut **c)
                    .await?
            }
        })
    }

    /// The enrollment `id` (of `account_id`, when given), locked against concurrent writers
    /// until this transaction ends (PostgreSQL `FOR UPDATE`; SQLite has one writer).
    pub async fn lock_enrollment(
        &mut self,
        account_id: Option<&str>,
        id: &str,
    ) -> Result<Option<EnrollmentRow>, StoreError> {
        macro_rules! find {
            () => {
                enrollments::table
                    .filter(enrollments::id.eq(id))
                    .select(EnrollmentRow::as_select())
            };
        }
        let found = match &mut self.conn {
            Conn::Postgres(c) => find!().for_update().first(&mut **c).await.optional()?,
            Conn::Sqlite(c) => find!().first(&mut **c).await.optional()?,
        };
        // Another account's enrollment is not found (ids are unguessable; the lock is brief).
        Ok(found.filter(|row| account_id.is_none_or(|a| row.account_id == a)))
    }

    /// The account's enrollments with these client keys.
    pub async fn enrollments_by_client_key(
        &mut self,
        account_id: &str,
        keys: &[&str],
    ) -> Result<Vec<EnrollmentRow>, StoreError> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        Ok(on_conn!(&mut self.conn, c => enrollments::table
            .inner_join(enrollment_keys::table)
            .filter(enrollment_keys::account_id.eq(account_id))
            .filter(enrollment_keys::client_key.eq_any(keys))
            .select(EnrollmentRow::as_select())
            .load(c)
            .await)?)
    }

    /// Which of `flow_ids` have a live enrollment made with `allow_duplicate` (usually none):
    /// only in those can a new enrollment made without it be a duplicate that the unique index
    /// of live enrollments does not refuse by itself (that index holds only the enrollments made
    /// without `allow_duplicate`). One probe a flow of the partial index
    /// `enrollment_keys_live_duplicates` (SQLite: `enrollments_live_duplicates`), whose
    /// predicate the query repeats word for word (a database uses a partial index only for a
    /// query that implies its predicate).
    pub async fn flows_with_live_duplicates(
        &mut self,
        account_id: &str,
        flow_ids: &[&str],
    ) -> Result<Vec<String>, StoreError> {
        if flow_ids.is_empty() {
            return Ok(Vec::new());
        }
        Ok(match &mut self.conn {
            Conn::Postgres(c) => {
                super::pg_batch::flows_with_live_duplicates(c, account_id, flow_ids).await?
            }
            Conn::Sqlite(c) => {
                #[derive(QueryableByName)]
                struct Flow {
                    #[diesel(sql_type = diesel::sql_types::Text)]
                    flow_id: String,
                }
                // Named: without statistics SQLite picks `enrollments_flow` (more equalities),
                // which walks every live enrollment of the flow.
                let marks = vec!["?"; flow_ids.len()].join(", ");
                let mut q = diesel::sql_query(format!(
                    "SELECT DISTINCT flow_id FROM enrollments \
                     INDEXED BY enrollments_live_duplicates \
                     WHERE account_id = ? AND flow_id IN ({marks}) AND {}",
                    live_duplicate_predicate!()
                ))
                .into_boxed::<diesel::sqlite::Sqlite>()
                .bind::<diesel::sql_types::Text, _>(account_id);
                for f in flow_ids {
                    q = q.bind::<diesel::sql_types::Text, _>(*f);
                }
                let rows: Vec<Flow> = q.load(&mut **c).await?;
                rows.into_iter().map(|r| r.flow_id).collect()
            }
        })
    }

    /// `(contact, flow, enrollment)` of every active or paused enrollment of these contacts.
    /// The query names contacts only (their index is selective); a flow filter made PostgreSQL
    /// walk the flow's index, every enrollment of the flow for each batch.
    pub async fn live_enrollments_of(
        &mut self,
        account_id: &str,
        contact_ids: &[&str],
    ) -> Result<Vec<(String, String, String)>, StoreError> {
        if contact_ids.is_empty() {
            return Ok(Vec::new());
        }
        Ok(match &mut self.conn {
            Conn::Postgres(c) => {
                super::pg_batch::live_enrollments_of(c, account_id, contact_ids).await?
            }
            Conn::Sqlite(c) => {
                enrollment_keys::table
                    .filter(enrollment_keys::account_id.eq(account_id))
                    .filter(enrollment_keys::contact_id.eq_any(contact_ids))
                    .filter(enrollment_keys::status.eq_any(LIVE))
                    .select((
                        enrollment_keys::contact_id,
                        enrollment_keys::flow_id,
                        enrollment_keys::id,
                    ))
                    .load(&mut **c)
                    .await?
            }
        })
    }
}

/// The earliest `next_run_at` stored.
pub async fn next_due(db: &Db) -> Result<Option<DateTime<Utc>>, StoreError> {
    earliest_due(db, None).await
}

/// The earliest `next_run_at` stored after `after_ms`: the planner loop's next wake while
/// batches in flight hold the rows due until then (their `next_run_at` is still the old one
/// until they commit).
pub async fn next_due_after(db: &Db, after_ms: i64) -> Result<Option<DateTime<Utc>>, StoreError> {
    earliest_due(db, Some(after_ms)).await
}

async fn earliest_due(db: &Db, after_ms: Option<i64>) -> Result<Option<DateTime<Utc>>, StoreError> {
    let conn = db.conn().await?;
    let min: Option<i64> = with_conn!(conn, c => {
        let mut query = enrollments::table
            .select(diesel::dsl::min(enrollments::next_run_at))
            .into_boxed();
        if let Some(after) = after_ms {
            query = query.filter(enrollments::next_run_at.gt(after));
        }
        query.first(c).await
    })?;
    Ok(min.map(crate::clock::from_millis))
}

/// How many enrollments have each status (one grouped query over the narrow keys; the metrics
/// refresher).
pub async fn count_by_status(db: &Db) -> Result<Vec<(String, i64)>, StoreError> {
    let conn = db.conn().await?;
    Ok(with_conn!(conn, c => enrollment_keys::table
        .group_by(enrollment_keys::status)
        .select((enrollment_keys::status, diesel::dsl::count_star()))
        .load(c)
        .await)?)
}

/// Up to `limit` enrollments of every account with ids after `after_id`, by id, whatever
/// their status (a keyset scan: the metrics refresher explains the live ones page by page).
///
/// No status filter in SQL: with `status = ANY(…)` PostgreSQL combined the status index with
/// the primary key in a bitmap scan, so each page of 1,000 read every row after the cursor
/// (88 ms a page with 100,000 stored; the census of one refresh cost more than a core for as
/// long as it ran). Ordered by the key alone, a page is one index range.
pub async fn page_after(
    db: &Db,
    after_id: &str,
    limit: i64,
) -> Result<Vec<EnrollmentRow>, StoreError> {
    let conn = db.conn().await?;
    Ok(with_conn!(conn, c => enrollments::table
        .filter(enrollments::id.gt(after_id))
        .order(enrollments::id.asc())
        .limit(limit)
        .select(EnrollmentRow::as_select())
        .load(c)
        .await)?)
}

/// The account's enrollment `id`.
pub async fn get(db: &Db, account_id: &str, id: &str) -> Result<Option<EnrollmentRow>, StoreError> {
    let conn = db.conn().await?;
    Ok(with_conn!(conn, c => enrollments::table
        .filter(enrollments::account_id.eq(account_id))
        .filter(enrollments::id.eq(id))
        .select(EnrollmentRow::as_select())
        .first(c)
        .await
        .optional())?)
}

/// The contact of each of these enrollments (of `account_id`), as (enrollment, contact).
pub async fn contacts_of(
    db: &Db,
    account_id: &str,
    ids: &[String],
) -> Result<Vec<(String, String)>, StoreError> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let conn = db.conn().await?;
    Ok(with_conn!(conn, c => enrollments::table
        .filter(enrollments::account_id.eq(account_id))
        .filter(enrollments::id.eq_any(ids))
        .select((enrollments::id, enrollments::contact_id))
        .load(c)
        .await)?)
}

/// Filters of [`list`]; `None` means any.
#[derive(Debug, Clone, Default)]
pub struct ListFilter<'a> {
    /// The flow's id.
    pub flow_id: Option<&'a str>,
    /// The contact's id.
    pub contact_id: Option<&'a str>,
    /// The status.
    pub status: Option<Status>,
    /// Ids after this one (keyset pagination).
    pub after_id: Option<&'a str>,
}

/// How many of the account's enrollments each flow has in each status, `(flow id, status,
/// count)`, for one flow or contact when given (the console's lists): one grouped read of the
/// narrow keys.
pub async fn status_counts(
    db: &Db,
    account_id: &str,
    flow_id: Option<&str>,
    contact_id: Option<&str>,
) -> Result<Vec<(String, String, i64)>, StoreError> {
    let conn = db.conn().await?;
    Ok(with_conn!(conn, c => {
        let mut q = enrollment_keys::table
            .filter(enrollment_keys::account_id.eq(account_id))
            .group_by((enrollment_keys::flow_id, enrollment_keys::status))
            .select((
                enrollment_keys::flow_id,
                enrollment_keys::status,
                diesel::dsl::count_star(),
            ))
            .into_boxed();
        if let Some(flow) = flow_id {
            q = q.filter(enrollment_keys::flow_id.eq(flow));
        }
        if let Some(contact) = contact_id {
            q = q.filter(enrollment_keys::contact_id.eq(contact));
        }
        q.load(c).await
    })?)
}

/// Up to `limit` of the account's enrollments by id, filtered.
pub async fn list(
    db: &Db,
    account_id: &str,
    filter: &ListFilter<'_>,
    limit: i64,
) -> Result<Vec<EnrollmentRow>, StoreError> {
    let conn = db.conn().await?;
    if filter.flow_id.is_none() && filter.contact_id.is_none() {
        // The account's enrollments in key order: the table's own primary key.
        return Ok(with_conn!(conn, c => {
            let mut q = enrollments::table
                .filter(enrollments::account_id.eq(account_id))
                .order(enrollments::id.asc())
                .limit(limit)
                .select(EnrollmentRow::as_select())
                .into_boxed();
            if let Some(status) = filter.status {
                q = q.filter(enrollments::status.eq(status.as_str()));
            }
            if let Some(after) = filter.after_id {
                q = q.filter(enrollments::id.gt(after));
            }
            q.load(c).await
        })?);
    }
    // By flow or contact: found through their indexes in `enrollment_keys`.
    Ok(with_conn!(conn, c => {
        let mut q = enrollments::table
            .inner_join(enrollment_keys::table)
            .filter(enrollment_keys::account_id.eq(account_id))
            .order(enrollment_keys::id.asc())
            .limit(limit)
            .select(EnrollmentRow::as_select())
            .into_boxed();
        if let Some(flow) = filter.flow_id {
            q = q.filter(enrollment_keys::flow_id.eq(flow));
        }
        if let Some(contact) = filter.contact_id {
            q = q.filter(enrollment_keys::contact_id.eq(contact));
        }
        if let Some(status) = filter.status {
            q = q.filter(enrollment_keys::status.eq(status.as_str()));
        }
        if let Some(after) = filter.after_id {
            q = q.filter(enrollment_keys::id.gt(after));
        }
        q.load(c).await
    })?)
}

/// Up to `limit` journey rows of an enrollment after `after_seq`, in order.
pub async fn journey(
    db: &Db,
    enrollment_id: &str,
    after_seq: i64,
    limit: i64,
) -> Result<Vec<JourneyRow>, StoreError> {
    use diesel::sql_types::{BigInt, Text};
    let conn = db.conn().await?;
    // Each stored step holds at least one entry after `after_seq`, so `limit` steps hold enough.
    // The first step may be on the enrollment's keys row (PostgreSQL, migration
    // `first_journey_step`), found by every column of `enrollment_keys_flow`, one probe.
    let query = diesel::sql_query(concat!(
        "SELECT * FROM (SELECT * FROM (SELECT enrollment_id, seq, n, at, xid, entries \
         FROM journey_steps WHERE enrollment_id = $1 AND seq + n > $2 + 1 \
         ORDER BY seq LIMIT $3) AS steps \
         UNION ALL SELECT ",
        first_step_columns!(),
        " FROM enrollments e JOIN enrollment_keys k ON k.account_id = e.account_id \
         AND k.flow_id = e.flow_id AND k.status = e.status AND k.id = e.id \
         WHERE e.id = $1 AND k.first_xid IS NOT NULL AND k.first_n > $2) AS j \
         ORDER BY seq LIMIT $3",
    ))
    .bind::<Text, _>(enrollment_id)
    .bind::<BigInt, _>(after_seq)
    .bind::<BigInt, _>(limit);
    let steps: Vec<StoredStep> = with_conn!(conn, c => query.load(c).await)?;
    let mut out = Vec::new();
    for step in &steps {
        out.extend(step.expand()?.into_iter().filter(|row| row.seq > after_seq));
    }
    out.truncate(limit.max(0) as usize);
    Ok(out)
}

/// A journey row of one of a contact's enrollments, with the enrollment's flow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContactJourneyRow {
    pub enrollment_id: String,
    pub flow_id: String,
    pub flow_version: i32,
    /// The enrollment's sender's zone (the journey's times are shown in it when the contact
    /// has none); `None` when the sender is gone.
    pub sender_tz: Option<String>,
    pub seq: i64,
    pub at: i64,
    pub kind: String,
    pub detail: String,
}

/// Where a page of a contact's journey resumes: after the entry with this key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContactJourneyKey {
    /// The entry's `at` (epoch ms).
    pub at: i64,
    /// Its enrollment.
    pub enrollment_id: String,
    /// Its seq in that enrollment.
    pub seq: i64,
}

/// Up to `limit` journey rows of the account's contact, across its enrollments, ordered by
/// `(at, enrollment_id, seq)` (within an enrollment that is seq order: its entries are written
/// one transition at a time, `at` never earlier than the last), after `after`. `only` keeps one
/// enrollment's rows (an enrollment-scoped caller).
pub async fn contact_journey(
    db: &Db,
    account_id: &str,
    contact_id: &str,
    only: Option<&str>,
    after: Option<&ContactJourneyKey>,
    limit: i64,
) -> Result<Vec<ContactJourneyRow>, StoreError> {
    use diesel::sql_types::{BigInt, Nullable, Text};
    // The contact's enrollments come from their index; their entries from the journey's
    // primary key. A row value comparison is the keyset (SQLite ≥ 3.15 and PostgreSQL).
    // A stored step is kept when its last entry is after the key (so it holds at least one
    // entry to return), and its entries are cut to those after the key. A first step kept on
    // the keys row (PostgreSQL, migration `first_journey_step`) comes with the row.
    let query = diesel::sql_query(concat!(
        "SELECT j.enrollment_id, e.flow_id, e.flow_version, s.tz AS sender_tz, j.seq, j.n, \
         j.at, j.xid, j.entries \
         FROM (SELECT j.enrollment_id, j.seq, j.n, j.at, j.xid, j.entries \
               FROM enrollment_keys k JOIN journey_steps j ON j.enrollment_id = k.id \
               WHERE k.account_id = $1 AND k.contact_id = $2 \
               UNION ALL SELECT ",
        first_step_columns!(),
        " FROM enrollment_keys k \
               WHERE k.account_id = $1 AND k.contact_id = $2 AND k.first_xid IS NOT NULL) AS j \
         JOIN enrollments e ON e.id = j.enrollment_id \
         LEFT JOIN senders s ON s.account_id = e.account_id AND s.id = e.sender_id \
         WHERE ($3 IS NULL OR e.id = $3) \
         AND ($4 IS NULL OR (j.at, j.enrollment_id, j.seq + j.n - 1) > ($4, $5, $6)) \
         ORDER BY j.at, j.enrollment_id, j.seq LIMIT $7",
    ))
    .bind::<Text, _>(account_id)
    .bind::<Text, _>(contact_id)
    .bind::<Nullable<Text>, _>(only)
    .bind::<Nullable<BigInt>, _>(after.map(|k| k.at))
    .bind::<Text, _>(after.map_or("", |k| k.enrollment_id.as_str()))
    .bind::<BigInt, _>(after.map_or(0, |k| k.seq))
    .bind::<BigInt, _>(limit);
    let conn = db.conn().await?;
    let steps: Vec<ContactStep> = with_conn!(conn, c => query.load(c).await)?;
    let mut out = Vec::new();
    for s in steps {
        for row in s.step.expand()? {
            let key = (row.at, row.enrollment_id.as_str(), row.seq);
            if after.is_some_and(|k| key <= (k.at, k.enrollment_id.as_str(), k.seq)) {
                continue;
            }
            out.push(ContactJourneyRow {
                enrollment_id: row.enrollment_id,
                flow_id: s.flow_id.clone(),
                flow_version: s.flow_version,
                sender_tz: s.sender_tz.clone(),
                seq: row.seq,
                at: row.at,
                kind: row.kind,
                detail: row.detail,
            });
        }
    }
    out.truncate(limit.max(0) as usize);
    Ok(out)
}

/// A stored step of one of a contact's enrollments, with the enrollment's flow.
#[derive(QueryableByName)]
struct ContactStep {
    #[diesel(embed)]
    step: StoredStep,
    #[diesel(sql_type = diesel::sql_types::Text)]
    flow_id: String,
    #[diesel(sql_type = diesel::sql_types::Integer)]
    flow_version: i32,
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Text>)]
    sender_tz: Option<String>,
}
