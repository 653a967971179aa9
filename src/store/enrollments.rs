//! Enrollments and what an engine step writes: the enrollment row (state JSON, `status`,
//! `next_run_at`), journey entries, dispatches (the outbox, SPEC §6) and tasks.
//!
//! [`Writes`] is everything one or many [`crate::engine::step`] calls produce, turned into
//! rows by [`Writes::add_step`]; [`write_all!`](crate::write_all) stores them inside the
//! caller's transaction with one statement per table (and chunk): enrollment rows as one upsert
//! (`INSERT … ON CONFLICT (id) DO UPDATE`, so new and updated enrollments go the same way),
//! dispatches with `ON CONFLICT (idempotency_key) DO NOTHING` (created
//! exactly once even if a step is re-processed).
//!
//! Queries that must run inside one transaction together are macros over a connection
//! (`$c`), because diesel's generic bounds across both backends are unwieldy; each expands once
//! per backend inside [`with_conn!`](crate::with_conn).

use super::schema::{dispatches, enrollments, journey, tasks};
use crate::clock::to_millis;
use crate::engine::state::TaskPhase;
use crate::engine::{Effect, EnrollmentState};
use chrono::{DateTime, Utc};
use diesel::prelude::*;

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
    /// The engine's [`EnrollmentState`] as JSON.
    pub state: String,
    pub next_run_at: Option<i64>,
    pub journey_seq: i64,
    pub created_at: i64,
    pub updated_at: i64,
}

impl EnrollmentRow {
    /// The stored engine state.
    pub fn engine_state(&self) -> Result<EnrollmentState, super::StoreError> {
        serde_json::from_str(&self.state)
            .map_err(|e| super::StoreError::Corrupt(format!("enrollment {}: {e}", self.id)))
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = journey, treat_none_as_default_value = false)]
pub struct JourneyRow {
    pub enrollment_id: String,
    pub seq: i64,
    pub at: i64,
    pub kind: String,
    /// The engine's effect or journey entry as JSON.
    pub detail: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = dispatches, treat_none_as_default_value = false)]
pub struct DispatchRow {
    pub id: String,
    pub account_id: String,
    pub enrollment_id: String,
    pub run: i64,
    pub step: String,
    pub idempotency_key: String,
    pub channel: String,
    pub recipient: String,
    pub template: String,
    pub input: String,
    /// The step's `params.channel` (e.g. a subject line) as JSON, for the delivery side.
    pub channel_params: Option<String>,
    pub message_id: Option<String>,
    /// `pending`, `sent`, `failed`, or `held` (nothing will be sent; shown in the stream).
    pub status: String,
    pub lease_owner: Option<String>,
    pub lease_until: Option<i64>,
    pub attempts: i32,
    pub provider_message_id: Option<String>,
    pub failure: Option<String>,
    pub created_at: i64,
    pub due_at: i64,
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
    /// `completed` or `closed`.
    pub status: &'static str,
    pub outcome: Option<String>,
    pub at: i64,
}

/// The rows some engine steps produce, written together in one transaction.
#[derive(Debug, Default, Clone)]
pub struct Writes {
    /// Inserted, or updated when the id exists (state, status, next_run_at, journey_seq).
    pub enrollments: Vec<EnrollmentRow>,
    pub journey: Vec<JourneyRow>,
    pub dispatches: Vec<DispatchRow>,
    pub tasks: Vec<TaskRow>,
    pub closed_tasks: Vec<TaskClosure>,
    /// Events a task outcome raised (SPEC §5.2), by enrollment: the caller routes them to the
    /// contact's other enrollments.
    pub raised: Vec<(String, Vec<String>)>,
    /// The earliest `next_run_at` written, to wake the planner early.
    pub earliest_wake: Option<i64>,
}

/// The effect's name in the journey: the journey entry's `event`, or the effect's `kind`.
fn kind_and_detail(effect: &Effect) -> (String, String) {
    let value = match effect {
        Effect::Journey(entry) => serde_json::to_value(entry),
        other => serde_json::to_value(other),
    }
    .unwrap_or_default();
    let kind = value
        .get("event")
        .or_else(|| value.get("kind"))
        .and_then(|k| k.as_str())
        .unwrap_or("unknown")
        .to_string();
    (kind, value.to_string())
}

impl Writes {
    pub fn is_empty(&self) -> bool {
        self.enrollments.is_empty()
    }

