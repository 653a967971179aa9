//! Enroll: one item or a batch, each item checked, run through the interpreter's `Start` in
//! memory, then written with set-based inserts, 1,000 items per transaction.

use super::Enrollment;
use crate::clock::to_millis;
use crate::code::Code;
use crate::engine::{self, Effect, EnrollmentState, FlowRef, Input};
use crate::runtime::{ctx_for, Core};
use crate::service::fields::{self, Limit};
use crate::service::{ServiceError, Violation, Violations};
use crate::store::contacts::ContactRow;
use crate::store::FastMap;
use crate::store::{self, EnrollmentRow, StoreError, Tx, Writes};
use chrono::{DateTime, Utc};
use std::sync::Arc;

/// The most items one `BatchEnroll` takes.
pub const MAX_BATCH: usize = 10_000;
/// Items of a batch written per transaction.
const BATCH_CHUNK: usize = 1_000;

/// What `Enroll` asks for, before checking.
#[derive(Debug, Clone, Default)]
pub struct EnrollInput {
    pub contact_id: String,
    pub flow_id: String,
    pub flow_version: i32,
    pub sender_id: String,
    /// JSON text; empty means `{}`.
    pub input: String,
    pub client_key: String,
    pub allow_duplicate: bool,
}

/// A checked item, ready to be written.
struct Prepared {
    row: EnrollmentRow,
    /// What the writer reads of the state before `Start` (not the state itself: the engine
    /// stepped that one in place instead of a copy).
    before: engine::state::Before,
    /// Boxed, as it is in the answer: a batch moves each item several times (into its part,
    /// into the answer, into the call's results), and the state inline made each move copy
    /// 760 bytes, a fifth of BatchEnroll's own CPU.
    after: Box<EnrollmentState>,
    effects: Vec<Effect>,
}

/// A flow an item names: its id, its version and the parsed flow.
type Resolved = (String, i32, Arc<crate::flow::Flow>);

/// Flows, senders and settings looked up once per call.
struct Lookups {
    account_default_sender: Option<String>,
    /// The engine's context for the account (its `max_wait`, its quiet-hours policy), made
    /// once per call.
    ctx: engine::Ctx,
    /// The flows resolved so far, by the (id or name, version) items named them with: a batch
    /// names few, so a list is searched without making a key for each item.
    flows: Vec<((String, i32), Resolved)>,
    /// Contacts preloaded for a batch (one query per 1,000 instead of one per item).
    contacts: FastMap<String, ContactRow>,
    senders: FastMap<String, crate::store::senders::SenderRow>,
}

async fn lookups(core: &Core, account_id: &str) -> Result<Lookups, ServiceError> {
    let account = store::accounts::find(&core.db, account_id)
        .await?
        .ok_or_else(|| ServiceError::NotFound {
            what: "account",
            id: account_id.to_string(),
        })?;
    Ok(Lookups {
        ctx: ctx_for(
            account.max_wait.as_deref(),
            account.quiet_hours.as_deref(),
            &core.quiet_hours,
        ),
        account_default_sender: account.default_sender_id,
        flows: Vec::new(),
        contacts: FastMap::default(),
        senders: FastMap::default(),
    })
}

/// The flow an item names, parsed and checked runnable.
async fn resolve_flow(
    core: &Core,
    account_id: &str,
    look: &mut Lookups,
    id: &str,
    version: i32,
) -> Result<Resolved, ServiceError> {
    if let Some((_, found)) = look
        .flows
        .iter()
        .find(|((named, v), _)| named == id && *v == version)
    {
        return Ok(found.clone());
    }
    let stored = store::flows::get(&core.db, account_id, id, version)
        .await?
        .ok_or_else(|| ServiceError::NotFound {
            what: "flow",
            id: if version == 0 {
                id.to_string()
            } else {
                format!("{id}@{version}")
            },
        })?;
    let key = (stored.flow.id.clone(), stored.version.version);
    let flow = core
        .flows
        .get_or_parse(&key, Some(&stored.version.definition))
        .map_err(|m| {
            ServiceError::FailedPrecondition(format!(
                "flow `{}` version {} cannot run: {m}",
                stored.flow.name, key.1
            ))
        })?;
    engine::enrollable(&flow).map_err(|m| {
        ServiceError::FailedPrecondition(format!(
            "flow `{}` version {} cannot be enrolled in: {m}",
            stored.flow.name, key.1
        ))
    })?;
    if flow.has_experiments() && !look.ctx.stopped.contains_key(&key.0) {
        // Its step experiments assign by which variants are stopped.
        let stopped = store::variant_states::stopped_of_flow(&core.db, account_id, &key.0).await?;
        let mut all = (*look.ctx.stopped).clone();
        all.insert(key.0.clone(), stopped);
        look.ctx.stopped = Arc::new(all);
    }
    let found = (key.0, key.1, flow);
    look.flows.push(((id.to_string(), version), found.clone()));
    Ok(found)
}

