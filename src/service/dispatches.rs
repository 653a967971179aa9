//! The dispatch outbox (SPEC §6): claim due dispatches with a lease, acknowledge them.
//!
//! A claim sets `lease_owner` to a fresh token and `lease_until`; a dispatch whose lease has
//! passed without an ack is claimable again (at-least-once delivery). The ack must carry the
//! claim's token, so a slow worker whose lease was taken over cannot overwrite the new claim.

use super::{ServiceError, Violation};
use crate::api::AppState;
use crate::clock::to_millis;
use crate::code::Code;
use crate::store::enrollments::DispatchRow;
use crate::store::schema::dispatches;
use crate::store::{self, Conn, StoreError};
use diesel::prelude::*;
use diesel_async::{AsyncConnection, RunQueryDsl};

pub const DEFAULT_LEASE_MS: i64 = 60_000;
pub const MAX_LEASE_MS: i64 = 3_600_000;
pub const DEFAULT_CLAIM: i64 = 100;
pub const MAX_CLAIM: i64 = 1_000;

/// Claims up to `max_count` due, unleased dispatches for `lease_ms`.
pub async fn claim(
    state: &AppState,
    account_id: &str,
    lease_ms: i64,
    max_count: i32,
) -> Result<Vec<DispatchRow>, ServiceError> {
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
    let now_ms = to_millis(state.clock.now());
    let token = store::new_id("lease");
    let until = now_ms + lease_ms;
    macro_rules! due {
        () => {
            dispatches::table
                .filter(dispatches::account_id.eq(account_id))
                .filter(dispatches::status.eq("pending"))
                .filter(dispatches::due_at.le(now_ms))
                .filter(
                    dispatches::lease_until
                        .is_null()
                        .or(dispatches::lease_until.le(now_ms)),
                )
                .order((dispatches::due_at.asc(), dispatches::id.asc()))
                .limit(max)
                .select(dispatches::id)
        };
    }
    macro_rules! lease {
        ($c:expr, $ids:expr) => {{
            let ids: Vec<String> = $ids;
            diesel::update(dispatches::table.filter(dispatches::id.eq_any(&ids)))
                .set((
                    dispatches::lease_owner.eq(Some(&token)),
                    dispatches::lease_until.eq(Some(until)),
                    dispatches::attempts.eq(dispatches::attempts + 1),
                ))
                .execute($c)
                .await?;
            dispatches::table
                .filter(dispatches::id.eq_any(&ids))
                .order((dispatches::due_at.asc(), dispatches::id.asc()))
                .select(DispatchRow::as_select())
                .load($c)
                .await
        }};
    }
    let conn = state.db.conn().await?;
    let rows = match conn {
        Conn::Postgres(mut pooled) => {
            let c = &mut *pooled;
            c.transaction(async |c| {
                let ids = due!().for_update().skip_locked().load(c).await?;
                lease!(c, ids)
            })
            .await
        }
        Conn::Sqlite(mut pooled) => {
            let c = &mut *pooled;
            c.transaction(async |c| {
                let ids = due!().load(c).await?;
                lease!(c, ids)
            })
            .await
        }
    }
    .map_err(StoreError::from)?;
    Ok(rows)
}

/// Acknowledges a claimed dispatch: sent with the provider's message id, or failed.
pub async fn ack(
    state: &AppState,
    account_id: &str,
    id: &str,
    lease_token: &str,
    provider_message_id: &str,
    failure: &str,
) -> Result<&'static str, ServiceError> {
    let (status, provider, failure) = match (provider_message_id.trim(), failure.trim()) {
        (p, "") if !p.is_empty() => ("sent", Some(p.to_string()), None),
        ("", f) if !f.is_empty() => ("failed", None, Some(f.to_string())),
        _ => {
            return Err(ServiceError::Invalid(vec![Violation::new(
                "provider_message_id",
                Code::BadSchema,
                "give exactly one of provider_message_id (it was sent) or failure (it was not)",
            )]))
        }
    };
    let conn = state.db.conn().await?;
    let (updated, found): (usize, Option<DispatchRow>) = crate::with_conn!(conn, c => c
        .transaction(async |c| {
            let updated = diesel::update(
                dispatches::table
                    .filter(dispatches::account_id.eq(account_id))
                    .filter(dispatches::id.eq(id))
                    .filter(dispatches::status.eq("pending"))
                    .filter(dispatches::lease_owner.eq(lease_token)),
            )
            .set((
                dispatches::status.eq(status),
                dispatches::provider_message_id.eq(&provider),
                dispatches::failure.eq(&failure),
                dispatches::lease_until.eq(None::<i64>),
            ))
            .execute(c)
            .await?;
            let found = dispatches::table
                .filter(dispatches::account_id.eq(account_id))
                .filter(dispatches::id.eq(id))
                .select(DispatchRow::as_select())
                .first(c)
                .await
                .optional()?;
            Ok::<_, diesel::result::Error>((updated, found))
        })
        .await)
    .map_err(StoreError::from)?;
    match (updated, found) {
        (1, _) => Ok(status),
        (_, None) => Err(ServiceError::NotFound {
            what: "dispatch",
            id: id.to_string(),
        }),
        (_, Some(row)) if row.status != "pending" => Err(ServiceError::FailedPrecondition(
            format!("dispatch `{id}` is already {}", row.status),
        )),
        (_, Some(_)) => Err(ServiceError::FailedPrecondition(format!(
            "the lease on dispatch `{id}` was lost (it expired and was claimed again); \
             the new claimer will deliver it"
        ))),
    }
}
