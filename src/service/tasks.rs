//! Tasks (`call`, `linkedin_connect`, `linkedin_message` steps): list them, complete them with
//! an outcome (docs/signals.md, "Kinds of signal and the events they raise"; docs/service.md, "Delivery").
//!
//! Completing a task applies the interpreter's `TaskOutcome` to its enrollment (the run takes
//! the outcome's branch). The events the outcome raises (a connected call: `call_connected` and
//! `reply`) are stored as a signal in the same transaction, then routed to the contact's
//! *other* active or paused enrollments, each in its own transaction, through the interpreter's
//! signal input (`signals::route_stored`, with a delivery row per enrollment).

use super::accounts::ReplyUnsubscribe;
use super::enrollments::{apply_input_storing, check_scope};
use super::fields::{self, Limit};
use super::ids::{EnrollmentId, TaskId};
use super::signals::words::{self, Words};
use super::signals::{route_stored, Source};
use super::{next_page_token, ServiceError, Violation, Violations};
use crate::auth::Principal;
use crate::clock::{from_millis, to_millis};
use crate::code::Code;
use crate::engine::Input;
use crate::inbound::intent::{Intent, ReplyIntent};
use crate::inbound::SignalKind;
use crate::runtime::Core;
use crate::store::contacts::ContactRow;
use crate::store::signals::SignalRow;
use crate::store::tasks::TaskRow;
use crate::store::{self, EnrollmentRow, StoreError, TaskStatus, Writes};
use chrono::{DateTime, Utc};

const DEFAULT_PAGE_SIZE: i64 = 50;
const MAX_PAGE_SIZE: i64 = 500;

/// A task as the API shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Task {
    /// `tk_…`.
    pub id: TaskId,
    /// The enrollment whose step opened it.
    pub enrollment_id: EnrollmentId,
    /// The run of that step.
    pub run: i64,
    /// The step's type: `call`, `linkedin_connect`, `linkedin_message`.
    pub kind: String,
    /// The step's name.
    pub step: String,
    /// Open, completed by an outcome, or closed otherwise.
    pub status: TaskStatus,
    /// The outcome that completed it.
    pub outcome: Option<String>,
    /// The step's params as JSON.
    pub params: String,
    /// When it times out, if it has a timeout.
    pub due_by: Option<DateTime<Utc>>,
    /// When it was opened.
    pub created_at: DateTime<Utc>,
    /// When it was completed or closed.
    pub completed_at: Option<DateTime<Utc>>,
    /// Who to call or write to, as the contact is now.
    pub contact: TaskContact,
}

/// The contact of a task's enrollment, read when the task is: a dialer needs no second call.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TaskContact {
    /// The caller's contact id.
    pub id: String,
    /// The contact's `attributes.name`, when it is text (contacts have no name of their own).
    pub name: Option<String>,
    pub email: Option<String>,
    /// E.164.
    pub phone: Option<String>,
}

impl TaskContact {
    fn from_row(row: ContactRow) -> TaskContact {
        let name = serde_json::from_str::<serde_json::Value>(&row.attributes)
            .ok()
            .and_then(|a| a.get("name")?.as_str().map(str::to_string))
            .filter(|n| !n.trim().is_empty());
        TaskContact {
            id: row.id,
            name,
            email: row.email,
            phone: row.phone,
        }
    }
}

impl Task {
    fn from_row(row: TaskRow) -> Result<Task, StoreError> {
        let status = TaskStatus::parse(&row.status).ok_or_else(|| {
            StoreError::Corrupt(format!("task {}: status `{}`", row.id, row.status))
        })?;
        Ok(Task {
            id: row.id.into(),
            enrollment_id: row.enrollment_id.into(),
            run: row.run,
            kind: row.kind,
            step: row.step,
            status,
            outcome: row.outcome,
            params: row.params,
            due_by: row.due_by.map(from_millis),
            created_at: from_millis(row.created_at),
            completed_at: row.completed_at.map(from_millis),
            contact: TaskContact::default(),
        })
    }
}

/// Fills in each task's contact, one query for the lot.
async fn with_contacts(
    core: &Core,
    account_id: &str,
    mut tasks: Vec<Task>,
) -> Result<Vec<Task>, ServiceError> {
    let ids: Vec<&str> = tasks.iter().map(|t| t.enrollment_id.as_str()).collect();
    let contacts = store::tasks::contacts_of(&core.db, account_id, &ids).await?;
    for task in &mut tasks {
        if let Some((_, row)) = contacts
            .iter()
            .find(|(enrollment, _)| task.enrollment_id == enrollment.as_str())
        {
            task.contact = TaskContact::from_row(row.clone());
        }
    }
    Ok(tasks)
}

