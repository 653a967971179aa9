//! The dispatch outbox (docs/service.md, "Delivery"): claim due dispatches with a lease, acknowledge them.
//!
//! A claim sets `lease_owner` to a fresh token and `lease_until`; a dispatch whose lease has
//! passed without an ack is claimable again (at-least-once delivery). The ack must carry the
//! claim's token, so a slow worker whose lease was taken over cannot overwrite the new claim.
//!
//! An ack is one of [`Outcome`]: sent, failed, or a transient failure to retry later (due
//! again after a backoff, at most [`MAX_ATTEMPTS`] attempts, then failed). Each ack appends a
//! `dispatch_acked` entry to the enrollment's journey, in the same transaction. A repeat of the
//! same ack (same lease token, same outcome) answers what the first did and writes nothing.

use super::fields::{self, Limit};
use super::ids::{DispatchId, EnrollmentId};
use super::{next_page_token, ServiceError, Violation, Violations};
use crate::clock::{from_millis, to_millis};
use crate::code::Code;
use crate::engine::{AckOutcome, Effect, JourneyEntry};
use crate::runtime::Core;
use crate::store::dispatches::{AckUpdate, DispatchRow, Lease};
use crate::store::journey::JourneyStep;
use crate::store::{self, DispatchStatus, StoreError, Tx};
use crate::timing::Channel;
use chrono::{DateTime, Utc};
use std::collections::{HashMap, HashSet};

/// The lease when the caller asks for none.
pub const DEFAULT_LEASE_MS: i64 = 60_000;
/// The longest lease a claim may take.
pub const MAX_LEASE_MS: i64 = 3_600_000;
/// How many a claim takes when the caller gives no count.
pub const DEFAULT_CLAIM: i64 = 100;
/// The most one claim takes.
pub const MAX_CLAIM: i64 = 1_000;
/// The most attempts (claims) a dispatch gets: a retry asked for after this many is failed.
pub const MAX_ATTEMPTS: i32 = 5;
/// The backoff before the first retry when the ack names no time; it doubles per attempt…
pub const RETRY_BACKOFF_MS: i64 = 60_000;
/// …up to this.
pub const MAX_RETRY_BACKOFF_MS: i64 = 3_600_000;
/// The furthest ahead a retry ack may put a dispatch.
pub const MAX_RETRY_DELAY_MS: i64 = 86_400_000;
/// The shortest `retry_after_ms`.
pub const MIN_RETRY_DELAY_MS: i64 = 1_000;

/// A dispatch as the API shows it: what to send, to whom, where it is, and the claim's lease.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dispatch {
    /// `dp_…`.
    pub id: DispatchId,
    /// The enrollment whose step made it.
    pub enrollment_id: EnrollmentId,
    /// Pending, sent, failed or held.
    pub status: DispatchStatus,
    /// Held: why (`ZONE_UNKNOWN`, `NO_OPENING`, …).
    pub hold_code: Option<String>,
    /// Held: what to fix; failed: why; pending after a retry: the last transient failure.
    pub failure: Option<String>,
    /// Sent: the provider's message id.
    pub provider_message_id: Option<String>,
    /// When the step made it.
    pub created_at: DateTime<Utc>,
    /// The run of that step.
    pub run: i64,
    /// The step's name.
    pub step: String,
    /// The same for every attempt: the provider should deduplicate on it.
    pub idempotency_key: String,
    /// `email`, `sms`.
    pub channel: String,
    /// The address or number.
    pub recipient: String,
    /// The template to render.
    pub template: String,
    /// The values to render it with, as JSON.
    pub input: String,
    /// The step's `params.channel` (e.g. a subject line) as JSON.
    pub channel_params: Option<String>,
    /// Email: the `Message-ID` to send with (replies are matched on it).
    pub message_id: Option<String>,
    /// When it is due: when its step ran, or when a retry ack put it (held: when it was held).
    pub due_at: DateTime<Utc>,
    /// Claims so far, this one included.
    pub attempts: i32,
    /// The claim's token; the ack must carry it. Shown only to the claimer.
    pub lease_token: Option<String>,
    /// When the lease lapses.
    pub lease_until: Option<DateTime<Utc>>,
    /// Email: the `List-Unsubscribe` header value, `<{public_url}/unsubscribe/{token}>` (RFC
    /// 8058), filled by [`super::unsubscribe::attach`].
    pub list_unsubscribe: Option<String>,
    /// Email: `List-Unsubscribe=One-Click`, the `List-Unsubscribe-Post` header value.
    pub list_unsubscribe_post: Option<String>,
    /// The step's variant it sends, when the step has variants.
    pub variant: Option<String>,
}

