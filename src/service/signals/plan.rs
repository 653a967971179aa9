//! The pure middle of a signal group: given the signals to route, the enrollments they reach
//! (loaded and locked by the caller) and what a cut-short fan-out delivered already, run the
//! engine signal after signal in arrival order (two signals to the same enrollment see each
//! other's effect) and answer the rows to write. No I/O: the caller reads before and writes
//! after, in one transaction ([`super::group`]).

use super::{delivered, engine_signal, Delivery};
use crate::clock::to_millis;
use crate::engine::Input;
use crate::runtime::{apply, FlowCache, StepContext};
use crate::store::signals::{DeliveryRow, SignalRow};
use crate::store::{EnrollmentRow, StoreError, Writes, LIVE};
use chrono::{DateTime, Utc};
use std::collections::{HashMap, HashSet};

/// One distinct signal of the group: inserted now or found stored.
pub(super) struct Stored {
    pub row: SignalRow,
    /// Inserted by this group.
    pub new: bool,
    /// When the job that brought it first arrived.
    pub now: DateTime<Utc>,
    /// Routed by this group (its fan-out was not complete).
    pub route: bool,
    /// Left to the one-signal path (a stored opt-out whose fan-out was cut short).
    pub alone: bool,
    /// What it did, filled in by [`plan_group`].
    pub deliveries: Vec<Delivery>,
}

/// What a group writes.
pub(super) struct Plan {
    pub writes: Writes,
    pub delivery_rows: Vec<DeliveryRow>,
    /// The earliest timer that is sooner than the one it replaces: news to the planners.
    pub wake: Option<i64>,
}

/// Routes every `stored` signal with `route` set to the enrollments of `rows` it reaches,
/// skipping the (signal, enrollment) pairs in `seen`; records each signal's deliveries on it.
pub(super) fn plan_group(
    flows: &FlowCache,
    context: &StepContext,
    stored: &mut [Stored],
    rows: Vec<EnrollmentRow>,
    seen: &HashSet<(String, String)>,
) -> Result<Plan, StoreError> {
    // 4. Every enrollment each signal to route reaches, with the deliveries a
    // cut-short fan-out already made.
    let mut reach: Vec<Vec<String>> = stored.iter().map(|_| Vec::new()).collect();
    for (i, s) in stored.iter().enumerate() {
        if !s.route {
            continue;
        }
        let contacts = s.row.contact_ids()?;
        let mut mine: Vec<&EnrollmentRow> = rows
            .iter()
            .filter(|r| r.account_id == s.row.account_id && contacts.contains(&r.contact_id))
            .collect();
        mine.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
        reach[i] = mine.into_iter().map(|r| r.id.clone()).collect();
    }

    // 5. The engine, signal after signal in arrival order, on the evolving rows.
    let was: HashMap<String, Option<i64>> =
        rows.iter().map(|r| (r.id.clone(), r.next_run_at)).collect();
    let mut current: HashMap<String, EnrollmentRow> =
        rows.into_iter().map(|r| (r.id.clone(), r)).collect();
    let mut touched: Vec<String> = Vec::new();
    let mut writes = Writes::default();
    let mut delivery_rows: Vec<DeliveryRow> = Vec::new();
    for (i, s) in stored.iter_mut().enumerate() {
        if !s.route {
            continue;
        }
        let signal = engine_signal(&s.row)?;
        let now_ms = to_millis(s.now);
        for enrollment_id in &reach[i] {
            let Some(row) = current.get(enrollment_id) else {
                continue;
            };
            if !LIVE.contains(&row.status.as_str()) {
                continue;
            }
            if !s.new && seen.contains(&(s.row.id.clone(), enrollment_id.clone())) {
                continue;
            }
            let effects = apply(
                &mut writes,
                flows,
                context,
                row.clone(),
                Input::Signal(signal.clone()),
                s.now,
            )?;
            let after = writes.enrollments.pop().expect("apply adds the row");
            current.insert(enrollment_id.clone(), after);
            if !touched.contains(enrollment_id) {
                touched.push(enrollment_id.clone());
            }
            let (delivery_row, delivery) = delivered(&s.row.id, enrollment_id, &effects, now_ms);
            delivery_rows.push(delivery_row);
            s.deliveries.push(delivery);
        }
    }
    // One row per enrollment, its last state; the upsert cannot touch a row twice.
    touched.sort();
    let mut wake: Option<i64> = None;
    for id in &touched {
        let row = current.remove(id).expect("a touched enrollment is loaded");
        // Only a sooner timer is news to the planners.
        if let Some(t) = row.next_run_at {
            if was.get(id).copied().flatten().is_none_or(|w| t < w) {
                wake = Some(wake.map_or(t, |e: i64| e.min(t)));
            }
        }
        writes.enrollments.push(row);
    }

    Ok(Plan {
        writes,
        delivery_rows,
        wake,
    })
}
