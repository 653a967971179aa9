//! Group commit for signals: one transaction for every signal waiting, not one per signal.
//!
//! The [`Router`](super::Router) hands each group here; it is routed in one transaction with
//! set-based statements: the signals inserted `ON CONFLICT DO NOTHING`, every enrollment they
//! reach loaded and locked at once (PostgreSQL `FOR UPDATE`, in id order so concurrent groups
//! cannot deadlock), the engine run in memory in arrival order (`plan`), then one write of the engine's rows ([`Tx::write_group`]), one insert of the
//! `signal_deliveries` rows and one `routed_at` update. The answers are the ones the
//! one-signal path gives, which is still used:
//!
//! - when the group transaction fails, every signal of it is routed alone, so one bad signal
//!   fails only its own caller;
//! - for opt-outs, which update the contact first (rare, and outside this transaction);
//! - for a repeated provider id whose stored signal is an opt-out cut short by a crash.
//!
//! A reply by SMS has its words read in the group too, against the first contact found by its
//! number; one whose reading needs more (the account's default sender's zone, or its policy for
//! an unsubscribe) goes back to its caller, which reads it and sends it on with its contacts.

use super::alone::FANOUT_CHUNK;
use super::plan::{plan_group, Plan, Stored};
use super::{delivery_from_row, Arrival, Delivery, Pending, Receipt, Received};
use crate::clock::to_millis;
use crate::inbound::intent::ReplyIntent;
use crate::runtime::{Core, FlowCache, StepContext};
use crate::service::ServiceError;
use crate::store::signals::{PhoneContact, SignalRow, REPLAY_MEMORY_MS};
use crate::store::{self, StoreError, Tx};
use chrono::{DateTime, Utc};
use std::collections::{HashMap, HashSet};

/// What the group decided for one signal.
enum Outcome {
    Answer(Received),
    /// No contact has its phone number: nothing stored.
    Unknown(String),
    /// Route it alone; its replay key is already stored by this arrival, so without it.
    Alone,
    /// Its words need more than its contact's row to read: nothing stored, the caller reads
    /// them and sends it again.
    Back,
}

/// Routes `signals` as one group (tests call it directly) and answers each as
/// [`super::receive`] would, in order. A signal whose words the group could not read alone is
/// read and routed alone here.
pub async fn receive_group(
    core: &Core,
    signals: Vec<Pending>,
) -> Vec<Result<Received, ServiceError>> {
    let mut answers = Vec::new();
    for answer in receive_jobs(core, signals).await {
        answers.push(match answer {
            Ok(received) => received,
            Err(signal) => read_alone(core, *signal).await,
        });
    }
    answers
}

/// The one-signal path of a signal with words to read: its contacts found, its words read and
/// settled, then routed alone.
async fn read_alone(core: &Core, signal: Pending) -> Result<Received, ServiceError> {
    let mut arrival = signal.arrival;
    if let Some(phone) = &signal.phone {
        let reference = super::ContactRef::Phone(phone.clone());
        arrival.contacts = super::find_contacts(core, &signal.account_id, &reference).await?;
    }
    if let (Some(words), Some(first)) = (&signal.words, arrival.contacts.first()) {
        let (kind, intent) = super::words::read_and_settle(
            core,
            &signal.account_id,
            first,
            arrival.kind,
            words,
            signal.now,
        )
        .await?;
        arrival.kind = kind;
        arrival.intent = intent;
    }
    super::alone::receive_alone(core, &signal.account_id, arrival, signal.now).await
}