impl Dispatch {
    fn from_row(d: DispatchRow) -> Result<Dispatch, StoreError> {
        let status = DispatchStatus::parse(&d.status).ok_or_else(|| {
            StoreError::Corrupt(format!("dispatch {}: status `{}`", d.id, d.status))
        })?;
        Ok(Dispatch {
            id: d.id.into(),
            enrollment_id: d.enrollment_id.into(),
            status,
            hold_code: d.hold_code,
            variant: d.variant,
            failure: d.failure,
            provider_message_id: d.provider_message_id,
            created_at: from_millis(d.created_at),
            run: d.run,
            step: d.step,
            idempotency_key: d.idempotency_key,
            channel: d.channel.into_owned(),
            recipient: d.recipient,
            template: d.template,
            input: d.input,
            channel_params: d.channel_params,
            message_id: d.message_id,
            due_at: from_millis(d.due_at),
            attempts: d.attempts,
            lease_token: d.lease_owner,
            lease_until: d.lease_until.map(from_millis),
            list_unsubscribe: None,
            list_unsubscribe_post: None,
        })
    }

    /// The dispatch for someone other than its claimer: without the lease token.
    fn shown(row: DispatchRow) -> Result<Dispatch, StoreError> {
        let mut d = Dispatch::from_row(row)?;
        d.lease_token = None;
        Ok(d)
    }
}

/// Claims up to `max_count` due, unleased dispatches on `channels` (empty: any) for `lease_ms`.
pub async fn claim(
    core: &Core,
    account_id: &str,
    lease_ms: i64,
    max_count: i32,
    channels: &[String],
) -> Result<Vec<Dispatch>, ServiceError> {
    let lease_ms = match lease_ms {
        0 => DEFAULT_LEASE_MS,
        n if (1_000..=MAX_LEASE_MS).contains(&n) => n,
        n => {
            return Err(ServiceError::Invalid(vec![Violation::new(
                "lease_ms",
                Code::BadSchema,
                format!("a lease of {n} ms is out of range; use 1000 to 3600000 (0 means 60000)"),
            )]))
        }
    };
    let max = match i64::from(max_count) {
        0 => DEFAULT_CLAIM,
        n if (1..=MAX_CLAIM).contains(&n) => n,
        n => {
            return Err(ServiceError::Invalid(vec![Violation::new(
                "max_count",
                Code::BadSchema,
                format!("{n} is out of range; claim 1 to 1000 at a time (0 means 100)"),
            )]))
        }
    };
    let channels = dispatch_channels(channels)?;
    let now_ms = to_millis(core.clock.now());
    let token = store::new_id("lease");
    let lease = Lease {
        owner: &token,
        until: now_ms + lease_ms,
    };
    let rows =
        store::dispatches::claim(&core.db, account_id, now_ms, max, &channels, lease).await?;
    Ok(rows
        .into_iter()
        .map(Dispatch::from_row)
        .collect::<Result<_, _>>()?)
}

/// The channels a claim names: only those a dispatch can be on (`email`, `sms`), each once.
fn dispatch_channels(names: &[String]) -> Result<Vec<Channel>, ServiceError> {
    let mut channels = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let field = format!("channels[{i}]");
        let channel = super::fields::parse_channel(&field, name)
            .map_err(|v| ServiceError::Invalid(vec![v]))?;
        if !matches!(channel, Channel::Email | Channel::Sms) {
            return Err(ServiceError::Invalid(vec![Violation::new(
                field,
                Code::BadSchema,
                format!("no dispatch is on `{channel}`: those steps are tasks (ListTasks); claim `email` or `sms`"),
            )]));
        }
        if !channels.contains(&channel) {
            channels.push(channel);
        }
    }
    Ok(channels)
}

/// When a retried dispatch is due again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetryAt {
    /// nudge's backoff: [`RETRY_BACKOFF_MS`], doubling per attempt, at most
    /// [`MAX_RETRY_BACKOFF_MS`].
    Backoff,
    /// This many milliseconds from now.
    After(i64),
    /// This instant (a past one is now).
    At(DateTime<Utc>),
}

/// What the delivery side says about a claimed dispatch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The provider took it, with this message id.
    Sent { provider_message_id: String },
    /// It will not be sent, because of this.
    Failed { failure: String },
    /// A transient failure: due again later, unless this was the last attempt.
    Retry { failure: String, at: RetryAt },
}

