//! Tasks (`call`, `linkedin_connect`, `linkedin_message` steps): list them, complete them with
//! an outcome (SPEC §5.2, §6).
//!
//! Completing a task applies the interpreter's `TaskOutcome` to its enrollment (the run takes
//! the outcome's branch). The events the outcome raises (a connected call: `call_connected` and
//! `reply`) are stored as a signal and routed to the contact's *other* active or paused
//! enrollments, each in its own transaction, through the interpreter's signal input.

use super::enrollments::{apply_input, check_scope};
use super::{next_page_token, ServiceError, Violation};
use crate::api::AppState;
use crate::auth::Principal;
use crate::clock::to_millis;
use crate::code::Code;
use crate::engine::{Input, Signal};
use crate::store::enrollments::TaskRow;
use crate::store::schema::{enrollments, signals, tasks};
use crate::store::{self, StoreError};
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
    if task.status != "open" {
        return Err(ServiceError::FailedPrecondition(format!(
            "task `{task_id}` is {}; only an open task can be completed",
            task.status
        )));
    }
    let input = Input::TaskOutcome {
        run: task.run as u64,
        outcome: outcome.to_string(),
    };
    let (row, writes) =
        apply_input(state, &who.account_id, &task.enrollment_id, input, true).await?;
    let mut reached = 0;
    for (_, raises) in &writes.raised {
        reached += fan_out(
            state,
            &who.account_id,
            &row.contact_id,
            &row.id,
            &task,
            raises,
        )
        .await?;
    }
    let task = find(state, &who.account_id, task_id).await?;
    Ok((task, reached))
}

/// Stores the signal a task outcome raised and routes it to the contact's other enrollments.
async fn fan_out(
    state: &AppState,
    account_id: &str,
    contact_id: &str,
    from_enrollment: &str,
    task: &TaskRow,
    raises: &[String],
) -> Result<usize, ServiceError> {
    let now_ms = to_millis(state.clock.now());
    let signal_id = store::new_id("sg");
    let raises_json = serde_json::to_string(raises).expect("strings serialize");
    let conn = state.db.conn().await?;
    let others: Vec<String> = crate::with_conn!(conn, c => {
        diesel::insert_into(signals::table)
            .values((
                signals::id.eq(&signal_id),
                signals::account_id.eq(account_id),
                signals::contact_id.eq(contact_id),
                signals::source.eq("task_outcome"),
                // One signal per task completion, even if the call is retried.
                signals::provider_id.eq(Some(format!("task:{}", task.id))),
                signals::raises.eq(&raises_json),
                signals::payload.eq("{}"),
                signals::created_at.eq(now_ms),
            ))
            .execute(c)
            .await
            .map_err(StoreError::from)?;
        enrollments::table
            .filter(enrollments::account_id.eq(account_id))
            .filter(enrollments::contact_id.eq(contact_id))
            .filter(enrollments::id.ne(from_enrollment))
            .filter(enrollments::status.eq_any(["active", "paused"]))
            .order(enrollments::id.asc())
            .select(enrollments::id)
            .load(c)
            .await
    })
    .map_err(StoreError::from)?;
    let signal = Signal {
        id: signal_id,
        raises: raises.to_vec(),
        opt_out: None,
        payload: serde_json::json!({}),
    };
    for other in &others {
        apply_input(
            state,
            account_id,
            other,
            Input::Signal(signal.clone()),
            false,
        )
        .await?;
    }
    Ok(others.len())
}
