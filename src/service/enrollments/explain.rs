//! `EnrollmentService.Explain` (docs/operations.md): the stored enrollment, its flow version, the clock,
//! and the pure [`crate::engine::explain()`].

use super::{read, Enrollment};
use crate::auth::Principal;
use crate::engine::Explanation;
use crate::runtime::Core;
use crate::service::ids::EnrollmentId;
use crate::service::ServiceError;
use crate::store;

/// Why the caller's enrollment `id` is where it is, now. NOT_FOUND for an unknown id or one of
/// another account (the same answer, so ids of other accounts are not revealed).
pub async fn explain(
    core: &Core,
    who: &Principal,
    id: &EnrollmentId,
) -> Result<(Enrollment, Explanation), ServiceError> {
    let enrollment = read::get(core, who, id).await?;
    let flow = flow_of(core, &who.account_id, &enrollment).await?;
    let now = core.clock.now();
    // The quiet-hours policy execution uses (the one place it comes from: `ctx_for`): the
    // account's setting, else the server's.
    let account = store::accounts::find(&core.db, &who.account_id).await?;
    let account_quiet = account.and_then(|a| a.quiet_hours);
    let quiet =
        crate::runtime::ctx_for(None, account_quiet.as_deref(), &core.quiet_hours).quiet_hours;
    let stopped = if flow.has_experiments() {
        Some(
            store::variant_states::stopped_of_flow(&core.db, &who.account_id, &enrollment.flow_id)
                .await?,
        )
    } else {
        None
    };
    let answer = crate::engine::explain_in(&enrollment.state, &flow, now, &quiet, stopped.as_ref());
    Ok((enrollment, answer))
}

/// The parsed flow version an enrollment runs (from the process's cache when it has it).
pub async fn flow_of(
    core: &Core,
    account_id: &str,
    e: &Enrollment,
) -> Result<std::sync::Arc<crate::flow::Flow>, ServiceError> {
    let key = (e.flow_id.clone(), e.flow_version);
    if !core.flows.contains(&key) {
        let stored = store::flows::get(&core.db, account_id, &e.flow_id, e.flow_version)
            .await?
            .ok_or_else(|| {
                ServiceError::Internal(format!(
                    "flow {} version {} of enrollment {} is not stored",
                    e.flow_id, e.flow_version, e.id
                ))
            })?;
        return core
            .flows
            .get_or_parse(&key, Some(&stored.version.definition))
            .map_err(ServiceError::Internal);
    }
    core.flows
        .get_or_parse(&key, None)
        .map_err(ServiceError::Internal)
}