/// Checks one item and runs the interpreter's `Start` on it (nothing stored yet).
async fn prepare(
    core: &Core,
    account_id: &str,
    look: &mut Lookups,
    item: EnrollInput,
    now: DateTime<Utc>,
) -> Result<Prepared, ServiceError> {
    let mut problems = Violations::default();
    if item.contact_id.trim().is_empty() {
        problems.push(Violation::new(
            "contact_id",
            Code::BadSchema,
            "give the id of the contact to enroll (upsert it with ContactService first)",
        ));
    }
    if item.flow_id.trim().is_empty() {
        problems.push(Violation::new(
            "flow_id",
            Code::BadSchema,
            "give the flow's id or name",
        ));
    }
    if item.flow_version < 0 {
        problems.push(Violation::new(
            "flow_version",
            Code::BadSchema,
            "versions start at 1 (0 means the latest)",
        ));
    }
    problems.check(fields::check_text(
        "contact_id",
        &item.contact_id,
        Limit::Id,
    ));
    problems.check(fields::check_text("flow_id", &item.flow_id, Limit::Name));
    problems.check(fields::check_optional(
        "sender_id",
        &item.sender_id,
        Limit::Id,
    ));
    problems.check(fields::check_optional(
        "client_key",
        &item.client_key,
        Limit::Name,
    ));
    let input: serde_json::Value = if item.input.trim().is_empty() {
        serde_json::json!({})
    } else {
        match serde_json::from_str(&item.input) {
            Ok(v @ serde_json::Value::Object(_)) => v,
            Ok(_) => {
                problems.push(Violation::new(
                    "input",
                    Code::BadSchema,
                    "the input must be a JSON object such as {\"demo_at\": \"2026-12-10T15:00:00Z\"}",
                ));
                serde_json::Value::Null
            }
            Err(e) => {
                problems.push(Violation::new(
                    "input",
                    Code::BadSchema,
                    format!(
                        "the input is not JSON: {e} (line {}, column {})",
                        e.line(),
                        e.column()
                    ),
                ));
                serde_json::Value::Null
            }
        }
    };
    problems.finish()?;

    let (flow_id, version, flow) =
        resolve_flow(core, account_id, look, &item.flow_id, item.flow_version).await?;
    fields::check_input("input", &flow.input, &input).map_err(ServiceError::Invalid)?;
    // The contact and the sender are read where they are kept, not copied for each item.
    let fetched;
    let contact = match look.contacts.get(&item.contact_id) {
        Some(c) => c,
        None => {
            fetched = store::contacts::get(&core.db, account_id, &item.contact_id)
                .await?
                .ok_or_else(|| ServiceError::NotFound {
                    what: "contact",
                    id: item.contact_id.clone(),
                })?;
            &fetched
        }
    };
    let sender_id = if item.sender_id.is_empty() {
        look.account_default_sender.clone().ok_or_else(|| {
            ServiceError::FailedPrecondition(
                "the account has no default sender; name a sender_id or make one the default \
                 with SenderService.UpsertSender(make_default)"
                    .into(),
            )
        })?
    } else {
        item.sender_id.clone()
    };
    if !look.senders.contains_key(&sender_id) {
        let s = store::senders::get(&core.db, account_id, &sender_id)
            .await?
            .ok_or_else(|| ServiceError::NotFound {
                what: "sender",
                id: sender_id.clone(),
            })?;
        look.senders.insert(sender_id.clone(), s);
    }
    let sender = &look.senders[&sender_id];

    let id = store::new_id("en");
    let start = |input| {
        EnrollmentState::new(
            id.clone(),
            FlowRef {
                id: flow_id.clone(),
                version: version as u32,
            },
            contact.view(),
            sender.tz.clone(),
            input,
        )
    };
    // Stepped in place; the copy the engine falls back to when the flow fails at once is made
    // only then.
    let again = input.clone();
    let state = Box::new(start(input));
    let before = engine::state::Before::of(&state);
    let ctx = &look.ctx;
    // A capped sender's first step never reserves here: it is handed to the planner, which
    // reserves under the sender's lock (docs/capacity.md).
    let caps = sender
        .caps
        .as_deref()
        .and_then(|c| store::capacity::parse_caps(&sender.tz, c))
        .map(|(caps, _)| caps);
    let cap = match &caps {
        Some(caps) => engine::CapacityView::HandOff(caps),
        None => engine::CapacityView::Unlimited,
    };
    let (after, effects) = engine::step_owned(
        state,
        || Box::new(start(again)),
        &flow,
        Input::Start,
        now,
        ctx,
        cap,
        Vec::with_capacity(4),
    );
    let now_ms = to_millis(now);
    let row = EnrollmentRow {
        id,
        account_id: account_id.to_string(),
        flow_id,
        flow_version: version,
        contact_id: contact.id.clone(),
        sender_id,
        status: before.status.as_str().to_string(),
        client_key: Some(item.client_key).filter(|k| !k.is_empty()),
        // Written when the row is stored (`Writes::add_created`).
        state: Vec::new(),
        next_run_at: None,
        journey_seq: 0,
        journey_xid: 0,
        created_at: now_ms,
        updated_at: now_ms,
        allow_duplicate: item.allow_duplicate,
    };
    Ok(Prepared {
        row,
        before,
        after,
        effects,
    })
}