impl Outcome {
    /// The outcome an `AckDispatch` request describes, or what is wrong with it.
    pub fn parse(
        provider_message_id: &str,
        failure: &str,
        retry: bool,
        at: Option<RetryAt>,
    ) -> Result<Outcome, ServiceError> {
        let invalid = |field: &str, message: String| {
            Err(ServiceError::Invalid(vec![Violation::new(
                field,
                Code::BadSchema,
                message,
            )]))
        };
        match at {
            Some(RetryAt::After(ms))
                if !(MIN_RETRY_DELAY_MS..=MAX_RETRY_DELAY_MS).contains(&ms) =>
            {
                return invalid(
                    "retry_after_ms",
                    format!("a retry after {ms} ms is out of range; use {MIN_RETRY_DELAY_MS} to {MAX_RETRY_DELAY_MS}, or leave it out for nudge's backoff"),
                );
            }
            _ => {}
        }
        let mut problems = Violations::default();
        problems.check(fields::check_text(
            "provider_message_id",
            provider_message_id,
            Limit::ProviderId,
        ));
        problems.check(fields::check_text("failure", failure, Limit::Text));
        problems.finish()?;
        let retry = retry || at.is_some();
        match (provider_message_id.trim(), failure.trim()) {
            (p, "") if !p.is_empty() && !retry => Ok(Outcome::Sent {
                provider_message_id: p.to_string(),
            }),
            (p, _) if !p.is_empty() && retry => invalid(
                "retry",
                "a retry is for a dispatch that was not sent: give `failure` (why) instead of provider_message_id".into(),
            ),
            ("", f) if !f.is_empty() && retry => Ok(Outcome::Retry {
                failure: f.to_string(),
                at: at.unwrap_or(RetryAt::Backoff),
            }),
            ("", f) if !f.is_empty() => Ok(Outcome::Failed {
                failure: f.to_string(),
            }),
            _ => invalid(
                "provider_message_id",
                "give exactly one of provider_message_id (it was sent) or failure (it was not; add `retry` when it may work later)".into(),
            ),
        }
    }
}

/// What an ack answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Acked {
    /// `sent`, `failed`, or `pending` (a retry, due again at `due_at`).
    pub status: DispatchStatus,
    /// When it is due.
    pub due_at: DateTime<Utc>,
    /// The attempts (claims) so far.
    pub attempts: i32,
}

/// Acknowledges a claimed dispatch with `outcome`, and records the attempt in the journey.
pub async fn ack(
    core: &Core,
    account_id: &str,
    id: &DispatchId,
    lease_token: &str,
    outcome: &Outcome,
) -> Result<Acked, ServiceError> {
    let item = AckItem {
        id: id.clone(),
        lease_token: lease_token.to_string(),
        outcome: outcome.clone(),
    };
    let mut answers = ack_batch(core, account_id, std::slice::from_ref(&item)).await?;
    answers.pop().expect("one answer per item")
}

/// The most acks one `BatchAckDispatch` carries: a claim's worth.
pub const MAX_ACK_BATCH: usize = MAX_CLAIM as usize;

/// One ack of [`ack_batch`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AckItem {
    pub id: DispatchId,
    pub lease_token: String,
    pub outcome: Outcome,
}