/// Routes `signals` as one group (what each router task does with what is queued) and answers
/// each as [`super::receive`] would, in order; `Err` gives back a signal whose words need more
/// than its contact's row to read (nothing of it stored).
pub(super) async fn receive_jobs(
    core: &Core,
    signals: Vec<Pending>,
) -> Vec<Result<Result<Received, ServiceError>, Box<Pending>>> {
    let mut answers: Vec<Option<Result<Received, ServiceError>>> =
        signals.iter().map(|_| None).collect();
    let mut back: Vec<bool> = signals.iter().map(|_| false).collect();
    // Opt-outs update the contact first: the one-signal path does that.
    let (alone, together): (Vec<usize>, Vec<usize>) = (0..signals.len()).partition(|&i| {
        let s = &signals[i];
        (s.phone.is_none() && s.arrival.contacts.is_empty()) || s.arrival.kind.marks_contact()
    });
    let group: Vec<&Pending> = together.iter().map(|&i| &signals[i]).collect();
    let mut retry: Vec<(usize, bool)> = alone.into_iter().map(|i| (i, true)).collect();
    let routed = if group.is_empty() {
        Ok(Some((Vec::new(), Default::default())))
    } else {
        route_together(core, &group).await
    };
    match routed {
        // A signal of the group reaches more than a chunk: nothing was stored, and each goes
        // alone, where a big fan-out is applied in chunks (docs/service.md, "Errors").
        Ok(None) => retry.extend(together.iter().map(|&i| (i, true))),
        Ok(Some((outcomes, wake))) => {
            core.announce(wake).await;
            for (&i, outcome) in together.iter().zip(outcomes) {
                match outcome {
                    Outcome::Answer(received) => answers[i] = Some(Ok(received)),
                    Outcome::Unknown(phone) => {
                        answers[i] = Some(Err(ServiceError::NotFound {
                            what: "contact",
                            id: phone,
                        }))
                    }
                    Outcome::Alone => retry.push((i, false)),
                    Outcome::Back => back[i] = true,
                }
            }
        }
        Err(e) => {
            if group.len() > 1 {
                tracing::warn!(error = %e, signals = group.len(), "a group of signals failed; routing each alone");
            }
            retry.extend(together.iter().map(|&i| (i, true)));
        }
    }
    retry.sort();
    for (i, keep_replay_key) in retry {
        let signal = &signals[i];
        if signal.words.is_some() && keep_replay_key {
            // Nothing of it stored: its caller reads its words and routes it alone, and
            // counts it as what they made it.
            back[i] = true;
            continue;
        }
        let mut arrival = signal.arrival.clone();
        if !keep_replay_key {
            // This arrival stored its replay key in the group (and its signal is stored:
            // the first result answers, whatever its words say).
            arrival.replay = None;
        }
        answers[i] = Some(alone_addressed(core, signal, arrival).await);
    }
    signals
        .into_iter()
        .zip(answers)
        .zip(back)
        .map(|((signal, answer), back)| {
            if back {
                Err(Box::new(signal))
            } else {
                Ok(answer.expect("every signal is answered"))
            }
        })
        .collect()
}

/// The one-signal path, its contacts found first when it came with a phone number.
async fn alone_addressed(
    core: &Core,
    signal: &Pending,
    mut arrival: Arrival,
) -> Result<Received, ServiceError> {
    if let Some(phone) = &signal.phone {
        let reference = super::ContactRef::Phone(phone.clone());
        arrival.contacts = super::find_contacts(core, &signal.account_id, &reference).await?;
    }
    super::alone::receive_alone(core, &signal.account_id, arrival, signal.now).await
}

/// Where a job's answer comes from.
enum Slot {
    Replayed,
    /// No contact has its phone number.
    Unknown,
    /// Its words need more than its contact's row to read.
    Back,
    /// The index of its signal in the group's distinct signals; `duplicate` when its provider
    /// id was stored before it (by an earlier call or an earlier job of the group).
    Signal {
        index: usize,
        duplicate: bool,
    },
}

/// Routes `jobs` in one transaction; answers one [`Outcome`] per job, in order, and the
/// earliest wake to announce.
async fn route_together(
    core: &Core,
    jobs: &[&Pending],
) -> Result<Option<(Vec<Outcome>, crate::store::Committed)>, StoreError> {
    let mut tx = core.db.begin_planned().await?;
    match route_in(&mut tx, &core.flows, &core.quiet_hours, jobs).await {
        Ok(None) => {
            tx.rollback().await?;
            Ok(None)
        }
        routed => tx.finish(routed).await,
    }
}