/// What writing one item found.
enum Outcome {
    /// Made by this call: the item's own row and state are the enrollment ([`answer`]), so
    /// nothing is copied for the answer.
    Created,
    /// Stored before this call.
    Existing(Box<EnrollmentRow>),
    /// The same client key as the earlier item at this position, which this call made.
    SameAs(usize),
    Duplicate(String),
}

/// The answers of `items`, written with `outcomes` (one each, in order).
fn answer(items: Vec<Prepared>, outcomes: Vec<Outcome>) -> Vec<BatchResult> {
    let mut answers: Vec<BatchResult> = Vec::with_capacity(items.len());
    for (p, outcome) in items.into_iter().zip(outcomes) {
        answers.push(match outcome {
            Outcome::Created => Ok((Enrollment::from_parts(p.row, p.after), true)),
            Outcome::Existing(row) => Enrollment::from_row(*row).map(|e| (e, false)),
            Outcome::SameAs(first) => match &answers[first] {
                Ok((e, _)) => Ok((e.clone(), false)),
                Err(_) => unreachable!("an item made by this call answers with its enrollment"),
            },
            Outcome::Duplicate(m) => Err(ServiceError::Conflict(m)),
        });
    }
    answers
}

/// How [`write_prepared`] finds the live enrollments an item would duplicate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LiveCheck {
    /// Reads them only in flows with a live enrollment made with `allow_duplicate` (usually
    /// none) and leaves the rest to the unique index of live enrollments, which holds every
    /// live enrollment made without it: a write that would duplicate one is refused whole,
    /// and [`write_items`] writes it again with [`LiveCheck::Read`]. Reading every item's
    /// contact first cost a tenth of BatchEnroll's throughput, for refusals that are rare.
    Index,
    /// Reads the live enrollments of every item's contact, so each duplicate is answered
    /// ALREADY_EXISTS alone while the others are written.
    Read,
}