/// `BatchAckDispatch`: the acks of `items` in one transaction, each answered (in order) as
/// [`ack`] answers it alone, so one refused ack (a lost lease, an unknown id) refuses only
/// itself. The rows are locked and written set-wise: the enrollments, then the dispatches, in
/// id order (as the signal router locks them), one update of the dispatches, and the journey
/// entries as the batch's last statement, so the account's Watch head is taken once per batch,
/// not once per ack (one transaction per ack held acks to about 100/s per account).
pub async fn ack_batch(
    core: &Core,
    account_id: &str,
    items: &[AckItem],
) -> Result<Vec<Result<Acked, ServiceError>>, ServiceError> {
    if items.is_empty() || items.len() > MAX_ACK_BATCH {
        return Err(ServiceError::Invalid(vec![Violation::new(
            "items",
            Code::BadSchema,
            format!(
                "{} acks in one call; send 1 to {MAX_ACK_BATCH} per BatchAckDispatch",
                items.len()
            ),
        )]));
    }
    let mut answers: Vec<Option<Result<Acked, ServiceError>>> = Vec::with_capacity(items.len());
    let mut seen = std::collections::HashSet::new();
    for item in items {
        let mut problems = Violations::default();
        problems.check(fields::parse_id("id", item.id.as_str()));
        problems.check(fields::check_text(
            "lease_token",
            &item.lease_token,
            Limit::Id,
        ));
        answers.push(match problems.finish() {
            Err(e) => Some(Err(e)),
            Ok(()) if !seen.insert(item.id.as_str()) => {
                Some(Err(ServiceError::Invalid(vec![Violation::new(
                    "id",
                    Code::BadSchema,
                    format!(
                        "dispatch `{}` is acked twice in this call; ack it once",
                        item.id
                    ),
                )])))
            }
            Ok(()) => None,
        });
    }
    if answers.iter().any(Option::is_none) {
        let now = core.clock.now();
        let mut tx = core.db.begin().await?;
        let result = ack_batch_in(core, &mut tx, account_id, items, &mut answers, now).await;
        let woke = tx.finish(result).await?;
        core.announce(woke).await;
    }
    Ok(answers
        .into_iter()
        .map(|a| a.expect("every ack answered"))
        .collect())
}

/// A provider's report that a dispatch it took was not delivered (a Twilio status callback):
/// the dispatch, found by the id `AckDispatch` recorded, is marked failed and the failure is
/// written on its enrollment's journey. Returns the dispatch's id, or `None` when no dispatch
/// carries that id. Reported again (a provider's retry), it changes nothing.
pub async fn delivery_failed(
    core: &Core,
    account_id: &str,
    provider_message_id: &str,
    provider: &str,
    status: &str,
    error_code: Option<u32>,
    error: Option<&str>,
) -> Result<Option<String>, ServiceError> {
    let Some(found) =
        store::dispatches::by_provider_message_id(&core.db, account_id, provider_message_id)
            .await?
    else {
        return Ok(None);
    };
    let failure = match (error_code, error) {
        (Some(code), Some(e)) => format!("{provider}: {status} ({code}: {e})"),
        (Some(code), None) => format!("{provider}: {status} ({code})"),
        (None, Some(e)) => format!("{provider}: {status} ({e})"),
        (None, None) => format!("{provider}: {status}"),
    };
    let now_ms = to_millis(core.clock.now());
    let report = FailureReport {
        provider,
        status,
        error_code,
        error,
        failure: &failure,
    };
    let woke = crate::transaction!(core.db, |tx| {
        delivery_failed_in(tx, account_id, &found.id, &report, now_ms).await
    })?;
    core.announce(woke).await;
    Ok(Some(found.id))
}

/// A provider's delivery failure, as [`delivery_failed`] writes it.
struct FailureReport<'a> {
    provider: &'a str,
    status: &'a str,
    error_code: Option<u32>,
    error: Option<&'a str>,
    /// The dispatch's `failure` text.
    failure: &'a str,
}

/// [`delivery_failed`] inside its transaction: the enrollment, then the dispatch, locked in
/// the order a step takes them; nothing written when the same failure is recorded already.
async fn delivery_failed_in(
    tx: &mut Tx,
    account_id: &str,
    dispatch_id: &str,
    report: &FailureReport<'_>,
    now_ms: i64,
) -> Result<store::Committed, StoreError> {
    let ids = [dispatch_id];
    let mut enrollments = tx.lock_enrollments_of_dispatches(account_id, &ids).await?;
    let Some(row) = tx.lock_dispatches(account_id, &ids).await?.pop() else {
        return Ok(store::Committed::default());
    };
    if row.status == DispatchStatus::Failed.as_str()
        && row.failure.as_deref() == Some(report.failure)
    {
        return Ok(store::Committed::default());
    }
    let update = AckUpdate {
        status: DispatchStatus::Failed,
        provider_message_id: row.provider_message_id.as_deref(),
        failure: Some(report.failure),
        due_at: row.due_at,
    };
    tx.ack_dispatches(&[(row.id.as_str(), update)]).await?;
    let mut writes = store::Writes::default();
    if let Some(mut enrollment) = enrollments.pop() {
        enrollment.journey_seq += 1;
        let mut step = JourneyStep::new(
            &enrollment.id,
            &enrollment.account_id,
            enrollment.journey_seq,
            now_ms,
        );
        step.push_effect(&Effect::Journey(JourneyEntry::DeliveryFailed {
            run: row.run as u64,
            step: row.step.clone(),
            dispatch: row.id.clone(),
            provider: report.provider.to_string(),
            status: report.status.to_string(),
            error_code: report.error_code,
            error: report.error.map(str::to_string),
        }));
        writes.enrollments.push(enrollment);
        writes.journey.push(step);
    }
    tx.write_all(&writes).await?;
    Ok(writes.committed())
}

