//! Tasks (`call`, `linkedin_connect`, `linkedin_message` steps): list them, complete them with
//! an outcome (SPEC §5.2, §6).
//!
//! Completing a task applies the interpreter's `TaskOutcome` to its enrollment (the run takes
//! the outcome's branch). The events the outcome raises (a connected call: `call_connected` and
//! `reply`) are stored as a signal in the same transaction, then routed to the contact's
//! *other* active or paused enrollments, each in its own transaction, through the interpreter's
//! signal input (`signals::route_stored`, with a delivery row per enrollment).

use super::enrollments::{apply_input_storing, check_scope};
use super::signals::route_stored;
use super::{next_page_token, ServiceError, Violation};
use crate::api::AppState;
use crate::auth::Principal;
use crate::clock::to_millis;
use crate::code::Code;
use crate::engine::Input;
use crate::store::enrollments::{EnrollmentRow, TaskRow, Writes};
use crate::store::schema::tasks;
use crate::store::signals::{self, SignalRow};
use crate::store::{self, StoreError};
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

const DEFAULT_PAGE_SIZE: i64 = 50;
const MAX_PAGE_SIZE: i64 = 500;

/// A page of tasks ordered by id; the token is the last id.
pub async fn list(
    state: &AppState,
    account_id: &str,
    status: &str,
    enrollment_id: &str,
    size: i32,
    token: &str,
) -> Result<(Vec<TaskRow>, String), ServiceError> {
    let status = if status.is_empty() { "open" } else { status };
    if !["open", "completed", "closed", "all"].contains(&status) {
        return Err(ServiceError::Invalid(vec![Violation::new(
            "status",
            Code::BadSchema,
            format!("`{status}` is not a task status; use open, completed, closed or all"),
        )]));
    }
    let size = match i64::from(size) {
        n if n < 0 => {
            return Err(ServiceError::Invalid(vec![Violation::new(
                "page.page_size",
                Code::BadSchema,
                "the page size must not be negative (0 means the default, 50)",
            )]))
        }
        0 => DEFAULT_PAGE_SIZE,
        n => n.min(MAX_PAGE_SIZE),
    };
    let conn = state.db.conn().await?;
    let mut rows: Vec<TaskRow> = crate::with_conn!(conn, c => {
        let mut q = tasks::table
            .filter(tasks::account_id.eq(account_id))
            .order(tasks::id.asc())
            .limit(size + 1)
            .select(TaskRow::as_select())
            .into_boxed();
        if status != "all" {
            q = q.filter(tasks::status.eq(status.to_string()));
        }
        if !enrollment_id.is_empty() {
            q = q.filter(tasks::enrollment_id.eq(enrollment_id.to_string()));
        }
        if !token.is_empty() {
            q = q.filter(tasks::id.gt(token.to_string()));
        }
        q.load(c).await
    })
    .map_err(StoreError::from)?;
    let next = next_page_token(&mut rows, size, |r| r.id.clone());
    Ok((rows, next))
}

async fn find(state: &AppState, account_id: &str, id: &str) -> Result<TaskRow, ServiceError> {
    let conn = state.db.conn().await?;
    crate::with_conn!(conn, c => tasks::table
        .filter(tasks::account_id.eq(account_id))
        .filter(tasks::id.eq(id))
        .select(TaskRow::as_select())
        .first(c)
        .await
        .optional())
    .map_err(StoreError::from)?
    .ok_or_else(|| ServiceError::NotFound {
        what: "task",
        id: id.to_string(),
    })
}

