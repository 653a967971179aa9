//! The one-signal path: the signal stored in one transaction, then each enrollment it reaches
//! in its own (the row locked, the engine run, the new state, journey, any dispatch or task and
//! a `signal_deliveries` row written together). The delivery row makes the fan-out resumable and
//! exactly-once per enrollment: a second arrival with the same provider id changes nothing and
//! answers with the first result, and if the first fan-out was cut short (a crash) the second
//! one finishes it.

use super::{delivered, delivery_from_row, engine_signal, group};
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
        let delivered = async {
            opt_out_contacts(core, &row, now).await?;
            deliver_all(core, &row, &reach, now).await
        };
        deliveries = delivered.await.map_err(|e| stored_but_cut_short(e, &row))?;
    }
    if duplicate {
        // The first result: everything delivered, by the first arrival and by this one.
        deliveries = store::signals::deliveries(&core.db, &row.id)
            .await?
            .into_iter()
            .map(delivery_from_row)
            .collect::<Result<_, _>>()?;
    }
    Ok(Received::Done(Receipt::summarize(
        &row, duplicate, deliveries,
    )))
}

/// A failure after the signal was stored: the answer must not read as "nothing happened". A
/// retryable one says the signal is stored and how its delivery is finished (the same
/// arrival again: its provider id makes it a duplicate, which delivers what is left).
fn stored_but_cut_short(e: ServiceError, row: &SignalRow) -> ServiceError {
    match e {
        ServiceError::Unavailable(why) => ServiceError::Unavailable(format!(
            "the signal is stored as {}, but delivering it was cut short ({why}); send it again \
             (with the same provider id it is not stored twice) to finish",
            row.id
        )),
        other => other,
    }
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
    // An opt-out (a LinkedIn reply whose words asked to stop) marks the contact first and
    // reaches every enrollment, the task's own included: every one of them exits.
    opt_out_contacts(core, row, now).await?;
    let except = (!row.is_opt_out()).then_some(except);
    let reach = store::signals::reach(&core.db, row, except).await?;
    Ok(deliver_all(core, row, &reach, now).await?.len())
}

/// When the stored signal is an opt-out, marks each of its contacts opted out of its channel
/// (before its fan-out, so no enrollment sends on it meanwhile).
async fn opt_out_contacts(
    core: &Core,
    row: &SignalRow,
    now: DateTime<Utc>,
) -> Result<(), ServiceError> {
    let Some((add, channel)) = super::contact_mark(row) else {
        return Ok(());
    };
    for contact in &row.contact_ids()? {
        if add {
            contacts::opt_out(
                core,
                &row.account_id,
                contact,
                std::slice::from_ref(&channel),
                now,
            )
            .await?;
        } else {
            let parsed = crate::service::fields::parse_channel("channel", &channel)
                .map_err(|v| ServiceError::Invalid(vec![v]))?;
            contacts::opt_in(core, &row.account_id, contact, parsed, now).await?;
        }
    }
    Ok(())
}

/// Finishes every fan-out a crash cut short (signals stored but not marked routed), in chunks
/// like any other; an enrollment reached before is not reached again. Run at start; safe beside
/// a replica that is routing the same signal, since each delivery is taken under the
/// enrollment's lock. Returns how many enrollments it reached.
pub async fn resume_unrouted(core: &Core) -> Result<usize, ServiceError> {
    let mut reached = 0;
    loop {
        let rows = store::signals::unrouted(&core.db, 100).await?;
        if rows.is_empty() {
            return Ok(reached);
        }
        for row in &rows {
            let now = core.clock.now();
            opt_out_contacts(core, row, now).await?;
            let reach = store::signals::reach(&core.db, row, None).await?;
            reached += deliver_all(core, row, &reach, now).await?.len();
        }
    }
}

/// Enrollments one transaction of a fan-out applies a signal to: a signal that reaches many
/// is applied in chunks of this many, each its own transaction, so no call waits behind one
/// huge transaction (docs/service.md, "Errors"). The delivery rows make it resumable: a chunk cut short by a
/// crash is applied again, and only to the enrollments it had not reached.
pub const FANOUT_CHUNK: usize = 500;

/// Delivers a stored signal to `reach` in chunks of [`FANOUT_CHUNK`] (the last chunk's
/// transaction also marks it routed; with none to reach it is marked at once); returns what it
/// did where it was not delivered before.
async fn deliver_all(
    core: &Core,
    row: &SignalRow,
    reach: &[String],
    now: DateTime<Utc>,
) -> Result<Vec<Delivery>, ServiceError> {
    let signal = engine_signal(row)?;
    // Locked in id order, as every other path locks enrollments.
    let mut reach = reach.to_vec();
    reach.sort();
    let mut deliveries = Vec::with_capacity(reach.len());
    let chunks: Vec<&[String]> = reach.chunks(FANOUT_CHUNK).collect();
    for (i, chunk) in chunks.iter().enumerate() {
        let last = i + 1 == chunks.len();
        let (done, wake) = crate::transaction!(core.db, |tx| {
            deliver_chunk(tx, core, row, &signal, chunk, last, now).await
        })?;
        core.announce(wake).await;
        deliveries.extend(done);
    }
    if reach.is_empty() {
        store::signals::mark_routed(&core.db, &row.id, to_millis(now)).await?;
    }
    Ok(deliveries)
}

/// Applies `signal` to each of `enrollment_ids` that is live and not reached yet, inside one
/// transaction: the rows locked, the engine run, the new states, journeys, dispatches, tasks
/// and delivery rows written together. With `last`, it also marks the fan-out complete.
async fn deliver_chunk(
    tx: &mut Tx,
    core: &Core,
    row: &SignalRow,
    signal: &Signal,
    enrollment_ids: &[String],
    last: bool,
    now: DateTime<Utc>,
) -> Result<(Vec<Delivery>, crate::store::Committed), StoreError> {
    let now_ms = to_millis(now);
    if last {
        tx.mark_routed(&[&row.id], now_ms).await?;
    }
    let mut rows = Vec::with_capacity(enrollment_ids.len());
    for id in enrollment_ids {
        let Some(enrollment) = tx.lock_enrollment(None, id).await? else {
            continue;
        };
        if LIVE.contains(&enrollment.status.as_str()) && !tx.delivered(&row.id, id).await? {
            rows.push(enrollment);
        }
    }
    if rows.is_empty() {
        return Ok((Vec::new(), Default::default()));
    }
    let context = StepContext::load(tx, &core.flows, &rows, &core.quiet_hours).await?;
    let mut writes = Writes::default();
    let mut deliveries = Vec::with_capacity(rows.len());
    let mut delivery_rows = Vec::with_capacity(rows.len());
    for enrollment in rows {
        let id = enrollment.id.clone();
        let effects = apply(
            &mut writes,
            &core.flows,
            &context,
            enrollment,
            Input::Signal(signal.clone()),
            now,
        )?;
        let (delivery_row, delivery) = delivered(&row.id, &id, &effects, now_ms);
        delivery_rows.push(delivery_row);
        deliveries.push(delivery);
    }
    tx.write_all(&writes).await?;
    tx.insert_deliveries(&delivery_rows).await?;
    Ok((deliveries, writes.committed()))
}