/// What an ack does to a dispatch it may apply to.
enum Decision<'a> {
    /// A repeat of the ack that ended the lease: the same answer, nothing written.
    Repeat(Acked),
    /// The ack applies: the dispatch's new fields and the journey entry's.
    Apply {
        update: AckUpdate<'a>,
        kind: AckOutcome,
        retry_at: Option<i64>,
        gave_up: bool,
    },
}

/// How `outcome`, carrying `lease_token`, applies to the locked dispatch `row` at `now_ms`.
fn decide<'a>(
    row: &DispatchRow,
    id: &DispatchId,
    lease_token: &str,
    outcome: &'a Outcome,
    now_ms: i64,
) -> Result<Decision<'a>, ServiceError> {
    let status = DispatchStatus::parse(&row.status).ok_or_else(|| {
        StoreError::Corrupt(format!("dispatch {}: status `{}`", row.id, row.status))
    })?;
    if row.lease_owner.as_deref() != Some(lease_token) {
        return Err(match status {
            DispatchStatus::Pending => ServiceError::FailedPrecondition(format!(
                "the lease on dispatch `{id}` was lost (it expired and was claimed again); \
                 the new claimer will deliver it"
            )),
            other => {
                ServiceError::FailedPrecondition(format!("dispatch `{id}` is already {other}"))
            }
        });
    }
    // Our lease. Still held: the ack applies. Ended: this is a repeat, or another outcome.
    let leased = status == DispatchStatus::Pending && row.lease_until.is_some();
    if !leased {
        let same = match (status, outcome) {
            (
                DispatchStatus::Sent,
                Outcome::Sent {
                    provider_message_id,
                },
            ) => row.provider_message_id.as_deref() == Some(provider_message_id.as_str()),
            (
                DispatchStatus::Failed,
                Outcome::Failed { failure } | Outcome::Retry { failure, .. },
            )
            | (DispatchStatus::Pending, Outcome::Retry { failure, .. }) => {
                row.failure.as_deref() == Some(failure.as_str())
            }
            _ => false,
        };
        return if same {
            Ok(Decision::Repeat(Acked {
                status,
                due_at: from_millis(row.due_at),
                attempts: row.attempts,
            }))
        } else if status == DispatchStatus::Pending {
            Err(ServiceError::FailedPrecondition(format!(
                "dispatch `{id}` was acked for a retry at {}; its next claim carries a new lease \
                 to ack",
                from_millis(row.due_at).to_rfc3339()
            )))
        } else {
            Err(ServiceError::FailedPrecondition(format!(
                "dispatch `{id}` is already {status} with another outcome; an ack cannot change it"
            )))
        };
    }
    let ended = |status, failure: &'a str, gave_up| Decision::Apply {
        update: AckUpdate {
            status,
            provider_message_id: None,
            failure: Some(failure),
            due_at: row.due_at,
        },
        kind: AckOutcome::Failed,
        retry_at: None,
        gave_up,
    };
    Ok(match outcome {
        Outcome::Sent {
            provider_message_id,
        } => Decision::Apply {
            update: AckUpdate {
                status: DispatchStatus::Sent,
                provider_message_id: Some(provider_message_id),
                failure: None,
                due_at: row.due_at,
            },
            kind: AckOutcome::Sent,
            retry_at: None,
            gave_up: false,
        },
        Outcome::Failed { failure } => ended(DispatchStatus::Failed, failure, false),
        Outcome::Retry { failure, .. } if row.attempts >= MAX_ATTEMPTS => {
            ended(DispatchStatus::Failed, failure, true)
        }
        Outcome::Retry { failure, at } => {
            let due = retry_due(*at, now_ms, row.attempts);
            Decision::Apply {
                update: AckUpdate {
                    status: DispatchStatus::Pending,
                    provider_message_id: None,
                    failure: Some(failure),
                    due_at: due,
                },
                kind: AckOutcome::Retry,
                retry_at: Some(due),
                gave_up: false,
            }
        }
    })
}