/// Writes prepared items in one transaction: an item whose client key exists returns the
/// stored enrollment; one that would duplicate an active enrollment is refused (unless
/// allowed).
///
/// The checks read before the insert; the unique indexes (on PostgreSQL
/// `enrollment_keys_client_key` and `enrollment_keys_contact`, on SQLite
/// `enrollments_client_key` and `enrollments_one_live`) refuse what a concurrent call
/// committed in between, or, with [`LiveCheck::Index`], a duplicate that was not read, and
/// [`write_items`] then runs this again, when the reads see the winner.
async fn write_prepared(
    tx: &mut Tx,
    account_id: &str,
    items: &[Prepared],
    now: DateTime<Utc>,
    check: LiveCheck,
) -> Result<(Vec<Outcome>, crate::store::Committed), StoreError> {
    // Only the items that refuse a duplicate need their contacts' live enrollments, and with
    // `LiveCheck::Index` only those in a flow where the unique index does not find them all.
    let refusing = items.iter().filter(|p| !p.row.allow_duplicate);
    let checked: Vec<&str> = match check {
        LiveCheck::Read => refusing.map(|p| p.row.contact_id.as_str()).collect(),
        LiveCheck::Index => {
            let mut flows: Vec<&str> = refusing.clone().map(|p| p.row.flow_id.as_str()).collect();
            flows.sort_unstable();
            flows.dedup();
            let unindexed = tx.flows_with_live_duplicates(account_id, &flows).await?;
            refusing
                .filter(|p| unindexed.contains(&p.row.flow_id))
                .map(|p| p.row.contact_id.as_str())
                .collect()
        }
    };
    let live = tx.live_enrollments_of(account_id, &checked).await?;
    // Keyed by borrowed text: no copy of the ids per item.
    let mut active: FastMap<(&str, &str), &str> = live
        .iter()
        .map(|(contact, flow, id)| ((contact.as_str(), flow.as_str()), id.as_str()))
        .collect();
    // Keys after live enrollments: on PostgreSQL each statement sees what committed before it,
    // so a concurrent call with the same key that committed between the two reads is found by
    // its key (the same enrollment again), never only as a duplicate (ALREADY_EXISTS).
    let keys: Vec<&str> = items
        .iter()
        .filter_map(|p| p.row.client_key.as_deref())
        .collect();
    let by_key: FastMap<String, EnrollmentRow> = tx
        .enrollments_by_client_key(account_id, &keys)
        .await?
        .into_iter()
        .filter_map(|r| r.client_key.clone().map(|k| (k, r)))
        .collect();
    let mut seen_keys: FastMap<&str, usize> = FastMap::default();
    let mut writes = Writes::for_steps(items.len());
    let mut outcomes = Vec::with_capacity(items.len());
    for (i, p) in items.iter().enumerate() {
        if let Some(key) = &p.row.client_key {
            if let Some(existing) = by_key.get(key) {
                outcomes.push(Outcome::Existing(Box::new(existing.clone())));
                continue;
            }
            if let Some(&first) = seen_keys.get(key.as_str()) {
                // The same key twice in one batch: the second is the first again.
                outcomes.push(match &outcomes[first] {
                    Outcome::Created => Outcome::SameAs(first),
                    Outcome::Existing(r) => Outcome::Existing(r.clone()),
                    Outcome::SameAs(f) => Outcome::SameAs(*f),
                    Outcome::Duplicate(m) => Outcome::Duplicate(m.clone()),
                });
                continue;
            }
            seen_keys.insert(key, i);
        }
        let pair = (p.row.contact_id.as_str(), p.row.flow_id.as_str());
        if !p.row.allow_duplicate {
            if let Some(other) = active.get(&pair) {
                outcomes.push(Outcome::Duplicate(format!(
                    "contact `{}` already has an active enrollment `{other}` in this flow; \
                     set allow_duplicate to enroll it again",
                    p.row.contact_id
                )));
                continue;
            }
        }
        if p.after.status.is_finished() {
            active.remove(&pair);
        } else {
            active.insert(pair, &p.row.id);
        }
        writes.add_created(p.row.clone(), &p.before, &p.after, &p.effects, now);
        outcomes.push(Outcome::Created);
    }
    // In key order: concurrent batches then take the unique indexes' entries in one order,
    // so one waits for the other instead of both deadlocking (PostgreSQL).
    writes.enrollments.sort_by(|a, b| {
        (&a.contact_id, &a.flow_id, &a.client_key).cmp(&(&b.contact_id, &b.flow_id, &b.client_key))
    });
    tx.write_all(&writes).await?;
    Ok((outcomes, writes.committed()))
}

