//! The one-signal path: the signal stored in one transaction, then each enrollment it reaches
//! in its own (the row locked, the engine run, the new state, journey, any dispatch or task and
//! a `signal_deliveries` row written together). The delivery row makes the fan-out resumable and
//! exactly-once per enrollment: a second arrival with the same provider id changes nothing and
//! answers with the first result, and if the first fan-out was cut short (a crash) the second
//! one finishes it.

use super::{delivered, delivery_from_row, engine_signal, group, stored_opt_out};
use super::{Arrival, Delivery, Receipt, Received};
use crate::clock::to_millis;
use crate::engine::{Input, Signal};
use crate::runtime::{apply, Core, StepContext};
use crate::service::{contacts, ServiceError};
use crate::store::signals::{Inserted, SignalRow};
use crate::store::{self, StoreError, Tx, Writes, LIVE};
use chrono::{DateTime, Utc};

/// The replay key of an arrival and when it was seen, as the store takes them.
fn replay_of(arrival: &Arrival) -> Option<(&str, i64)> {
    arrival
        .replay
        .as_ref()
        .map(|r| (r.key.as_str(), to_millis(r.seen_at)))
}

/// [`super::receive`] in transactions of its own: one to store the signal, then one per
/// enrollment.
pub(super) async fn receive_alone(
    core: &Core,
    account_id: &str,
    arrival: Arrival,
    now: DateTime<Utc>,
) -> Result<Received, ServiceError> {
    if arrival.contacts.is_empty() {
        return Err(ServiceError::NotFound {
            what: "contact",
            id: String::new(),
        });
    }
    let row = group::new_row(account_id, &arrival, now);
    let (row, duplicate, reach) =
        match store::signals::insert(&core.db, &row, replay_of(&arrival)).await? {
            Inserted::New { row, reach } => (row, false, reach),
            Inserted::Duplicate { row, reach } => (row, true, reach),
            Inserted::Replayed => return Ok(Received::Replayed),
        };
    let mut deliveries = Vec::new();
    if row.routed_at.is_none() {
        // The stored row is the truth for a duplicate: its id, kind and contacts.
        if let Some(channel) = stored_opt_out(&row) {
            for contact in &row.contact_ids()? {
                contacts::opt_out(
                    core,
                    account_id,
                    contact,
                    std::slice::from_ref(&channel),
                    now,
                )
                .await?;
            }
        }
        deliveries = deliver_all(core, &row, &reach, now).await?;
    }
    if duplicate {
        // The first result: everything delivered, by the first arrival and by this one.
        deliveries = store::signals::deliveries(&core.db, &row.id)
            .await?
            .into_iter()
            .map(delivery_from_row)
            .collect::<Result<_, _>>()?;
    }
    Ok(Received::Done(Receipt {
        signal_id: row.id,
        duplicate,
        deliveries,
    }))
}

/// Routes a signal stored already (a task outcome's, stored with the outcome) to the enrollments
/// it reaches but `except`, one transaction each, and marks it routed; returns how many it
/// reached now. Run again after a crash, it reaches only those it had not (the delivery rows).
pub async fn route_stored(
    core: &Core,
    row: &SignalRow,
    except: &str,
    now: DateTime<Utc>,
) -> Result<usize, ServiceError> {
    let reach = store::signals::reach(&core.db, row, Some(except)).await?;
    Ok(deliver_all(core, row, &reach, now).await?.len())
}

/// Delivers a stored signal to each of `reach` in turn (the last transaction also marks it
/// routed; with none to reach it is marked at once); returns what it did where it was not
/// delivered before.
async fn deliver_all(
    core: &Core,
    row: &SignalRow,
    reach: &[String],
    now: DateTime<Utc>,
) -> Result<Vec<Delivery>, ServiceError> {
    let signal = engine_signal(row)?;
    let mut deliveries = Vec::with_capacity(reach.len());
    for (i, enrollment) in reach.iter().enumerate() {
        let last = i + 1 == reach.len();
        deliveries.extend(deliver(core, row, &signal, enrollment, last, now).await?);
    }
    if reach.is_empty() {
        store::signals::mark_routed(&core.db, &row.id, to_millis(now)).await?;
    }
    Ok(deliveries)
}

/// Applies `signal` to one enrollment in one transaction and returns what it did there; `None`
/// when the signal already reached it or it has finished meanwhile. With `last`, the same
/// transaction marks the signal's fan-out complete. Wakes the planner when an earlier timer is
/// written.
async fn deliver(
    core: &Core,
    row: &SignalRow,
    signal: &Signal,
    enrollment_id: &str,
    last: bool,
    now: DateTime<Utc>,
) -> Result<Option<Delivery>, ServiceError> {
    let mut tx = core.db.begin().await?;
    let delivered = deliver_in(&mut tx, core, row, signal, enrollment_id, last, now).await;
    Ok(match tx.finish(delivered).await? {
        Some((delivery, wake)) => {
            core.announce(wake).await;
            Some(delivery)
        }
        None => None,
    })
}

/// The body of [`deliver`], inside its transaction.
async fn deliver_in(
    tx: &mut Tx,
    core: &Core,
    row: &SignalRow,
    signal: &Signal,
    enrollment_id: &str,
    last: bool,
    now: DateTime<Utc>,
) -> Result<Option<(Delivery, Option<i64>)>, StoreError> {
    let now_ms = to_millis(now);
    let found = tx.lock_enrollment(None, enrollment_id).await?;
    if last {
        tx.mark_routed(&[&row.id], now_ms).await?;
    }
    let Some(enrollment) = found else {
        return Ok(None);
    };
    if !LIVE.contains(&enrollment.status.as_str()) {
        return Ok(None);
    }
    if tx.delivered(&row.id, enrollment_id).await? {
        return Ok(None);
    }
    let rows = [enrollment];
    let context = StepContext::load(tx, &core.flows, &rows).await?;
    let [enrollment] = rows;
    let mut writes = Writes::default();
    let effects = apply(
        &mut writes,
        &core.flows,
        &context,
        enrollment,
        Input::Signal(signal.clone()),
        now,
    )?;
    tx.write_all(&writes).await?;
    let (delivery_row, delivery) = delivered(&row.id, enrollment_id, &effects, now_ms);
    tx.insert_deliveries(&[delivery_row]).await?;
    Ok(Some((delivery, writes.earliest_wake)))
}
