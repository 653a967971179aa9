//! The dispatch outbox (SPEC §6): claim due dispatches with a lease, acknowledge them.
//!
//! A claim sets `lease_owner` to a fresh token and `lease_until`; a dispatch whose lease has
//! passed without an ack is claimable again (at-least-once delivery). The ack must carry the
//! claim's token, so a slow worker whose lease was taken over cannot overwrite the new claim.

use super::fields::{self, Limit};
use super::ids::{DispatchId, EnrollmentId};
use super::{ServiceError, Violation, Violations};
use crate::clock::{from_millis, to_millis};
use crate::code::Code;
use crate::runtime::Core;
use crate::store::dispatches::{Acked, DispatchRow, Lease};
use crate::store::{self, DispatchStatus};
use chrono::{DateTime, Utc};

/// The lease when the caller asks for none.
pub const DEFAULT_LEASE_MS: i64 = 60_000;
/// The longest lease a claim may take.
pub const MAX_LEASE_MS: i64 = 3_600_000;
/// How many a claim takes when the caller gives no count.
pub const DEFAULT_CLAIM: i64 = 100;
/// The most one claim takes.
pub const MAX_CLAIM: i64 = 1_000;

/// A claimed dispatch as the API shows it: what to send, to whom, and the claim's lease.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dispatch {
    /// `dp_…`.
    pub id: DispatchId,
    /// The enrollment whose step made it.
    pub enrollment_id: EnrollmentId,
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
    /// When it became due.
    pub due_at: DateTime<Utc>,
    /// Claims so far, this one included.
    pub attempts: i32,
    /// The claim's token; the ack must carry it.
    pub lease_token: Option<String>,
    /// When the lease lapses.
    pub lease_until: Option<DateTime<Utc>>,
}

impl From<DispatchRow> for Dispatch {
    fn from(d: DispatchRow) -> Dispatch {
        Dispatch {
            id: d.id.into(),
            enrollment_id: d.enrollment_id.into(),
            run: d.run,
            step: d.step,
            idempotency_key: d.idempotency_key,
            channel: d.channel,
            recipient: d.recipient,
            template: d.template,
            input: d.input,
            channel_params: d.channel_params,
            message_id: d.message_id,
            due_at: from_millis(d.due_at),
            attempts: d.attempts,
            lease_token: d.lease_owner,
            lease_until: d.lease_until.map(from_millis),
        }
    }
}

/// Claims up to `max_count` due, unleased dispatches for `lease_ms`.
pub async fn claim(
    core: &Core,
    account_id: &str,
    lease_ms: i64,
    max_count: i32,
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
    let now_ms = to_millis(core.clock.now());
    let token = store::new_id("lease");
    let lease = Lease {
        owner: &token,
        until: now_ms + lease_ms,
    };
    let rows = store::dispatches::claim(&core.db, account_id, now_ms, max, lease).await?;
    Ok(rows.into_iter().map(Dispatch::from).collect())
}

/// Acknowledges a claimed dispatch: sent with the provider's message id, or failed.
pub async fn ack(
    core: &Core,
    account_id: &str,
    id: &DispatchId,
    lease_token: &str,
    provider_message_id: &str,
    failure: &str,
) -> Result<DispatchStatus, ServiceError> {
    let mut problems = Violations::default();
    problems.check(fields::parse_id("id", id.as_str()));
    problems.check(fields::check_text("lease_token", lease_token, Limit::Id));
    problems.check(fields::check_text(
        "provider_message_id",
        provider_message_id,
        Limit::ProviderId,
    ));
    problems.check(fields::check_text("failure", failure, Limit::Text));
    problems.finish()?;
    let (status, provider, failure) = match (provider_message_id.trim(), failure.trim()) {
        (p, "") if !p.is_empty() => (DispatchStatus::Sent, Some(p.to_string()), None),
        ("", f) if !f.is_empty() => (DispatchStatus::Failed, None, Some(f.to_string())),
        _ => {
            return Err(ServiceError::Invalid(vec![Violation::new(
                "provider_message_id",
                Code::BadSchema,
                "give exactly one of provider_message_id (it was sent) or failure (it was not)",
            )]))
        }
    };
    let acked = store::dispatches::ack(
        &core.db,
        account_id,
        id.as_str(),
        lease_token,
        status,
        provider.as_deref(),
        failure.as_deref(),
    )
    .await?;
    match acked {
        Acked::Done => Ok(status),
        Acked::Missing => Err(ServiceError::NotFound {
            what: "dispatch",
            id: id.to_string(),
        }),
        Acked::Refused(row) if row.status != DispatchStatus::Pending.as_str() => Err(
            ServiceError::FailedPrecondition(format!("dispatch `{id}` is already {}", row.status)),
        ),
        Acked::Refused(_) => Err(ServiceError::FailedPrecondition(format!(
            "the lease on dispatch `{id}` was lost (it expired and was claimed again); \
             the new claimer will deliver it"
        ))),
    }
}