/// The body of [`route_together`], inside its transaction; `None` when a signal of the group
/// reaches more than [`FANOUT_CHUNK`] enrollments (the caller rolls back and routes each
/// alone).
async fn route_in(
    tx: &mut Tx,
    flows: &FlowCache,
    quiet_hours: &crate::timing::QuietHours,
    jobs: &[&Pending],
) -> Result<Option<(Vec<Outcome>, crate::store::Committed)>, StoreError> {
    // 1. The contacts of signals addressed by phone; none: refused, nothing stored. A reply's
    // words are read against the first (oldest) of them, as the one-signal path reads them.
    let mut slots: Vec<Option<Slot>> = jobs.iter().map(|_| None).collect();
    let mut found_by_job: Vec<Option<(Vec<String>, Option<ReplyIntent>)>> =
        jobs.iter().map(|_| None).collect();
    let phones: Vec<&str> = jobs.iter().filter_map(|j| j.phone.as_deref()).collect();
    if !phones.is_empty() {
        let pairs: Vec<(String, String)> = jobs
            .iter()
            .filter_map(|j| Some((j.account_id.clone(), j.phone.clone()?)))
            .collect();
        let found = tx.contacts_by_phone(&pairs).await?;
        for ((job, slot), by_job) in jobs
            .iter()
            .zip(slots.iter_mut())
            .zip(found_by_job.iter_mut())
        {
            let Some(phone) = &job.phone else { continue };
            let mine: Vec<&PhoneContact> = found
                .iter()
                .filter(|c| c.account_id == job.account_id && c.phone.as_ref() == Some(phone))
                .collect();
            let Some(first) = mine.first() else {
                *slot = Some(Slot::Unknown);
                continue;
            };
            let reading = match &job.words {
                None => None,
                Some(words) => match super::words::read_known(first, words, job.now) {
                    Some(reading) => Some(reading),
                    None => {
                        *slot = Some(Slot::Back);
                        continue;
                    }
                },
            };
            *by_job = Some((mine.iter().map(|c| c.id.clone()).collect(), reading));
        }
    }
    let arrival_of = |i: usize| -> std::borrow::Cow<'_, Arrival> {
        match &found_by_job[i] {
            Some((contacts, reading)) => {
                let mut arrival = jobs[i].arrival.clone();
                arrival.contacts = contacts.clone();
                if reading.is_some() {
                    arrival.intent = reading.clone();
                }
                std::borrow::Cow::Owned(arrival)
            }
            None => std::borrow::Cow::Borrowed(&jobs[i].arrival),
        }
    };

    // 2. Webhook signatures seen before: refused, nothing stored (but see below). One
    // statement for the group; old signatures, which can no longer pass the timestamp check,
    // are forgotten in the same round trip.
    let (signed, keys): (Vec<usize>, Vec<(&str, &str, i64)>) = jobs
        .iter()
        .enumerate()
        .filter(|(i, _)| slots[*i].is_none())
        .filter_map(|(i, job)| {
            let replay = job.arrival.replay.as_ref()?;
            let at = to_millis(replay.seen_at);
            Some((i, (job.account_id.as_str(), replay.key.as_str(), at)))
        })
        .unzip();
    if let Some(oldest) = keys.iter().map(|k| k.2).min() {
        let fresh = tx
            .remember_replays(&keys, oldest - REPLAY_MEMORY_MS)
            .await?;
        for (&i, fresh) in signed.iter().zip(fresh) {
            if fresh {
                continue;
            }
            // Seen before: refused, unless what it stored is not delivered yet (its first
            // answer was a retryable failure after the signal was stored); then this is the
            // provider's retry, and step 3 finds the signal and finishes its delivery.
            let job = jobs[i];
            let provider_id = job.arrival.provider_id.as_deref();
            if tx
                .undelivered(&job.account_id, provider_id)
                .await?
                .is_none()
            {
                slots[i] = Some(Slot::Replayed);
            }
        }
    }

    // 3. The signals, once per (account, provider id): a later job of the group with
    // the same provider id is a duplicate of the earlier one.
    let mut stored: Vec<Stored> = Vec::new();
    let mut by_provider: HashMap<(&str, &str), usize> = HashMap::new();
    for (i, (job, slot)) in jobs.iter().zip(slots.iter_mut()).enumerate() {
        if slot.is_some() {
            continue;
        }
        if let Some(provider) = job.arrival.provider_id.as_deref() {
            if let Some(&index) = by_provider.get(&(job.account_id.as_str(), provider)) {
                *slot = Some(Slot::Signal {
                    index,
                    duplicate: true,
                });
                continue;
            }
            by_provider.insert((job.account_id.as_str(), provider), stored.len());
        }
        *slot = Some(Slot::Signal {
            index: stored.len(),
            duplicate: false,
        });
        stored.push(Stored {
            row: SignalRow {
                // Routed in this transaction: if it commits, the fan-out is complete.
                routed_at: Some(to_millis(job.now)),
                ..new_row(&job.account_id, &arrival_of(i), job.now)
            },
            new: true,
            now: job.now,
            route: true,
            alone: false,
            deliveries: Vec::new(),
        });
    }
    // Sorted, so groups inserting the same provider ids meet them in the same order.
    let mut candidates: Vec<&SignalRow> = stored.iter().map(|s| &s.row).collect();
    candidates
        .sort_by(|a, b| (&a.account_id, &a.provider_id).cmp(&(&b.account_id, &b.provider_id)));
    let candidates: Vec<SignalRow> = candidates.into_iter().cloned().collect();
    // What the new signals reach, and the accounts' settings, are read in the same
    // trip as the insert; a duplicate whose stored fan-out was cut short may reach
    // other contacts, read after.
    let mut wanted: Vec<(String, String)> = Vec::new();
    for s in &stored {
        wanted.extend(
            s.row
                .contact_ids()?
                .into_iter()
                .map(|c| (s.row.account_id.clone(), c)),
        );
    }
    wanted.sort();
    wanted.dedup();
    let mut group_accounts: Vec<String> = stored.iter().map(|s| s.row.account_id.clone()).collect();
    group_accounts.sort();
    group_accounts.dedup();
    let (inserted, mut rows, settings) = tx
        .insert_and_reach(&candidates, &wanted, &group_accounts)
        .await?;
    let inserted: HashSet<String> = inserted.into_iter().collect();
    let known_accounts: Vec<&str> = stored
        .iter()
        .filter(|s| !inserted.contains(&s.row.id))
        .map(|s| s.row.account_id.as_str())
        .collect();
    let known: Vec<&str> = stored
        .iter()
        .filter(|s| !inserted.contains(&s.row.id))
        .filter_map(|s| s.row.provider_id.as_deref())
        .collect();
    if !known.is_empty() {
        let found = tx.signals_by_provider(&known_accounts, &known).await?;
        for s in stored.iter_mut().filter(|s| !inserted.contains(&s.row.id)) {
            let existing = found
                .iter()
                .find(|f| f.account_id == s.row.account_id && f.provider_id == s.row.provider_id)
                .ok_or_else(|| {
                    StoreError::Corrupt(format!(
                        "signal {:?} was neither inserted nor found",
                        s.row.provider_id
                    ))
                })?;
            s.row = existing.clone();
            s.new = false;
            s.route = s.row.routed_at.is_none();
            s.alone = s.route && super::contact_mark(&s.row).is_some();
            if s.alone {
                s.route = false;
            }
        }
        let mut more: Vec<(String, String)> = Vec::new();
        for s in stored.iter().filter(|s| s.route && !s.new) {
            more.extend(
                s.row
                    .contact_ids()?
                    .into_iter()
                    .map(|c| (s.row.account_id.clone(), c))
                    .filter(|pair| wanted.binary_search(pair).is_err()),
            );
        }
        more.sort();
        more.dedup();
        if !more.is_empty() {
            let have: HashSet<String> = rows.iter().map(|r| r.id.clone()).collect();
            let extra = tx.reached(&more).await?;
            rows.extend(extra.into_iter().filter(|r| !have.contains(&r.id)));
            rows.sort_by(|a, b| a.id.cmp(&b.id));
        }
    }

    // A fan-out bigger than a chunk is not applied in the group's one transaction.
    for s in stored.iter().filter(|s| s.route) {
        let contacts = s.row.contact_ids()?;
        let reach = rows
            .iter()
            .filter(|r| r.account_id == s.row.account_id && contacts.contains(&r.contact_id))
            .count();
        if reach > FANOUT_CHUNK {
            return Ok(None);
        }
    }

    // 4. and 5.: what each signal reaches and what it does there, in memory.
    let resumed: Vec<&str> = stored
        .iter()
        .filter(|s| s.route && !s.new)
        .map(|s| s.row.id.as_str())
        .collect();
    let seen = tx.delivered_pairs(&resumed).await?;
    let context = StepContext::load_with_settings(tx, flows, &rows, settings, quiet_hours).await?;
    let Plan {
        writes,
        delivery_rows,
        wake,
    } = plan_group(flows, &context, &mut stored, rows, &seen)?;

    // 6. Everything written at once.
    // New signals were stored routed; a resumed fan-out is complete now.
    let routed: Vec<&str> = stored
        .iter()
        .filter(|s| s.route && !s.new)
        .map(|s| s.row.id.as_str())
        .collect();
    let routed_at = jobs
        .iter()
        .map(|j| to_millis(j.now))
        .max()
        .unwrap_or_default();
    tx.write_group(&writes, &delivery_rows, &routed, routed_at)
        .await?;
    // Only a sooner timer is news to the planners (the plan's `wake`); every run entered counts.
    let wake = crate::store::Committed {
        wake,
        ..writes.committed()
    };

    // 7. A duplicate answers with the first result: every delivery of its signal.
    let repeated: Vec<&str> = jobs
        .iter()
        .zip(&slots)
        .filter_map(|(_, slot)| match slot {
            Some(Slot::Signal { index, duplicate }) => {
                let s = &stored[*index];
                (*duplicate || !s.new).then_some(s.row.id.as_str())
            }
            _ => None,
        })
        .collect();
    let mut first_results: HashMap<String, Vec<Delivery>> = HashMap::new();
    {
        for d in tx.deliveries_of(&repeated).await? {
            let signal_id = d.signal_id.clone();
            first_results
                .entry(signal_id)
                .or_default()
                .push(delivery_from_row(d)?);
        }
    }
    let outcomes: Vec<Outcome> = slots
        .into_iter()
        .zip(jobs)
        .map(|(slot, job)| match slot.expect("every job has a slot") {
            Slot::Replayed => Outcome::Answer(Received::Replayed),
            Slot::Unknown => Outcome::Unknown(job.phone.clone().unwrap_or_default()),
            Slot::Back => Outcome::Back,
            Slot::Signal { index, duplicate } => {
                let s = &stored[index];
                if s.alone {
                    return Outcome::Alone;
                }
                let duplicate = duplicate || !s.new;
                let deliveries = if duplicate {
                    first_results.get(&s.row.id).cloned().unwrap_or_default()
                } else {
                    s.deliveries.clone()
                };
                Outcome::Answer(Received::Done(Receipt::summarize(
                    &s.row, duplicate, deliveries,
                )))
            }
        })
        .collect();
    Ok(Some((outcomes, wake)))
}

