//! The SQL of `variant_states`: where each variant of a step experiment stands (`stopped`,
//! `winner`; no row or `running` otherwise) and the smallest always-valid p-value seen against
//! the control. Decisions are written once — the first writer wins, a replica that decided the
//! same a moment later writes nothing — and carry the figures that made them.

use super::capacity::SenderKey;
use super::schema::variant_states;
use super::{Conn, Db, StoreError, Tx};
use crate::engine::variant::Stopped;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Double, Text};
use diesel_async::RunQueryDsl;
use std::collections::HashMap;

/// A `variant_states` row.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = variant_states)]
pub struct VariantStateRow {
    pub account_id: String,
    pub flow_id: String,
    pub experiment: String,
    pub variant: String,
    /// `running`, `stopped` or `winner`.
    pub state: String,
    pub min_p_value: Option<f64>,
    pub reason: Option<String>,
    pub decided_by: Option<String>,
    pub decided_at: Option<i64>,
}

/// Every row of a flow.
pub async fn of_flow(
    db: &Db,
    account_id: &str,
    flow_id: &str,
) -> Result<Vec<VariantStateRow>, StoreError> {
    let conn = db.conn().await?;
    Ok(with_conn!(conn, c => variant_states::table
        .filter(variant_states::account_id.eq(account_id))
        .filter(variant_states::flow_id.eq(flow_id))
        .select(VariantStateRow::as_select())
        .load(c)
        .await)?)
}

/// The stopped variants of a flow, by experiment.
pub async fn stopped_of_flow(
    db: &Db,
    account_id: &str,
    flow_id: &str,
) -> Result<Stopped, StoreError> {
    let mut stopped = Stopped::new();
    for r in of_flow(db, account_id, flow_id).await? {
        if r.state == "stopped" {
            stopped.entry(r.experiment).or_default().insert(r.variant);
        }
    }
    Ok(stopped)
}

/// The stopped variants of `flow_ids`: (flow id, experiment, variant).
fn stopped_rows(
    flow_ids: &[&str],
) -> variant_states::BoxedQuery<'static, diesel::pg::Pg, (Text, Text, Text)> {
    let ids: Vec<String> = flow_ids.iter().map(|f| f.to_string()).collect();
    variant_states::table
        .filter(variant_states::flow_id.eq_any(ids))
        .filter(variant_states::state.eq("stopped"))
        .select((
            variant_states::flow_id,
            variant_states::experiment,
            variant_states::variant,
        ))
        .into_boxed()
}

/// `rows` ([`stopped_rows`]) by flow id, then experiment.
fn stopped_by_flow(rows: Vec<(String, String, String)>) -> HashMap<String, Stopped> {
    let mut by_flow: HashMap<String, Stopped> = HashMap::new();
    for (flow, experiment, variant) in rows {
        by_flow
            .entry(flow)
            .or_default()
            .entry(experiment)
            .or_default()
            .insert(variant);
    }
    by_flow
}

/// The caps of a batch's senders ([`Tx::sender_caps`]) and the stopped variants of its flows
/// with step experiments, by flow id then experiment.
pub type CapsAndStopped = (
    HashMap<SenderKey, (crate::capacity::Caps, crate::timing::Zone)>,
    HashMap<String, Stopped>,
);

impl Tx {
    /// What a batch stepping enrollments reads besides their rows: the caps of `senders` that
    /// have any ([`Tx::sender_caps`]) and the stopped variants of `flow_ids` (the flows with
    /// step experiments, which assign by them; nothing read for none). PostgreSQL sends the
    /// two reads together, so a batch of a flow with experiments waits on the database as often
    /// as one without.
    pub async fn caps_and_stopped(
        &mut self,
        senders: &[SenderKey],
        flow_ids: &[&str],
    ) -> Result<CapsAndStopped, StoreError> {
        match &mut self.conn {
            Conn::Postgres(c) => {
                let c: &diesel_async::AsyncPgConnection = c;
                let caps = async {
                    if senders.is_empty() {
                        return Ok(Vec::new());
                    }
                    super::capacity::senders_with_caps(senders)
                        .load(&mut &*c)
                        .await
                };
                let stopped = async {
                    if flow_ids.is_empty() {
                        return Ok(Vec::new());
                    }
                    stopped_rows(flow_ids).load(&mut &*c).await
                };
                let (caps, stopped) = futures_util::join!(caps, stopped);
                let (caps, stopped) = super::pg_batch::both(caps, stopped)?;
                Ok((
                    super::capacity::caps_of(senders, caps),
                    stopped_by_flow(stopped),
                ))
            }
            Conn::Sqlite(_) => {
                let caps = self.sender_caps(senders).await?;
                let stopped = if flow_ids.is_empty() {
                    HashMap::new()
                } else {
                    self.stopped_variants(flow_ids).await?
                };
                Ok((caps, stopped))
            }
        }
    }