/// The batch inside its transaction: fills the unanswered `answers`, and says what committing
/// means to the planners (waiters woken by slots given back).
async fn ack_batch_in(
    core: &Core,
    tx: &mut Tx,
    account_id: &str,
    items: &[AckItem],
    answers: &mut [Option<Result<Acked, ServiceError>>],
    now: DateTime<Utc>,
) -> Result<store::Committed, StoreError> {
    let now_ms = to_millis(now);
    let ids: Vec<&str> = items
        .iter()
        .zip(answers.iter())
        .filter(|(_, a)| a.is_none())
        .map(|(item, _)| item.id.as_str())
        .collect();
    // The enrollments first, then the dispatches: the order a step transition takes them in.
    let mut enrollments: HashMap<String, store::EnrollmentRow> = tx
        .lock_enrollments_of_dispatches(account_id, &ids)
        .await?
        .into_iter()
        .map(|e| (e.id.clone(), e))
        .collect();
    let rows: HashMap<String, DispatchRow> = tx
        .lock_dispatches(account_id, &ids)
        .await?
        .into_iter()
        .map(|d| (d.id.clone(), d))
        .collect();
    let mut updates: Vec<(&str, AckUpdate<'_>)> = Vec::new();
    // The journey step of each acked enrollment, in the order of its first ack.
    let mut steps: Vec<JourneyStep> = Vec::new();
    let mut step_of: HashMap<&str, usize> = HashMap::new();
    let mut freed: Vec<(&str, Channel)> = Vec::new();
    for (item, answer) in items.iter().zip(answers.iter_mut()) {
        if answer.is_some() {
            continue;
        }
        let Some(row) = rows.get(item.id.as_str()) else {
            *answer = Some(Err(ServiceError::NotFound {
                what: "dispatch",
                id: item.id.to_string(),
            }));
            continue;
        };
        let (update, kind, retry_at, gave_up) =
            match decide(row, &item.id, &item.lease_token, &item.outcome, now_ms) {
                Err(e) => {
                    *answer = Some(Err(e));
                    continue;
                }
                Ok(Decision::Repeat(acked)) => {
                    *answer = Some(Ok(acked));
                    continue;
                }
                Ok(Decision::Apply {
                    update,
                    kind,
                    retry_at,
                    gave_up,
                }) => (update, kind, retry_at, gave_up),
            };
        if kind == AckOutcome::Failed {
            // docs/capacity.md: a dispatch that was not sent gives its capacity slot back. Without the
            // sender's lock: a reserver that read the row meanwhile only saw less capacity.
            if tx.release_slot(&row.idempotency_key).await? > 0 {
                if let Ok(channel) = row.channel.parse::<Channel>() {
                    freed.push((row.enrollment_id.as_str(), channel));
                }
            }
        }
        if let Some(enrollment) = enrollments.get_mut(&row.enrollment_id) {
            let entry = JourneyEntry::DispatchAcked {
                run: row.run as u64,
                step: row.step.clone(),
                dispatch: row.id.clone(),
                attempt: row.attempts.max(0) as u32,
                outcome: kind,
                provider_message_id: update.provider_message_id.map(str::to_string),
                failure: update.failure.map(str::to_string),
                retry_at: retry_at.map(from_millis),
                gave_up,
            };
            enrollment.journey_seq += 1;
            let at = *step_of
                .entry(row.enrollment_id.as_str())
                .or_insert_with(|| {
                    steps.push(JourneyStep::new(
                        &enrollment.id,
                        &enrollment.account_id,
                        enrollment.journey_seq,
                        now_ms,
                    ));
                    steps.len() - 1
                });
            steps[at].push_effect(&Effect::Journey(entry));
        }
        *answer = Some(Ok(Acked {
            status: update.status,
            due_at: from_millis(update.due_at),
            attempts: row.attempts,
        }));
        updates.push((row.id.as_str(), update));
    }
    tx.ack_dispatches(&updates).await?;
    let mut writes = store::Writes::default();
    record_sends(core, tx, &mut writes, &enrollments, &rows, &updates, now_ms).await?;
    // Each acked enrollment's row again with its journey advanced, and its entries: one write,
    // whose last statement numbers the entries in the account's Watch order.
    for step in &steps {
        writes
            .enrollments
            .push(enrollments[&step.enrollment_id].clone());
    }
    writes.journey = steps;
    tx.write_all(&writes).await?;
    // After the acks' own entries: a waiter may be an enrollment acked here, read again.
    let mut woke = store::Committed::default();
    for (enrollment_id, channel) in freed {
        if let Some(e) = enrollments.get(enrollment_id) {
            let (account, sender) = (e.account_id.clone(), e.sender_id.clone());
            let more = wake_first_waiter(core, tx, &account, &sender, channel, now).await?;
            woke.absorb(more);
        }
    }
    Ok(woke)
}

/// What acks add to the flows' statistics: `sent` and `failed` on each message's step; and for
/// enrollments in flows with step experiments, the exposures (a variant's message sent) and the
/// end of the earlier ones' conversion windows (the enrollment's next outreach message sent).
/// All of it goes into `writes`, stored in the ack's statement batch: no statement of its own.
/// The flows are read from the cache (a version this process has not parsed yet is read in
/// `tx`, once).
async fn record_sends(
    core: &Core,
    tx: &mut Tx,
    writes: &mut store::Writes,
    enrollments: &HashMap<String, store::EnrollmentRow>,
    rows: &HashMap<String, DispatchRow>,
    updates: &[(&str, AckUpdate<'_>)],
    now_ms: i64,
) -> Result<(), StoreError> {
    use crate::engine::funnel::Metric;
    let mut sent: Vec<(&DispatchRow, &store::EnrollmentRow)> = Vec::new();
    for (id, update) in updates {
        let (Some(row), status) = (rows.get(*id), update.status) else {
            continue;
        };
        let Some(enrollment) = enrollments.get(&row.enrollment_id) else {
            continue;
        };
        let metric = match status {
            DispatchStatus::Sent => Metric::Sent,
            DispatchStatus::Failed => Metric::Failed,
            _ => continue,
        };
        writes.count(enrollment, &row.step, metric, "", now_ms);
        // An approval link goes to the sender, not the contact: it is no outreach message.
        if metric == Metric::Sent && row.channel != "approval" {
            sent.push((row, enrollment));
        }
    }
    if sent.is_empty() {
        return Ok(());
    }
    let involved: Vec<&store::EnrollmentRow> = sent.iter().map(|(_, e)| *e).collect();
    let flows = crate::runtime::StepContext::flows_of(tx, &core.flows, &involved).await?;
    let mut closed: HashSet<&str> = HashSet::new();
    for (row, enrollment) in &sent {
        let Some(flow) = flows.get(&(enrollment.flow_id.clone(), enrollment.flow_version)) else {
            continue;
        };
        if !flow.has_experiments() {
            continue;
        }
        if closed.insert(enrollment.id.as_str()) {
            writes.closings.push(store::flow_stats::Closing {
                enrollment_id: enrollment.id.clone(),
                at: now_ms,
            });
        }
        let (Some(variant), Some((experiment, shared, settings))) =
            (row.variant.as_ref(), flow.experiment_of(&row.step))
        else {
            continue;
        };
        writes.exposures.push(store::flow_stats::ExposureRow {
            enrollment_id: enrollment.id.clone(),
            experiment,
            account_id: enrollment.account_id.clone(),
            flow_id: enrollment.flow_id.clone(),
            flow_version: enrollment.flow_version,
            step: row.step.clone(),
            variant: variant.clone(),
            goal: settings.goal.as_str().to_string(),
            shared,
            exposed_at: now_ms,
            closed_at: None,
            converted_at: None,
        });
    }
    writes
        .closings
        .sort_by(|a, b| a.enrollment_id.cmp(&b.enrollment_id));
    Ok(())
}

/// docs/capacity.md (priority): a slot given back goes to the step first in line for it, now, rather
/// than when that step's computed deferral comes. The waiter is planned again in this
/// transaction under the sender's lock, like a planner batch of one: it takes the slot if it
/// fits every cap and window, else it is deferred again to the instant computed anew.
async fn wake_first_waiter(
    core: &Core,
    tx: &mut Tx,
    account_id: &str,
    sender_id: &str,
    channel: Channel,
    now: DateTime<Utc>,
) -> Result<store::Committed, StoreError> {
    let Some(waiter) = tx
        .first_cap_waiter(account_id, sender_id, channel, to_millis(now))
        .await?
    else {
        return Ok(store::Committed::default());
    };
    let rows = [waiter];
    let mut context =
        crate::runtime::StepContext::load(tx, &core.flows, &rows, &core.quiet_hours).await?;
    context.lock_books(tx, to_millis(now)).await?;
    let [waiter] = rows;
    let mut writes = store::Writes::default();
    crate::runtime::apply(
        &mut writes,
        &core.flows,
        &context,
        waiter,
        crate::engine::Input::SlotFreed { channel },
        now,
    )?;
    tx.write_all(&writes).await?;
    Ok(writes.committed())
}

/// When a retry of attempt `attempts` is due (epoch ms).
fn retry_due(at: RetryAt, now_ms: i64, attempts: i32) -> i64 {
    match at {
        RetryAt::Backoff => {
            let doublings = attempts.saturating_sub(1).clamp(0, 30) as u32;
            let backoff = RETRY_BACKOFF_MS
                .saturating_mul(1_i64 << doublings)
                .min(MAX_RETRY_BACKOFF_MS);
            now_ms + backoff
        }
        RetryAt::After(ms) => now_ms + ms,
        RetryAt::At(instant) => to_millis(instant).clamp(now_ms, now_ms + MAX_RETRY_DELAY_MS),
    }
}

/// The account's dispatch `id`, whatever its status.
pub async fn get(core: &Core, account_id: &str, id: &DispatchId) -> Result<Dispatch, ServiceError> {
    let row = store::dispatches::get(&core.db, account_id, id.as_str())
        .await?
        .ok_or_else(|| ServiceError::NotFound {
            what: "dispatch",
            id: id.to_string(),
        })?;
    Ok(Dispatch::shown(row)?)
}

/// A page of the account's dispatches by id, filtered by enrollment and status (empty: any);
/// the token is the last id.
pub async fn list(
    core: &Core,
    account_id: &str,
    enrollment_id: &str,
    status: &str,
    size: i32,
    token: &str,
) -> Result<(Vec<Dispatch>, String), ServiceError> {
    let status = match status {
        "" => None,
        text => Some(DispatchStatus::parse(text).ok_or_else(|| {
            ServiceError::Invalid(vec![Violation::new(
                "status",
                Code::BadSchema,
                "not a dispatch status; use pending, sent, failed or held (empty means any)",
            )])
        })?),
    };
    let size = super::enrollments::page_size(size)?;
    if token.len() > super::enrollments::MAX_PAGE_TOKEN_LEN {
        return Err(ServiceError::Invalid(vec![Violation::new(
            "page.page_token",
            Code::BadSchema,
            format!(
                "the page token is {} bytes long; pass the previous page's next_page_token back unchanged",
                token.len()
            ),
        )]));
    }
    let filter = store::dispatches::ListFilter {
        enrollment_id: Some(enrollment_id).filter(|e| !e.is_empty()),
        status,
        after_id: Some(token).filter(|t| !t.is_empty()),
    };
    let mut rows = store::dispatches::list(&core.db, account_id, &filter, size + 1).await?;
    let next = next_page_token(&mut rows, size, |r| r.id.clone());
    let list = rows
        .into_iter()
        .map(Dispatch::shown)
        .collect::<Result<_, _>>()?;
    Ok((list, next))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_its_cap() {
        let due = |attempts| retry_due(RetryAt::Backoff, 0, attempts);
        assert_eq!(due(1), RETRY_BACKOFF_MS);
        assert_eq!(due(2), 2 * RETRY_BACKOFF_MS);
        assert_eq!(due(3), 4 * RETRY_BACKOFF_MS);
        assert_eq!(due(40), MAX_RETRY_BACKOFF_MS);
        assert_eq!(retry_due(RetryAt::After(5_000), 100, 1), 5_100);
        assert_eq!(
            retry_due(RetryAt::At(from_millis(50)), 100, 1),
            100,
            "a past instant is now"
        );
    }

    #[test]
    fn an_ack_is_exactly_one_outcome() {
        assert!(matches!(
            Outcome::parse("p-1", "", false, None),
            Ok(Outcome::Sent { .. })
        ));
        assert!(matches!(
            Outcome::parse("", "full", false, None),
            Ok(Outcome::Failed { .. })
        ));
        assert!(matches!(
            Outcome::parse("", "421", false, Some(RetryAt::After(2_000))),
            Ok(Outcome::Retry {
                at: RetryAt::After(2_000),
                ..
            })
        ));
        assert!(matches!(
            Outcome::parse("", "421", true, None),
            Ok(Outcome::Retry {
                at: RetryAt::Backoff,
                ..
            })
        ));
        for (p, f, retry, at) in [
            ("", "", false, None),
            ("p", "f", false, None),
            ("p", "", true, None),
            ("", "421", false, Some(RetryAt::After(10))),
        ] {
            assert!(
                Outcome::parse(p, f, retry, at).is_err(),
                "{p:?} {f:?} {retry} {at:?}"
            );
        }
    }
}
