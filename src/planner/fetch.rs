//! The fetch worker (docs/flows.md, "fetch"): sends the attempts the fetch outbox holds, outside any
//! transaction, and applies each answer as an input afterwards.
//!
//! [`Fetcher::run_once`] is the unit of work tests call: lease due attempts (a lease that ran
//! out means a worker died mid-request: the same attempt is sent again, with the same
//! `Idempotency-Key`), send them side by side, then apply each answer in its own transaction
//! that also marks the attempt done. [`Fetcher::run`] is the loop inside `nudge serve`, with
//! the system or the manual clock alike: requests take real time either way.

use crate::clock::to_millis;
use crate::engine::{FetchAnswer, FetchRequest, Input};
use crate::flow::allow::AllowList;
use crate::runtime::{apply, outbound, Core, StepContext, Stop};
use crate::store::{self, fetches::FetchRow, StoreError, Writes};

/// Attempts leased per round.
const BATCH: i64 = 32;
/// How long past its own timeout an attempt stays leased before another worker may send it
/// again.
const LEASE_GRACE_MS: i64 = 30_000;
/// How often the loop looks for attempts. It polls rather than share the planner's wake-up,
/// which wakes one waiter.
const POLL: std::time::Duration = std::time::Duration::from_millis(200);

/// Sends fetch attempts and applies their answers.
#[derive(Clone)]
pub struct Fetcher {
    /// The runtime the answers are applied with.
    pub core: Core,
}

impl Fetcher {
    /// Leases, sends and answers the attempts due now; returns how many were answered.
    pub async fn run_once(&self) -> Result<usize, StoreError> {
        let now = self.core.clock.now();
        let rows = store::fetches::claim(
            &self.core.db,
            to_millis(now),
            to_millis(now) + 60_000 + LEASE_GRACE_MS,
            BATCH,
        )
        .await?;
        let mut sends = tokio::task::JoinSet::new();
        for row in rows {
            let core = self.core.clone();
            sends.spawn(async move {
                let request: FetchRequest = match serde_json::from_str(&row.request) {
                    Ok(r) => r,
                    Err(e) => {
                        return Err(StoreError::Corrupt(format!("fetch {}: {e}", row.id)));
                    }
                };
                let list = allow_list(&core, &row.account_id).await?;
                let answer = outbound::send(&request.call, &request.idempotency_key, &list).await;
                answer_attempt(&core, &row, &request, answer).await
            });
        }
        let mut answered = 0;
        while let Some(done) = sends.join_next().await {
            match done {
                Ok(Ok(())) => answered += 1,
                Ok(Err(e)) => tracing::error!(error = %e, "applying a fetch answer failed"),
                Err(e) => tracing::error!(error = %e, "a fetch task panicked"),
            }
        }
        Ok(answered)
    }

    /// The loop of `nudge serve`, until `stop` fires.
    pub async fn run(self, mut stop: Stop) {
        loop {
            if let Err(e) = self.run_once().await {
                tracing::error!(error = %e, "fetch round failed; retrying");
            }
            tokio::select! {
                () = tokio::time::sleep(POLL) => {}
                () = stop.stopped() => break,
            }
        }
    }
}

/// The account's allow list as `AccountService` stored it (empty: nothing is allowed).
async fn allow_list(core: &Core, account_id: &str) -> Result<AllowList, StoreError> {
    let account = store::accounts::find(&core.db, account_id).await?;
    match account.and_then(|a| a.fetch_allow) {
        Some(text) => serde_json::from_str(&text)
            .map_err(|e| StoreError::Corrupt(format!("account {account_id} fetch_allow: {e}"))),
        None => Ok(Vec::new()),
    }
}

/// Applies `answer` to the enrollment and marks the attempt done, in one transaction.
async fn answer_attempt(
    core: &Core,
    row: &FetchRow,
    request: &FetchRequest,
    answer: FetchAnswer,
) -> Result<(), StoreError> {
    let now = core.clock.now();
    let mut tx = core.db.begin().await?;
    let applied = async {
        let mut writes = Writes::default();
        if let Some(enrollment) = tx.lock_enrollment(None, &row.enrollment_id).await? {
            let rows = [enrollment];
            let context = StepContext::load(&mut tx, &core.flows, &rows, &core.quiet_hours).await?;
            let [enrollment] = rows;
            let input = Input::FetchAnswer {
                run: request.run,
                attempt: request.attempt,
                answer,
            };
            apply(&mut writes, &core.flows, &context, enrollment, input, now)?;
            tx.write_all(&writes).await?;
        }
        tx.fetch_done(&row.id).await?;
        Ok::<_, StoreError>(writes)
    }
    .await;
    let writes = tx.finish(applied).await?;
    core.announce(writes.committed()).await;
    Ok(())
}