/// How many times [`write_items`] writes a chunk that a concurrent call's commit refused.
const WRITE_ATTEMPTS: usize = 5;

/// Writes `items` in one transaction, again when a unique index refused it (an item
/// duplicates a live enrollment not read first, see [`LiveCheck`], or a concurrent call
/// committed the same client key or a live enrollment of the same contact in the same flow:
/// the next attempt's reads find it, the same enrollment, or ALREADY_EXISTS) or another
/// transaction's conflict aborted it (serialization failure, deadlock).
async fn write_items(
    core: &Core,
    account_id: &str,
    items: &[Prepared],
    now: DateTime<Utc>,
) -> Result<Vec<Outcome>, StoreError> {
    let mut attempt = 1;
    let mut check = LiveCheck::Index;
    loop {
        let mut tx = core.db.begin().await?;
        let written = write_prepared(&mut tx, account_id, items, now, check).await;
        match tx.finish(written).await {
            Ok((outcomes, wake)) => {
                core.announce(wake).await;
                return Ok(outcomes);
            }
            // A duplicate the index refused: the same items again, reading what they duplicate
            // (not counted as an attempt: nothing concurrent refused it).
            Err(e) if e.is_unique_violation() && check == LiveCheck::Index => {
                check = LiveCheck::Read
            }
            Err(e) if (e.is_unique_violation() || e.is_conflict()) && attempt < WRITE_ATTEMPTS => {
                attempt += 1
            }
            Err(e) if e.is_unique_violation() => {
                return Err(StoreError::Contention(format!(
                    "enrolling was refused by a concurrent enrollment {WRITE_ATTEMPTS} times: {e}"
                )))
            }
            Err(e) => return Err(e),
        }
    }
}

/// `Enroll`: returns the enrollment and whether this call created it.
pub async fn enroll(
    core: &Core,
    account_id: &str,
    item: EnrollInput,
) -> Result<(Enrollment, bool), ServiceError> {
    let now = core.clock.now();
    let mut look = lookups(core, account_id).await?;
    let prepared = prepare(core, account_id, &mut look, item, now).await?;
    let outcomes = write_items(core, account_id, std::slice::from_ref(&prepared), now).await?;
    answer(vec![prepared], outcomes).remove(0)
}

/// One item's answer in `BatchEnroll`.
pub type BatchResult = Result<(Enrollment, bool), ServiceError>;