    /// The stopped variants of `flow_ids`, by flow id then experiment: what a batch stepping
    /// enrollments of those flows assigns by.
    pub async fn stopped_variants(
        &mut self,
        flow_ids: &[&str],
    ) -> Result<HashMap<String, Stopped>, StoreError> {
        let rows: Vec<(String, String, String)> = on_conn!(&mut self.conn, c => variant_states::table
            .filter(variant_states::flow_id.eq_any(flow_ids))
            .filter(variant_states::state.eq("stopped"))
            .select((variant_states::flow_id, variant_states::experiment, variant_states::variant))
            .load(c)
            .await)?;
        Ok(stopped_by_flow(rows))
    }
}

/// Keeps the smaller of the stored and `p` as the variant's smallest p-value seen.
pub async fn record_p(
    db: &Db,
    account_id: &str,
    flow_id: &str,
    experiment: &str,
    variant: &str,
    p: f64,
) -> Result<(), StoreError> {
    let conn = db.conn().await?;
    let smaller = if db.is_postgres() { "LEAST" } else { "MIN" };
    let sql = format!(
        "INSERT INTO variant_states (account_id, flow_id, experiment, variant, state, min_p_value) \
         VALUES ($1, $2, $3, $4, 'running', $5) \
         ON CONFLICT (flow_id, experiment, variant) DO UPDATE SET min_p_value = \
         {smaller}(COALESCE(variant_states.min_p_value, excluded.min_p_value), excluded.min_p_value)"
    );
    with_conn!(conn, c => diesel::sql_query(&sql)
        .bind::<Text, _>(account_id)
        .bind::<Text, _>(flow_id)
        .bind::<Text, _>(experiment)
        .bind::<Text, _>(variant)
        .bind::<Double, _>(p)
        .execute(c)
        .await)?;
    Ok(())
}

/// Writes `state` (`stopped` or `winner`) for the variant unless it was decided already (a
/// row not `running`). True when this call wrote it.
#[allow(clippy::too_many_arguments)]
pub async fn decide(
    db: &Db,
    account_id: &str,
    flow_id: &str,
    experiment: &str,
    variant: &str,
    state: &str,
    reason: &str,
    decided_by: &str,
    at_ms: i64,
) -> Result<bool, StoreError> {
    let conn = db.conn().await?;
    let written = with_conn!(conn, c => diesel::sql_query(
        "INSERT INTO variant_states (account_id, flow_id, experiment, variant, state, reason, \
         decided_by, decided_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) \
         ON CONFLICT (flow_id, experiment, variant) DO UPDATE SET state = excluded.state, \
         reason = excluded.reason, decided_by = excluded.decided_by, \
         decided_at = excluded.decided_at WHERE variant_states.state = 'running'",
    )
    .bind::<Text, _>(account_id)
    .bind::<Text, _>(flow_id)
    .bind::<Text, _>(experiment)
    .bind::<Text, _>(variant)
    .bind::<Text, _>(state)
    .bind::<Text, _>(reason)
    .bind::<Text, _>(decided_by)
    .bind::<BigInt, _>(at_ms)
    .execute(c)
    .await)?;
    Ok(written > 0)
}

/// A person restarts the variant: it takes new contacts again, and a `winner` of the same
/// experiment is running again too (nothing is left to have won against).
pub async fn restart(
    db: &Db,
    account_id: &str,
    flow_id: &str,
    experiment: &str,
    variant: &str,
) -> Result<(), StoreError> {
    let mut tx = db.begin().await?;
    let result = async {
        on_conn!(&mut tx.conn, c => diesel::update(
            variant_states::table
                .filter(variant_states::account_id.eq(account_id))
                .filter(variant_states::flow_id.eq(flow_id))
                .filter(variant_states::experiment.eq(experiment))
                .filter(
                    variant_states::variant
                        .eq(variant)
                        .or(variant_states::state.eq("winner")),
                ),
        )
        .set((
            variant_states::state.eq("running"),
            variant_states::reason.eq(None::<String>),
            variant_states::decided_by.eq(None::<String>),
            variant_states::decided_at.eq(None::<i64>),
        ))
        .execute(c)
        .await)?;
        Ok::<_, StoreError>(())
    }
    .await;
    tx.finish(result).await
}