/// The payload stored: what the arrival carried, with an inbox signal's class under
/// [`super::INBOX_KEY`] and a reply's intent under [`super::INTENT_KEY`].
fn stored_payload(arrival: &Arrival) -> serde_json::Value {
    let mut payload = arrival.payload.clone();
    if let Some(map) = payload.as_object_mut() {
        if let Some(inbox) = arrival.kind.inbox() {
            map.insert(
                super::INBOX_KEY.to_string(),
                serde_json::to_value(inbox).expect("an inbox class serializes"),
            );
        }
        if let Some(intent) = &arrival.intent {
            map.insert(
                super::INTENT_KEY.to_string(),
                serde_json::to_value(intent).expect("an intent serializes"),
            );
        }
    }
    payload
}

/// The row a new signal is stored as.
pub(super) fn new_row(account_id: &str, arrival: &Arrival, now: DateTime<Utc>) -> SignalRow {
    SignalRow {
        id: store::new_id("sg"),
        account_id: account_id.to_string(),
        contact_id: <[String]>::first(&arrival.contacts)
            .cloned()
            .unwrap_or_default(),
        source: arrival.source.as_str().to_string(),
        provider_id: arrival.provider_id.clone(),
        raises: serde_json::to_string(
            &arrival
                .kind
                .raises_with(arrival.intent.as_ref().map(|i| i.intent)),
        )
        .expect("strings serialize"),
        payload: stored_payload(arrival).to_string(),
        created_at: to_millis(now),
        kind: arrival.kind.name().to_string(),
        channel: arrival.kind.channel().map(str::to_string),
        contact_ids: serde_json::to_string(&arrival.contacts).expect("strings serialize"),
        routed_at: None,
    }
}