/// `BatchEnroll`: checks and writes the items 1,000 at a time, each chunk in up to [`PARTS`]
/// transactions with set-based inserts. Results are in the order of the items; a refused item
/// fails alone.
///
/// A chunk's items are split by contact into parts written side by side, each part handed to
/// its own task as soon as it is prepared: the engine prepares the next part while the
/// database writes the last, and the database writes parts on every core (one caller's calls
/// left a core idle). The fewer calls run at once, the more parts: calls side by side
/// keep the cores busy already. Every item of a contact is in the same part, in call order, so
/// a contact enrolled twice in one call is the same first-wins duplicate it was; a client key
/// given in more than one part puts the chunk in one part. A part the database fails answers
/// each of its items with that failure, and the items after its chunk with it too (not tried);
/// the parts that committed answer theirs, so an item answered with an error was not stored
/// (or its answer says it may have been), and a retry of the refused items is safe.
pub async fn batch_enroll(
    core: &Core,
    account_id: &str,
    items: Vec<EnrollInput>,
) -> Result<Vec<BatchResult>, ServiceError> {
    if items.len() > MAX_BATCH {
        return Err(ServiceError::Invalid(vec![Violation::new(
            "items",
            Code::BadSchema,
            format!(
                "{} items in one call; send at most {MAX_BATCH} per BatchEnroll",
                items.len()
            ),
        )]));
    }
    let now = core.clock.now();
    let mut look = lookups(core, account_id).await?;
    let mut results: Vec<BatchResult> = Vec::with_capacity(items.len());
    let mut items = items.into_iter().peekable();
    let (_running, calls) = Running::start();
    // A chunk at a time: checked, prepared and written before the next is prepared, so a
    // call of 10,000 holds the engine's output for 1,000, not for all of them.
    while items.peek().is_some() {
        let chunk: Vec<EnrollInput> = items.by_ref().take(BATCH_CHUNK).collect();
        let mut answers: Vec<Option<BatchResult>> = chunk.iter().map(|_| None).collect();
        let mut writing = tokio::task::JoinSet::new();
        let parts = parts(&chunk, PARTS / calls);
        // Every part's contacts are read at once, each on a connection of its own: the first
        // part is prepared as soon as its contacts arrive, while the others are still read
        // (one read of the whole chunk kept a lone caller's engine waiting for all of them).
        let mut reads: std::collections::VecDeque<_> = parts
            .iter()
            .map(|part| {
                let ids: Vec<String> = part.iter().map(|&i| chunk[i].contact_id.clone()).collect();
                let (core, account_id) = (core.clone(), account_id.to_string());
                tokio::spawn(
                    async move { store::contacts::get_many(&core.db, &account_id, &ids).await },
                )
            })
            .collect();
        let mut chunk: Vec<Option<EnrollInput>> = chunk.into_iter().map(Some).collect();
        let mut unread = None;
        for part in parts {
            let read = reads.pop_front().expect("one read a part");
            let read = match read.await {
                Ok(read) => read.map_err(ServiceError::from),
                Err(e) => Err(ServiceError::Internal(format!(
                    "reading a BatchEnroll part's contacts stopped: {e}"
                ))),
            };
            let rows = match read {
                Ok(rows) => rows,
                Err(e) => {
                    // Nothing of this part or the next was tried; the parts before it are
                    // written and answer as usual.
                    unread = Some(e);
                    break;
                }
            };
            look.contacts.reserve(rows.len());
            look.contacts
                .extend(rows.into_iter().map(|r| (r.id.clone(), r)));
            let mut positions = Vec::with_capacity(part.len());
            let mut ready = Vec::with_capacity(part.len());
            for i in part {
                let item = chunk[i].take().expect("each item is in one part");
                match prepare(core, account_id, &mut look, item, now).await {
                    Ok(p) => {
                        positions.push(i);
                        ready.push(p);
                    }
                    Err(e) => answers[i] = Some(Err(e)),
                }
            }
            if ready.is_empty() {
                continue;
            }
            let (core, account_id) = (core.clone(), account_id.to_string());
            writing.spawn(async move {
                let answers = write_items(&core, &account_id, &ready, now)
                    .await
                    .map(|outcomes| answer(ready, outcomes));
                (positions, answers)
            });
        }
        reads.iter().for_each(|r| r.abort());
        look.contacts.clear();
        // A part that failed answers its own items with the failure (its transaction rolled
        // back: nothing of them is stored, or, for a connection lost as it committed, the
        // answer says they may be); the parts that committed answer their items.
        let mut failure = None;
        while let Some(joined) = writing.join_next().await {
            let (positions, written) = joined
                .map_err(|e| ServiceError::Internal(format!("a BatchEnroll write stopped: {e}")))?;
            let written = match written {
                Ok(written) => written,
                Err(e) => {
                    for pos in positions {
                        answers[pos] = Some(Err(item_failure(&e)));
                    }
                    failure = Some(e);
                    continue;
                }
            };
            for (pos, answer) in positions.into_iter().zip(written) {
                answers[pos] = Some(answer);
            }
        }
        if let Some(e) = &unread {
            // The parts not read, and the items after this chunk, were not tried.
            for (answer, item) in answers.iter_mut().zip(&chunk) {
                if item.is_some() {
                    *answer = Some(Err(untried_item(e)));
                }
            }
        }
        results.extend(answers.into_iter().map(|a| a.expect("every item answered")));
        if let Some(e) = unread {
            results.extend(items.by_ref().map(|_| Err(untried_item(&e))));
            break;
        }
        if let Some(e) = failure {
            // The database failed this chunk: the rest are not tried, and answer the same.
            results.extend(items.by_ref().map(|_| Err(item_failure(&e))));
        }
    }
    Ok(results)
}