/// A page of tasks ordered by id; the token is the last id.
pub async fn list(
    core: &Core,
    account_id: &str,
    status: &str,
    enrollment_id: &str,
    size: i32,
    token: &str,
) -> Result<(Vec<Task>, String), ServiceError> {
    let mut problems = Violations::default();
    problems.check(fields::check_text("status", status, Limit::Name));
    problems.check(fields::check_text(
        "enrollment_id",
        enrollment_id,
        Limit::Id,
    ));
    problems.check(fields::check_text(
        "page.page_token",
        token,
        Limit::PageToken,
    ));
    problems.finish()?;
    // Empty: the open ones; `all`: any.
    let status = match status {
        "" => Some(TaskStatus::Open),
        "all" => None,
        text => Some(TaskStatus::parse(text).ok_or_else(|| {
            ServiceError::Invalid(vec![Violation::new(
                "status",
                Code::BadSchema,
                format!(
                    "{} is not a task status; use open, completed, closed or all",
                    crate::quote::quote(text)
                ),
            )])
        })?),
    };
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
    let filter = store::tasks::ListFilter {
        status,
        enrollment_id: Some(enrollment_id).filter(|e| !e.is_empty()),
        after_id: Some(token).filter(|t| !t.is_empty()),
    };
    let mut rows = store::tasks::list(&core.db, account_id, &filter, size + 1).await?;
    let next = next_page_token(&mut rows, size, |r| r.id.clone());
    let tasks = rows
        .into_iter()
        .map(Task::from_row)
        .collect::<Result<_, _>>()?;
    Ok((with_contacts(core, account_id, tasks).await?, next))
}

async fn find(core: &Core, account_id: &str, id: &TaskId) -> Result<Task, ServiceError> {
    let row = store::tasks::get(&core.db, account_id, id.as_str())
        .await?
        .ok_or_else(|| ServiceError::NotFound {
            what: "task",
            id: id.to_string(),
        })?;
    let task = Task::from_row(row)?;
    let mut one = with_contacts(core, account_id, vec![task]).await?;
    Ok(one.remove(0))
}

/// Completes an open task; returns the task after it and how many other enrollments the
/// raised events reached.
///
/// The outcome and the signal it raises are stored in one transaction, then the signal is
/// routed (one transaction per enrollment). If the process stops in between, completing the
/// task again with the same outcome finishes the routing instead of being refused.
///
/// `text` is a LinkedIn reply's words (with `replied`): read into an intent like any reply's,
/// so the signal raises `intent:<name>` too; an unsubscribe in words opts the contact out of
/// LinkedIn unless the account lets the flow decide.
pub async fn complete(
    core: &Core,
    who: &Principal,
    task_id: &TaskId,
    outcome: &str,
    text: &str,
) -> Result<(Task, usize), ServiceError> {
    let mut problems = Violations::default();
    problems.check(fields::parse_id("task_id", task_id.as_str()));
    if outcome.trim().is_empty() {
        problems.push(Violation::new(
            "outcome",
            Code::BadSchema,
            "give the task's outcome, e.g. `connected`, `no_answer`, `accepted`, `replied`",
        ));
    }
    problems.check(fields::check_text("outcome", outcome, Limit::Name));
    problems.check(fields::check_text("text", text, Limit::Words));
    problems.finish()?;
    let task = find(core, &who.account_id, task_id).await?;
    check_scope(who, &task.enrollment_id)?;
    let provider_id = format!("task:{}", task.id);
    if task.status != TaskStatus::Open {
        let unrouted =
            match store::signals::by_provider_id(&core.db, &who.account_id, &provider_id).await? {
                Some(signal) if signal.routed_at.is_none() => Some(signal),
                _ => None,
            };
        return match unrouted {
            Some(signal) if task.outcome.as_deref() == Some(outcome) => {
                let reached =
                    route_stored(core, &signal, task.enrollment_id.as_str(), core.clock.now())
                        .await?;
                Ok((task, reached))
            }
            _ => Err(ServiceError::FailedPrecondition(format!(
                "task `{task_id}` is {}; only an open task can be completed",
                task.status
            ))),
        };
    }
    let reading = match task.kind.as_str() {
        "linkedin_message" => {
            let words = Words::text(text);
            words::read(
                core,
                &who.account_id,
                &task.contact.id,
                &words,
                core.clock.now(),
            )
            .await?
        }
        _ if !text.trim().is_empty() => {
            return Err(ServiceError::Invalid(vec![Violation::new(
                "text",
                Code::BadSchema,
                format!(
                    "only a `linkedin_message` task's reply has words; task `{task_id}` is a \
                     `{}` task: leave `text` empty",
                    task.kind
                ),
            )]))
        }
        _ => None,
    };
    let (row, stored) = record_outcome_read(core, &who.account_id, &task, outcome, reading).await?;
    let mut reached = 0;
    for signal in &stored {
        reached += route_stored(core, signal, &row.id, core.clock.now()).await?;
    }
    let task = find(core, &who.account_id, task_id).await?;
    Ok((task, reached))
}