/// Completes an open task; returns the task after it and how many other enrollments the
/// raised events reached.
///
/// The outcome and the signal it raises are stored in one transaction, then the signal is
/// routed (one transaction per enrollment). If the process stops in between, completing the
/// task again with the same outcome finishes the routing instead of being refused.
pub async fn complete(
    state: &AppState,
    who: &Principal,
    task_id: &str,
    outcome: &str,
) -> Result<(TaskRow, usize), ServiceError> {
    if outcome.trim().is_empty() {
        return Err(ServiceError::Invalid(vec![Violation::new(
            "outcome",
            Code::BadSchema,
            "give the task's outcome, e.g. `connected`, `no_answer`, `accepted`, `replied`",
        )]));
    }
    let task = find(state, &who.account_id, task_id).await?;
    check_scope(who, &task.enrollment_id)?;
    let provider_id = format!("task:{}", task.id);
    if task.status != "open" {
        let unrouted =
            match signals::by_provider_id(&state.db, &who.account_id, &provider_id).await? {
                Some(signal) if signal.routed_at.is_none() => Some(signal),
                _ => None,
            };
        return match unrouted {
            Some(signal) if task.outcome.as_deref() == Some(outcome) => {
                let reached =
                    route_stored(state, &signal, &task.enrollment_id, state.clock.now()).await?;
                Ok((task, reached))
            }
            _ => Err(ServiceError::FailedPrecondition(format!(
                "task `{task_id}` is {}; only an open task can be completed",
                task.status
            ))),
        };
    }
    let (row, stored) = record_outcome(state, &who.account_id, &task, outcome).await?;
    let mut reached = 0;
    for signal in &stored {
        reached += route_stored(state, signal, &row.id, state.clock.now()).await?;
    }
    let task = find(state, &who.account_id, task_id).await?;
    Ok((task, reached))
}

/// The first half of [`complete`]: applies the outcome to the task's enrollment and stores the
/// signal it raises, in one transaction; returns the enrollment after it and the signal, not
/// routed yet. Public so a test can stop here, as a crash would.
pub async fn record_outcome(
    state: &AppState,
    account_id: &str,
    task: &TaskRow,
    outcome: &str,
) -> Result<(EnrollmentRow, Vec<SignalRow>), ServiceError> {
    let input = Input::TaskOutcome {
        run: task.run as u64,
        outcome: outcome.to_string(),
    };
    let now = state.clock.now();
    let provider_id = format!("task:{}", task.id);
    let raised = |row: &EnrollmentRow, writes: &Writes| -> Vec<SignalRow> {
        writes
            .raised
            .iter()
            .take(1) // one outcome raises one signal
            .map(|(_, raises)| task_signal(row, raises, &provider_id, task, outcome, now))
            .collect()
    };
    let (row, _, stored) =
        apply_input_storing(state, account_id, &task.enrollment_id, input, true, raised).await?;
    Ok((row, stored))
}

/// The signal a task outcome raises: addressed to the task's contact, kind from the events
/// (`call_connected`, `connection_accepted`, or a reply on the task's channel).
fn task_signal(
    row: &EnrollmentRow,
    raises: &[String],
    provider_id: &str,
    task: &TaskRow,
    outcome: &str,
    now: DateTime<Utc>,
) -> SignalRow {
    let has = |event: &str| raises.iter().any(|r| r == event);
    let (kind, channel) = if has("call_connected") {
        ("call_connected", None)
    } else if has("connection_accepted") {
        ("connection_accepted", None)
    } else {
        let channel = raises
            .iter()
            .find_map(|r| r.strip_prefix("reply:"))
            .map(str::to_string);
        ("reply", channel)
    };
    SignalRow {
        id: store::new_id("sg"),
        account_id: row.account_id.clone(),
        contact_id: row.contact_id.clone(),
        source: "task".into(),
        provider_id: Some(provider_id.to_string()),
        raises: serde_json::to_string(raises).expect("strings serialize"),
        payload: serde_json::json!({"task": task.id, "step": task.step, "outcome": outcome})
            .to_string(),
        created_at: to_millis(now),
        kind: kind.into(),
        channel,
        contact_ids: serde_json::to_string(&[&row.contact_id]).expect("strings serialize"),
        routed_at: None,
    }
}