    /// Adds what one engine step did to `row` (the row before the step): the updated row and a
    /// row for each effect. `outcome` is the task outcome the step applied, if it was one.
    pub fn add_step(
        &mut self,
        mut row: EnrollmentRow,
        before: &EnrollmentState,
        after: &EnrollmentState,
        effects: &[Effect],
        now: DateTime<Utc>,
        outcome: Option<&str>,
    ) {
        let now_ms = to_millis(now);
        let open_task = before
            .run
            .as_ref()
            .filter(|r| r.task == Some(TaskPhase::Open))
            .map(|r| r.id);
        for effect in effects {
            let (kind, detail) = kind_and_detail(effect);
            row.journey_seq += 1;
            self.journey.push(JourneyRow {
                enrollment_id: row.id.clone(),
                seq: row.journey_seq,
                at: now_ms,
                kind,
                detail,
            });
            match effect {
                Effect::Dispatch(d) => self.dispatches.push(DispatchRow {
                    id: super::new_id("dp"),
                    account_id: row.account_id.clone(),
                    enrollment_id: row.id.clone(),
                    run: d.run as i64,
                    step: d.step.clone(),
                    idempotency_key: d.idempotency_key.clone(),
                    channel: d.channel.to_string(),
                    recipient: d.recipient.clone(),
                    template: d.template.clone(),
                    input: d.input.to_string(),
                    channel_params: d
                        .channel_params
                        .as_ref()
                        .map(|p| serde_json::Value::Object(p.clone()).to_string()),
                    message_id: d.message_id.clone(),
                    status: "pending".into(),
                    lease_owner: None,
                    lease_until: None,
                    attempts: 0,
                    provider_message_id: None,
                    failure: None,
                    created_at: now_ms,
                    due_at: now_ms,
                }),
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
                        .run
                        .as_ref()
                        .or(after.run.as_ref())
                        .map(|r| r.step.clone())
                        .unwrap_or_default(),
                    // A held step may be planned again and sent later under the real key.
                    idempotency_key: format!("{idempotency_key}:held"),
                    channel: channel.to_string(),
                    recipient: String::new(),
                    template: String::new(),
                    input: "{}".into(),
                    channel_params: None,
                    message_id: None,
                    status: "held".into(),
                    lease_owner: None,
                    lease_until: None,
                    attempts: 0,
                    provider_message_id: None,
                    failure: Some(format!("{code}: {message}")),
                    created_at: now_ms,
                    due_at: now_ms,
                }),
                Effect::TaskCreated(t) => self.tasks.push(TaskRow {
                    id: super::new_id("tk"),
                    account_id: row.account_id.clone(),
                    enrollment_id: row.id.clone(),
                    run: t.run as i64,
                    kind: t.step_type.clone(),
                    step: t.step.clone(),
                    status: "open".into(),
                    outcome: None,
                    params: t.params.to_string(),
                    due_by: t.due_by.map(to_millis),
                    created_at: now_ms,
                    completed_at: None,
                }),
                Effect::RunClosed { run, .. } if Some(*run) == open_task => {
                    self.closed_tasks.push(TaskClosure {
                        enrollment_id: row.id.clone(),
                        run: *run as i64,
                        status: if outcome.is_some() {
                            "completed"
                        } else {
                            "closed"
                        },
                        outcome: outcome.map(str::to_string),
                        at: now_ms,
                    })
                }
                Effect::RaiseSignal { raises, .. } => {
                    self.raised.push((row.id.clone(), raises.clone()));
                }
                _ => {}
            }
        }
        row.status = after.status.as_str().to_string();
        row.next_run_at = after.next_run_at.map(to_millis);
        row.state = serde_json::to_string(after).expect("engine state serializes");
        row.updated_at = now_ms;
        if let Some(t) = row.next_run_at {
            self.earliest_wake = Some(self.earliest_wake.map_or(t, |e| e.min(t)));
        }
        self.enrollments.push(row);
    }
}

/// Stores a [`Writes`] with connection `$c` inside the caller's transaction; evaluates to
/// `Result<(), diesel::result::Error>`. Enrollment rows are upserted, so a new enrollment and
/// an updated one go through the same statement.
///
/// `pg:` hands the rows to [`crate::store::pg_batch`] (one array-bound statement per table).
/// `sqlite:` hands them to [`crate::store::sqlite_batch`] on the blocking pool: diesel cannot
/// send a multi-row insert to SQLite through the async wrapper.
#[macro_export]
macro_rules! write_all {
    (pg: $c:expr, $w:expr) => {
        $crate::store::pg_batch::write($c, $w).await
    };
    (sqlite: $c:expr, $w:expr) => {{
        let owned: $crate::store::enrollments::Writes = ($w).clone();
        $c.spawn_blocking(move |conn| $crate::store::sqlite_batch::write(conn, &owned))
            .await
    }};
}