/// The first half of [`complete`]: applies the outcome to the task's enrollment and stores the
/// signal it raises, in one transaction; returns the enrollment after it and the signal, not
/// routed yet. Public so a test can stop here, as a crash would.
pub async fn record_outcome(
    core: &Core,
    account_id: &str,
    task: &Task,
    outcome: &str,
) -> Result<(EnrollmentRow, Vec<SignalRow>), ServiceError> {
    record_outcome_read(core, account_id, task, outcome, None).await
}

/// [`record_outcome`] with what a reply's words said, stored with its signal.
async fn record_outcome_read(
    core: &Core,
    account_id: &str,
    task: &Task,
    outcome: &str,
    reading: Option<ReplyIntent>,
) -> Result<(EnrollmentRow, Vec<SignalRow>), ServiceError> {
    let policy = match &reading {
        Some(r) if r.intent == Intent::Unsubscribe => {
            super::accounts::reply_unsubscribe(core, account_id).await?
        }
        _ => Default::default(),
    };
    let input = Input::TaskOutcome {
        run: task.run as u64,
        outcome: outcome.to_string(),
    };
    let now = core.clock.now();
    let provider_id = format!("task:{}", task.id);
    let raised = |row: &EnrollmentRow, writes: &Writes| -> Vec<SignalRow> {
        writes
            .raised
            .iter()
            .take(1) // one outcome raises one signal
            .map(|(_, raises)| {
                let said = Said {
                    reading: reading.as_ref(),
                    policy,
                };
                task_signal(row, raises, &provider_id, task, outcome, said, now)
            })
            .collect()
    };
    let (row, _, stored) =
        apply_input_storing(core, account_id, &task.enrollment_id, input, true, raised).await?;
    Ok((row, stored))
}

/// The signal a task outcome raises: addressed to the task's contact, kind from the events
/// (`call_connected`, `connection_accepted`, or a reply on the task's channel).
/// What a reply's words said, and what the account makes of an unsubscribe in words.
#[derive(Clone, Copy)]
struct Said<'a> {
    reading: Option<&'a ReplyIntent>,
    policy: ReplyUnsubscribe,
}

/// The signal a task outcome raises: addressed to the task's contact, kind from the events
/// (`call_connected`, `connection_accepted`, or a reply on the task's channel). A reply's
/// reading is stored in its payload and raises `intent:<name>` first; an unsubscribe in words
/// is an opt-out of the channel (raising nothing) unless the account lets the flow decide.
fn task_signal(
    row: &EnrollmentRow,
    raises: &[String],
    provider_id: &str,
    task: &Task,
    outcome: &str,
    said: Said<'_>,
    now: DateTime<Utc>,
) -> SignalRow {
    let has = |event: &str| raises.iter().any(|r| r == event);
    let mut raises = raises.to_vec();
    let mut payload =
        serde_json::json!({"task": task.id.as_str(), "step": task.step, "outcome": outcome});
    let (kind, channel) = if has("call_connected") {
        ("call_connected", None)
    } else if has("connection_accepted") {
        ("connection_accepted", None)
    } else {
        let channel = raises
            .iter()
            .find_map(|r| r.strip_prefix("reply:"))
            .map(str::to_string);
        let mut kind = "reply";
        if let (Some(reading), Some(ch)) = (said.reading, &channel) {
            payload[super::signals::INTENT_KEY] =
                serde_json::to_value(reading).expect("an intent serializes");
            let reply = SignalKind::Reply {
                channel: ch.clone(),
            };
            match reply.settle(Some(reading), said.policy) {
                SignalKind::OptOut { .. } => {
                    kind = "opt_out";
                    raises.clear();
                }
                _ => raises.insert(0, reading.intent.event().to_string()),
            }
        }
        (kind, channel)
    };
    SignalRow {
        id: store::new_id("sg"),
        account_id: row.account_id.clone(),
        contact_id: row.contact_id.clone(),
        source: Source::Task.as_str().into(),
        provider_id: Some(provider_id.to_string()),
        raises: serde_json::to_string(&raises).expect("strings serialize"),
        payload: payload.to_string(),
        created_at: to_millis(now),
        kind: kind.into(),
        channel,
        contact_ids: serde_json::to_string(&[&row.contact_id]).expect("strings serialize"),
        routed_at: None,
    }
}
