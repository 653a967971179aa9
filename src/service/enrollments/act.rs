//! Inputs to one stored enrollment: an operator's (pause, resume, exit, move) and a task's
//! outcome, each applied in one transaction with the row locked.

use super::{check_scope, Enrollment};
use crate::auth::Principal;
use crate::code::Code;
use crate::engine::{Effect, Input, JourneyEntry};
use crate::runtime::{apply, Core, StepContext};
use crate::service::fields::{self, Limit};
use crate::service::ids::EnrollmentId;
use crate::service::{ServiceError, Violation, Violations};
use crate::store::signals::SignalRow;
use crate::store::{EnrollmentRow, Tx, Writes};
use chrono::{DateTime, Utc};

/// Why an applied input was refused: the interpreter's `rejected` journey entry, if any.
fn rejection(effects: &[Effect]) -> Option<String> {
    effects.iter().find_map(|e| match e {
        Effect::Journey(JourneyEntry::Rejected { input, reason }) => {
            Some(format!("{}: {reason}", refused_action(input)))
        }
        _ => None,
    })
}

/// What the caller tried, as the start of a refusal: `task_outcome` is "cannot complete the
/// task", not "cannot task outcome".
fn refused_action(input: &str) -> String {
    match input {
        "start" => "cannot start the enrollment".into(),
        "pause" => "cannot pause".into(),
        "resume" => "cannot resume".into(),
        "exit" => "cannot exit".into(),
        "move_to" => "cannot move".into(),
        "task_outcome" => "cannot complete the task".into(),
        other => format!("cannot apply `{other}`"),
    }
}

/// Applies `input` to one stored enrollment in a transaction (row locked on PostgreSQL) and
/// returns the new row and what was written. With `refuse_rejected`, an input the interpreter
/// rejects is an error and nothing is written.
pub async fn apply_input(
    core: &Core,
    account_id: &str,
    enrollment_id: &EnrollmentId,
    input: Input,
    refuse_rejected: bool,
) -> Result<(EnrollmentRow, Writes), ServiceError> {
    let (row, writes, _) = apply_input_storing(
        core,
        account_id,
        enrollment_id,
        input,
        refuse_rejected,
        |_, _| Vec::new(),
    )
    .await?;
    Ok((row, writes))
}

/// [`apply_input`], also storing in the same transaction the signals `signals` makes of the new
/// row and the writes (a task outcome's raised events, so a crash cannot lose them); returns
/// them too.
pub async fn apply_input_storing(
    core: &Core,
    account_id: &str,
    enrollment_id: &EnrollmentId,
    input: Input,
    refuse_rejected: bool,
    signals: impl Fn(&EnrollmentRow, &Writes) -> Vec<SignalRow>,
) -> Result<(EnrollmentRow, Writes, Vec<SignalRow>), ServiceError> {
    let now = core.clock.now();
    let (writes, stored) = crate::transaction!(core.db, |tx| {
        let step = Step {
            account_id,
            enrollment_id,
            input: input.clone(),
            refuse_rejected,
            now,
        };
        step.run(core, tx, &signals).await
    })?;
    core.announce(writes.committed()).await;
    let row = writes
        .enrollments
        .last()
        .cloned()
        .expect("apply writes the enrollment");
    Ok((row, writes, stored))
}

/// One input to one enrollment, as [`apply_input_storing`] runs it.
struct Step<'a> {
    account_id: &'a str,
    enrollment_id: &'a EnrollmentId,
    input: Input,
    refuse_rejected: bool,
    now: DateTime<Utc>,
}

impl Step<'_> {
    async fn run(
        self,
        core: &Core,
        tx: &mut Tx,
        signals: &impl Fn(&EnrollmentRow, &Writes) -> Vec<SignalRow>,
    ) -> Result<(Writes, Vec<SignalRow>), ServiceError> {
        let row = tx
            .lock_enrollment(Some(self.account_id), self.enrollment_id.as_str())
            .await?
            .ok_or_else(|| ServiceError::NotFound {
                what: "enrollment",
                id: self.enrollment_id.to_string(),
            })?;
        let rows = [row];
        let context = StepContext::load(tx, &core.flows, &rows, &core.quiet_hours).await?;
        let [row] = rows;
        let mut writes = Writes::default();
        let effects = apply(
            &mut writes,
            &core.flows,
            &context,
            row,
            self.input,
            self.now,
        )?;
        if self.refuse_rejected {
            if let Some(reason) = rejection(&effects) {
                return Err(ServiceError::FailedPrecondition(reason));
            }
        }
        tx.write_all(&writes).await?;
        let after = writes
            .enrollments
            .last()
            .expect("apply writes the enrollment");
        let stored = signals(after, &writes);
        tx.insert_signals(&stored).await?;
        Ok((writes, stored))
    }
}

/// Pause, Resume, Exit, MoveTo: an operator's input.
pub async fn act(
    core: &Core,
    who: &Principal,
    enrollment_id: &EnrollmentId,
    input: Input,
) -> Result<Enrollment, ServiceError> {
    let mut problems = Violations::default();
    problems.check(fields::parse_id("id", enrollment_id.as_str()));
    match &input {
        Input::MoveTo { step } if step.trim().is_empty() => problems.push(Violation::new(
            "step",
            Code::BadSchema,
            "name the step to move to (a key of the flow's `steps`)",
        )),
        Input::MoveTo { step } => {
            problems.check(fields::check_text("step", step, Limit::Name));
        }
        Input::Exit { reason } => {
            problems.check(fields::check_text("reason", reason, Limit::Text));
        }
        _ => {}
    }
    problems.finish()?;
    check_scope(who, enrollment_id)?;
    let (row, _) = apply_input(core, &who.account_id, enrollment_id, input, true).await?;
    Enrollment::from_row(row)
}