/// An item's answer when reading what the chunk needs failed before it was tried.
fn untried_item(e: &ServiceError) -> ServiceError {
    match e {
        ServiceError::Store(e) => item_failure(e),
        ServiceError::Unavailable(why) => ServiceError::Unavailable(why.clone()),
        other => ServiceError::Internal(format!("preparing a BatchEnroll chunk: {other}")),
    }
}

/// One item's answer when the write of its part (or of an earlier part) failed: the failure's
/// meaning, item by item (`UNAVAILABLE`, `ABORTED`, …), as the whole call would have answered.
fn item_failure(e: &StoreError) -> ServiceError {
    if let Some(advice) = e.retry_advice() {
        return ServiceError::Unavailable(advice.to_string());
    }
    match e {
        StoreError::Unwritable(why) => ServiceError::Store(StoreError::Unwritable(why.clone())),
        StoreError::Contention(why) => ServiceError::Store(StoreError::Contention(why.clone())),
        other => ServiceError::Internal(format!("writing a BatchEnroll part: {other}")),
    }
}

/// How many transactions BatchEnroll writes side by side in this process, over all calls: a
/// lone call splits its chunks into this many parts, and as more calls run each splits into
/// fewer (more parts than cores only add commits and smaller statements).
const PARTS: usize = 4;

/// BatchEnroll calls running in this process.
static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Counts a call while it runs.
struct Running;

impl Running {
    fn start() -> (Running, usize) {
        let now = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        (Running, now)
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        CALLS.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
    }
}

/// The positions of `chunk`'s items in each of (at most) `n` parts: by contact (every item of
/// a contact in one part, in call order), or all in one part when a client key is given in two
/// parts.
fn parts(chunk: &[EnrollInput], n: usize) -> Vec<Vec<usize>> {
    use std::hash::BuildHasher;
    // The same split every time for the same contacts (a fixed seed).
    let hasher = foldhash::fast::FixedState::default();
    let n = n.max(1);
    let mut parts: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut key_part: FastMap<&str, usize> = FastMap::default();
    for (i, item) in chunk.iter().enumerate() {
        let part = (hasher.hash_one(item.contact_id.as_str()) % n as u64) as usize;
        if !item.client_key.is_empty() && *key_part.entry(&item.client_key).or_insert(part) != part
        {
            return vec![(0..chunk.len()).collect()];
        }
        parts[part].push(i);
    }
    parts.retain(|p| !p.is_empty());
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(contact: &str, key: &str) -> EnrollInput {
        EnrollInput {
            contact_id: contact.into(),
            client_key: key.into(),
            ..Default::default()
        }
    }

    #[test]
    fn a_contacts_items_share_a_part_in_call_order() {
        let chunk: Vec<EnrollInput> = (0..200)
            .map(|i| item(&format!("c{}", i % 37), ""))
            .collect();
        let split = parts(&chunk, 4);
        assert!(split.len() > 1 && split.len() <= 4);
        let mut seen: Vec<usize> = split.iter().flatten().copied().collect();
        seen.sort();
        assert_eq!(seen, (0..200).collect::<Vec<_>>(), "every item once");
        for part in &split {
            assert!(
                part.windows(2).all(|w| w[0] < w[1]),
                "call order within a part"
            );
        }
        let part_of = |i: usize| split.iter().position(|p| p.contains(&i)).unwrap();
        for i in 0..200 {
            assert_eq!(part_of(i), part_of(i % 37), "contact c{} split", i % 37);
        }
    }

    #[test]
    fn a_client_key_in_two_parts_keeps_the_chunk_whole() {
        let chunk: Vec<EnrollInput> = (0..50).map(|i| item(&format!("c{i}"), "")).collect();
        let apart = parts(&chunk, 4);
        let (a, b) = (apart[0][0], apart[1][0]);
        let mut keyed = chunk.clone();
        keyed[a].client_key = "same".into();
        keyed[b].client_key = "same".into();
        assert_eq!(parts(&keyed, 4), vec![(0..50).collect::<Vec<_>>()]);
        assert_eq!(parts(&chunk, 1), vec![(0..50).collect::<Vec<_>>()]);
        assert_eq!(parts(&chunk, 0), vec![(0..50).collect::<Vec<_>>()]);
    }
}
