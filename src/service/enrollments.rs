//! Enrollments (SPEC §5.1): enroll (one or a batch), operator actions (pause, resume, exit,
//! move), reads, and the journey (§5.8).
//!
//! Every change goes through the interpreter: the service loads the stored state, calls
//! [`crate::engine::step`] with the operator's input, and writes the new state and its effects
//! (journey, dispatches, tasks) in one transaction, the enrollment row locked on PostgreSQL so a
//! planner on another replica cannot wake it meanwhile. An input the interpreter rejects (resume
//! when not paused, move to an unknown step) is refused with FAILED_PRECONDITION and nothing is
//! written.

use super::{next_page_token, ServiceError, Violation, Violations};
use crate::api::AppState;
use crate::auth::{Principal, Scope};
use crate::clock::{from_millis, to_millis};
use crate::code::Code;
use crate::engine::{self, ContactView, Effect, EnrollmentState, FlowRef, Input, JourneyEntry};
use crate::flow::model::check_input;
use crate::planner::{self, FlowCache};
use crate::store::contacts::ContactRow;
use crate::store::enrollments::{EnrollmentRow, JourneyRow, Writes};
use crate::store::schema::{enrollments, journey, signals as signal_table};
use crate::store::signals::SignalRow;
use crate::store::{self, Conn, StoreError};
use crate::write_all;
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::{AsyncConnection, RunQueryDsl};
use std::collections::HashMap;
use std::sync::Arc;

/// The most items one list or journey page returns.
pub const MAX_PAGE_SIZE: i64 = 500;
/// The page size when the caller gives none.
pub const DEFAULT_PAGE_SIZE: i64 = 50;
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

/// An enrollment as the API shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Enrollment {
    pub row: EnrollmentRow,
    pub state: EnrollmentState,
}

impl Enrollment {
    fn from_row(row: EnrollmentRow) -> Result<Enrollment, ServiceError> {
        let state = row.engine_state()?;
        Ok(Enrollment { row, state })
    }
}

/// One journey entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub seq: i64,
    pub at: DateTime<Utc>,
    pub kind: String,
    pub detail: String,
}

/// Refuses an enrollment-scoped token that names another enrollment.
pub fn check_scope(who: &Principal, enrollment_id: &str) -> Result<(), ServiceError> {
    match &who.scope {
        Scope::Full => Ok(()),
        Scope::Enrollment(own) if own == enrollment_id => Ok(()),
        Scope::Enrollment(own) => Err(ServiceError::Forbidden(format!(
            "this token is scoped to enrollment `{own}`; it cannot act on `{enrollment_id}`"
        ))),
    }
}

/// A checked item, ready to be written.
struct Prepared {
    row: EnrollmentRow,
    before: EnrollmentState,
    after: EnrollmentState,
    effects: Vec<Effect>,
}

/// Flows, senders and settings looked up once per call.
struct Lookups {
    account_default_sender: Option<String>,
    max_wait: Option<String>,
    flows: HashMap<(String, i32), (String, i32, Arc<crate::flow::Flow>)>,
    /// Contacts preloaded for a batch (one query per 1,000 instead of one per item).
    contacts: HashMap<String, ContactRow>,
    senders: HashMap<String, crate::store::senders::SenderRow>,
}

impl Lookups {
    /// Loads the contacts `ids` names, in chunks, into the lookup.
    async fn preload_contacts(
        &mut self,
        state: &AppState,
        account_id: &str,
        ids: &[String],
    ) -> Result<(), ServiceError> {
        use crate::store::schema::contacts;
        let mut ids = ids.to_vec();
        ids.sort();
        ids.dedup();
        for chunk in ids.chunks(1_000) {
            let conn = state.db.conn().await?;
            let rows: Vec<ContactRow> = crate::with_conn!(conn, c => contacts::table
                .filter(contacts::account_id.eq(account_id))
                .filter(contacts::id.eq_any(chunk))
                .select(ContactRow::as_select())
                .load(c)
                .await)
            .map_err(StoreError::from)?;
            self.contacts
                .extend(rows.into_iter().map(|r| (r.id.clone(), r)));
        }
        Ok(())
    }
}

fn contact_view(c: &ContactRow) -> ContactView {
    ContactView {
        id: c.id.clone(),
        email: c.email.clone(),
        phone: c.phone.clone(),
        tz: c.tz.clone(),
        opted_out: serde_json::from_str(&c.opted_out).unwrap_or_default(),
        attributes: serde_json::from_str(&c.attributes).unwrap_or_default(),
    }
}

async fn lookups(state: &AppState, account_id: &str) -> Result<Lookups, ServiceError> {
    let account = store::accounts::find(&state.db, account_id)
        .await?
        .ok_or_else(|| ServiceError::NotFound {
            what: "account",
            id: account_id.to_string(),
        })?;
    Ok(Lookups {
        account_default_sender: account.default_sender_id,
        max_wait: account.max_wait,
        flows: HashMap::new(),
        contacts: HashMap::new(),
        senders: HashMap::new(),
    })
}

/// The flow an item names, parsed and checked runnable.
async fn resolve_flow(
    state: &AppState,
    cache: &FlowCache,
    account_id: &str,
    look: &mut Lookups,
    id: &str,
    version: i32,
) -> Result<(String, i32, Arc<crate::flow::Flow>), ServiceError> {
    if let Some(found) = look.flows.get(&(id.to_string(), version)) {
        return Ok(found.clone());
    }
    let stored = store::flows::get(&state.db, account_id, id, version)
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
    let flow = cache
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
    let found = (key.0, key.1, flow);
    look.flows.insert((id.to_string(), version), found.clone());
    Ok(found)
}

/// Checks one item and runs the interpreter's `Start` on it (nothing stored yet).
async fn prepare(
    state: &AppState,
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
    if item.client_key.len() > 200 {
        problems.push(Violation::new(
            "client_key",
            Code::BadSchema,
            "the client key is longer than 200 characters; use a shorter idempotency key",
        ));
    }
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

    let cache = state.engine.flows.clone();
    let (flow_id, version, flow) = resolve_flow(
        state,
        &cache,
        account_id,
        look,
        &item.flow_id,
        item.flow_version,
    )
    .await?;
    if let Err(mismatches) = check_input(&flow.input, &input) {
        return Err(ServiceError::Invalid(
            mismatches
                .into_iter()
                .map(|m| {
                    let field = if m.field.is_empty() {
                        "input".to_string()
                    } else {
                        format!("input.{}", m.field)
                    };
                    Violation::new(
                        field,
                        Code::BadSchema,
                        format!("{}; the flow's `input` schema declares it", m.message),
                    )
                })
                .collect(),
        ));
    }
    let contact = match look.contacts.get(&item.contact_id) {
        Some(c) => c.clone(),
        None => store::contacts::get(&state.db, account_id, &item.contact_id)
            .await?
            .ok_or_else(|| ServiceError::NotFound {
                what: "contact",
                id: item.contact_id.clone(),
            })?,
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
    let sender = match look.senders.get(&sender_id) {
        Some(s) => s.clone(),
        None => {
            let s = store::senders::get(&state.db, account_id, &sender_id)
                .await?
                .ok_or_else(|| ServiceError::NotFound {
                    what: "sender",
                    id: sender_id.clone(),
                })?;
            look.senders.insert(sender_id.clone(), s.clone());
            s
        }
    };

    let id = store::new_id("en");
    let before = EnrollmentState::new(
        id.clone(),
        FlowRef {
            id: flow_id.clone(),
            version: version as u32,
        },
        contact_view(&contact),
        sender.tz.clone(),
        input,
    );
    let ctx = planner::ctx_for(look.max_wait.as_deref());
    let (after, effects) = engine::step(&before, &flow, Input::Start, now, &ctx);
    let now_ms = to_millis(now);
    let row = EnrollmentRow {
        id,
        account_id: account_id.to_string(),
        flow_id,
        flow_version: version,
        contact_id: contact.id,
        sender_id,
        status: before.status.as_str().to_string(),
        client_key: Some(item.client_key).filter(|k| !k.is_empty()),
        state: String::new(),
        next_run_at: None,
        journey_seq: 0,
        created_at: now_ms,
        updated_at: now_ms,
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
    Created(EnrollmentRow),
    Existing(EnrollmentRow),
    Duplicate(String),
}

/// Writes prepared items in one transaction: an item whose client key exists returns the
/// stored enrollment; one that would duplicate an active enrollment is refused (unless
/// allowed). Evaluates to `Result<Vec<Outcome>, diesel::result::Error>`.
macro_rules! write_prepared {
    ($mode:ident: $c:expr, $account:expr, $items:expr, $allow:expr, $now:expr) => {{
        let items: &[Prepared] = $items;
        let keys: Vec<&str> = items
            .iter()
            .filter_map(|p| p.row.client_key.as_deref())
            .collect();
        let existing_keys: Vec<EnrollmentRow> = if keys.is_empty() {
            Vec::new()
        } else {
            enrollments::table
                .filter(enrollments::account_id.eq($account))
                .filter(enrollments::client_key.eq_any(&keys))
                .select(EnrollmentRow::as_select())
                .load($c)
                .await?
        };
        let by_key: HashMap<String, EnrollmentRow> = existing_keys
            .into_iter()
            .filter_map(|r| r.client_key.clone().map(|k| (k, r)))
            .collect();
        // Only the items that refuse a duplicate need their contacts' active enrollments. The
        // query names contacts only (their index is selective); a flow filter made PostgreSQL
        // walk the flow's index, every enrollment of the flow for each batch.
        let checked: Vec<&Prepared> = items
            .iter()
            .zip($allow.iter())
            .filter(|(_, allow)| !**allow)
            .map(|(p, _)| p)
            .collect();
        let active: Vec<(String, String, String)> = if checked.is_empty() {
            Vec::new()
        } else {
            let contact_ids: Vec<&str> =
                checked.iter().map(|p| p.row.contact_id.as_str()).collect();
            enrollments::table
                .filter(enrollments::account_id.eq($account))
                .filter(enrollments::contact_id.eq_any(&contact_ids))
                .filter(enrollments::status.eq_any(["active", "paused"]))
                .select((
                    enrollments::contact_id,
                    enrollments::flow_id,
                    enrollments::id,
                ))
                .load($c)
                .await?
        };
        let mut active: HashMap<(String, String), String> = active
            .into_iter()
            .map(|(contact, flow, id)| ((contact, flow), id))
            .collect();
        let mut seen_keys: HashMap<String, usize> = HashMap::new();
        let mut writes = Writes::default();
        let mut outcomes = Vec::with_capacity(items.len());
        for (i, p) in items.iter().enumerate() {
            if let Some(key) = &p.row.client_key {
                if let Some(existing) = by_key.get(key) {
                    outcomes.push(Outcome::Existing(existing.clone()));
                    continue;
                }
                if let Some(first) = seen_keys.get(key) {
                    // The same key twice in one batch: the second is the first again.
                    let first_row = match &outcomes[*first] {
                        Outcome::Created(r) => r.clone(),
                        Outcome::Existing(r) => r.clone(),
                        Outcome::Duplicate(m) => {
                            outcomes.push(Outcome::Duplicate(m.clone()));
                            continue;
                        }
                    };
                    outcomes.push(Outcome::Existing(first_row));
                    continue;
                }
                seen_keys.insert(key.clone(), i);
            }
            let pair = (p.row.contact_id.clone(), p.row.flow_id.clone());
            if !$allow[i] {
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
                active.insert(pair, p.row.id.clone());
            }
            writes.add_step(p.row.clone(), &p.before, &p.after, &p.effects, $now, None);
            outcomes.push(Outcome::Created(
                writes.enrollments.last().expect("just added").clone(),
            ));
        }
        write_all!($mode: $c, &writes)?;
        Ok::<(Vec<Outcome>, Option<i64>), diesel::result::Error>((outcomes, writes.earliest_wake))
    }};
}

async fn write_items(
    state: &AppState,
    account_id: &str,
    items: &[Prepared],
    allow: &[bool],
    now: DateTime<Utc>,
) -> Result<Vec<Outcome>, StoreError> {
    let conn = state.db.conn().await?;
    let (outcomes, wake) = match conn {
        Conn::Postgres(mut pooled) => {
            let c = &mut *pooled;
            c.transaction(async |c| write_prepared!(pg: c, account_id, items, allow, now))
                .await?
        }
        Conn::Sqlite(mut pooled) => {
            let c = &mut *pooled;
            c.transaction(async |c| write_prepared!(sqlite: c, account_id, items, allow, now))
                .await?
        }
    };
    planner::announce(state, wake).await;
    Ok(outcomes)
}

/// `Enroll`: returns the enrollment and whether this call created it.
pub async fn enroll(
    state: &AppState,
    account_id: &str,
    item: EnrollInput,
) -> Result<(Enrollment, bool), ServiceError> {
    let now = state.clock.now();
    let mut look = lookups(state, account_id).await?;
    let allow = [item.allow_duplicate];
    let prepared = prepare(state, account_id, &mut look, item, now).await?;
    let outcome = match write_items(
        state,
        account_id,
        std::slice::from_ref(&prepared),
        &allow,
        now,
    )
    .await
    {
        Ok(mut o) => o.remove(0),
        // Two concurrent enrolls with one client key: the loser finds the winner's row.
        Err(StoreError::Query(diesel::result::Error::DatabaseError(
            diesel::result::DatabaseErrorKind::UniqueViolation,
            _,
        ))) if prepared.row.client_key.is_some() => {
            let key = prepared.row.client_key.clone().unwrap_or_default();
            let conn = state.db.conn().await?;
            let row = crate::with_conn!(conn, c => enrollments::table
                .filter(enrollments::account_id.eq(account_id))
                .filter(enrollments::client_key.eq(&key))
                .select(EnrollmentRow::as_select())
                .first(c)
                .await)
            .map_err(StoreError::from)?;
            Outcome::Existing(row)
        }
        Err(e) => return Err(e.into()),
    };
    match outcome {
        Outcome::Created(row) => Ok((Enrollment::from_row(row)?, true)),
        Outcome::Existing(row) => Ok((Enrollment::from_row(row)?, false)),
        Outcome::Duplicate(message) => Err(ServiceError::Conflict(message)),
    }
}

/// One item's answer in `BatchEnroll`.
pub type BatchResult = Result<(Enrollment, bool), ServiceError>;

/// `BatchEnroll`: checks and writes the items 1,000 at a time, each chunk in one transaction
/// with set-based inserts. Results are in the order of the items; a refused item fails alone.
pub async fn batch_enroll(
    state: &AppState,
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
    let now = state.clock.now();
    let mut look = lookups(state, account_id).await?;
    let mut results: Vec<BatchResult> = Vec::with_capacity(items.len());
    let mut items = items.into_iter().peekable();
    // A chunk at a time: checked, prepared and written before the next is prepared, so a
    // call of 10,000 holds the engine's output for 1,000, not for all of them.
    while items.peek().is_some() {
        let chunk: Vec<EnrollInput> = items.by_ref().take(BATCH_CHUNK).collect();
        let contact_ids: Vec<String> = chunk.iter().map(|i| i.contact_id.clone()).collect();
        look.preload_contacts(state, account_id, &contact_ids)
            .await?;
        let mut answers: Vec<Option<BatchResult>> = Vec::with_capacity(chunk.len());
        let (mut positions, mut ready, mut allow) = (Vec::new(), Vec::new(), Vec::new());
        for (i, item) in chunk.into_iter().enumerate() {
            let allowed = item.allow_duplicate;
            match prepare(state, account_id, &mut look, item, now).await {
                Ok(p) => {
                    positions.push(i);
                    ready.push(p);
                    allow.push(allowed);
                    answers.push(None);
                }
                Err(e) => answers.push(Some(Err(e))),
            }
        }
        look.contacts.clear();
        if !ready.is_empty() {
            let outcomes = write_items(state, account_id, &ready, &allow, now).await?;
            for (&pos, outcome) in positions.iter().zip(outcomes) {
                answers[pos] = Some(match outcome {
                    Outcome::Created(row) => Enrollment::from_row(row).map(|e| (e, true)),
                    Outcome::Existing(row) => Enrollment::from_row(row).map(|e| (e, false)),
                    Outcome::Duplicate(m) => Err(ServiceError::Conflict(m)),
                });
            }
        }
        results.extend(answers.into_iter().map(|a| a.expect("every item answered")));
    }
    Ok(results)
}

/// Why an applied input was refused: the interpreter's `rejected` journey entry, if any.
fn rejection(writes: &Writes) -> Option<String> {
    writes
        .journey
        .iter()
        .find_map(|j| match serde_json::from_str::<JourneyEntry>(&j.detail) {
            Ok(JourneyEntry::Rejected { input, reason }) => {
                Some(format!("cannot {}: {reason}", input.replace('_', " ")))
            }
            _ => None,
        })
}

/// Failure inside an apply transaction.
enum ApplyError {
    Db(diesel::result::Error),
    Service(ServiceError),
}

impl From<diesel::result::Error> for ApplyError {
    fn from(e: diesel::result::Error) -> Self {
        ApplyError::Db(e)
    }
}

/// Applies `input` to one stored enrollment in a transaction (row locked on PostgreSQL) and
/// returns the new row and what was written. With `refuse_rejected`, an input the interpreter
/// rejects is an error and nothing is written.
pub async fn apply_input(
    state: &AppState,
    account_id: &str,
    enrollment_id: &str,
    input: Input,
    refuse_rejected: bool,
) -> Result<(EnrollmentRow, Writes), ServiceError> {
    let (row, writes, _) = apply_input_storing(
        state,
        account_id,
        enrollment_id,
        input,
        refuse_rejected,
        |_, _| Vec::new(),
    )
    .await?;
    Ok((row, writes))
}

/// [`apply_input`], also storing in the same transaction the signals `signals` makes of the new
/// row and the writes (a task outcome's raised events, so a crash cannot lose them); returns
/// them too.
pub async fn apply_input_storing(
    state: &AppState,
    account_id: &str,
    enrollment_id: &str,
    input: Input,
    refuse_rejected: bool,
    signals: impl Fn(&EnrollmentRow, &Writes) -> Vec<SignalRow> + Sync,
) -> Result<(EnrollmentRow, Writes, Vec<SignalRow>), ServiceError> {
    let signals = &signals;
    let now = state.clock.now();
    let flows = state.engine.flows.clone();
    macro_rules! body {
        ($mode:ident: $c:expr, $row:expr) => {{
            let row: Option<EnrollmentRow> = $row;
            let row = row.ok_or_else(|| {
                ApplyError::Service(ServiceError::NotFound {
                    what: "enrollment",
                    id: enrollment_id.to_string(),
                })
            })?;
            let rows = [row];
            let (definitions, ctx) = crate::load_flows_and_ctx!($c, &flows, &rows)?;
            let [row] = rows;
            let account_ctx = ctx.get(&row.account_id).cloned().unwrap_or_default();
            let mut writes = Writes::default();
            planner::apply(
                &mut writes,
                &flows,
                &definitions,
                &account_ctx,
                row,
                input.clone(),
                now,
            )
            .map_err(|e| ApplyError::Service(e.into()))?;
            if refuse_rejected {
                if let Some(reason) = rejection(&writes) {
                    return Err(ApplyError::Service(ServiceError::FailedPrecondition(reason)));
                }
            }
            write_all!($mode: $c, &writes)?;
            let after = writes.enrollments.last().expect("apply writes the enrollment");
            let stored = signals(after, &writes);
            for signal in &stored {
                diesel::insert_into(signal_table::table)
                    .values(signal)
                    .on_conflict_do_nothing()
                    .execute($c)
                    .await?;
            }
            Ok::<_, ApplyError>((writes, stored))
        }};
    }
    macro_rules! find {
        () => {
            enrollments::table
                .filter(enrollments::account_id.eq(account_id))
                .filter(enrollments::id.eq(enrollment_id))
                .select(EnrollmentRow::as_select())
        };
    }
    let conn = state.db.conn().await?;
    let result = match conn {
        Conn::Postgres(mut pooled) => {
            let c = &mut *pooled;
            c.transaction(async |c| {
                let row = find!().for_update().first(c).await.optional()?;
                body!(pg: c, row)
            })
            .await
        }
        Conn::Sqlite(mut pooled) => {
            let c = &mut *pooled;
            c.transaction(async |c| {
                let row = find!().first(c).await.optional()?;
                body!(sqlite: c, row)
            })
            .await
        }
    };
    let (writes, stored) = match result {
        Ok(done) => done,
        Err(ApplyError::Db(e)) => return Err(StoreError::from(e).into()),
        Err(ApplyError::Service(e)) => return Err(e),
    };
    planner::announce(state, writes.earliest_wake).await;
    let row = writes
        .enrollments
        .last()
        .cloned()
        .expect("apply writes the enrollment");
    Ok((row, writes, stored))
}

/// Pause, Resume, Exit, MoveTo: an operator's input.
pub async fn act(
    state: &AppState,
    who: &Principal,
    enrollment_id: &str,
    input: Input,
) -> Result<Enrollment, ServiceError> {
    check_scope(who, enrollment_id)?;
    if let Input::MoveTo { step } = &input {
        if step.trim().is_empty() {
            return Err(ServiceError::Invalid(vec![Violation::new(
                "step",
                Code::BadSchema,
                "name the step to move to (a key of the flow's `steps`)",
            )]));
        }
    }
    let (row, _) = apply_input(state, &who.account_id, enrollment_id, input, true).await?;
    Enrollment::from_row(row)
}

pub async fn get(
    state: &AppState,
    who: &Principal,
    enrollment_id: &str,
) -> Result<Enrollment, ServiceError> {
    check_scope(who, enrollment_id)?;
    let conn = state.db.conn().await?;
    let row = crate::with_conn!(conn, c => enrollments::table
        .filter(enrollments::account_id.eq(&who.account_id))
        .filter(enrollments::id.eq(enrollment_id))
        .select(EnrollmentRow::as_select())
        .first(c)
        .await
        .optional())
    .map_err(StoreError::from)?
    .ok_or_else(|| ServiceError::NotFound {
        what: "enrollment",
        id: enrollment_id.to_string(),
    })?;
    Enrollment::from_row(row)
}

fn page_size(size: i32) -> Result<i64, ServiceError> {
    if size < 0 {
        return Err(ServiceError::Invalid(vec![Violation::new(
            "page.page_size",
            Code::BadSchema,
            "the page size must not be negative (0 means the default, 50)",
        )]));
    }
    Ok(match i64::from(size) {
        0 => DEFAULT_PAGE_SIZE,
        n => n.min(MAX_PAGE_SIZE),
    })
}

/// Filters of `ListEnrollments`; empty means any.
#[derive(Debug, Clone, Default)]
pub struct ListFilter {
    pub flow_id: String,
    pub contact_id: String,
    pub status: String,
}

/// A page of enrollments by id, and the next page's token (the last id).
pub async fn list(
    state: &AppState,
    account_id: &str,
    filter: ListFilter,
    size: i32,
    token: &str,
) -> Result<(Vec<Enrollment>, String), ServiceError> {
    let size = page_size(size)?;
    if !filter.status.is_empty()
        && !["active", "paused", "completed", "exited", "failed"].contains(&filter.status.as_str())
    {
        return Err(ServiceError::Invalid(vec![Violation::new(
            "status",
            Code::BadSchema,
            format!(
                "`{}` is not a status; use active, paused, completed, exited or failed",
                filter.status
            ),
        )]));
    }
    // A flow named by name: its id.
    let flow_id = if filter.flow_id.is_empty() {
        String::new()
    } else {
        match store::flows::get(&state.db, account_id, &filter.flow_id, 0).await? {
            Some(f) => f.flow.id,
            None => filter.flow_id.clone(),
        }
    };
    let conn = state.db.conn().await?;
    let mut rows: Vec<EnrollmentRow> = crate::with_conn!(conn, c => {
        let mut q = enrollments::table
            .filter(enrollments::account_id.eq(account_id))
            .order(enrollments::id.asc())
            .limit(size + 1)
            .select(EnrollmentRow::as_select())
            .into_boxed();
        if !flow_id.is_empty() {
            q = q.filter(enrollments::flow_id.eq(flow_id.clone()));
        }
        if !filter.contact_id.is_empty() {
            q = q.filter(enrollments::contact_id.eq(filter.contact_id.clone()));
        }
        if !filter.status.is_empty() {
            q = q.filter(enrollments::status.eq(filter.status.clone()));
        }
        if !token.is_empty() {
            q = q.filter(enrollments::id.gt(token.to_string()));
        }
        q.load(c).await
    })
    .map_err(StoreError::from)?;
    let next = next_page_token(&mut rows, size, |r| r.id.clone());
    let list = rows
        .into_iter()
        .map(Enrollment::from_row)
        .collect::<Result<Vec<_>, _>>()?;
    Ok((list, next))
}

/// A page of the journey in order; the token is the last seq returned.
pub async fn journey_page(
    state: &AppState,
    who: &Principal,
    enrollment_id: &str,
    size: i32,
    token: &str,
) -> Result<(Vec<Entry>, String), ServiceError> {
    // Also checks the scope and that the enrollment is the account's.
    get(state, who, enrollment_id).await?;
    let size = page_size(size)?;
    let after: i64 = if token.is_empty() {
        0
    } else {
        token.parse().map_err(|_| {
            ServiceError::Invalid(vec![Violation::new(
                "page.page_token",
                Code::BadSchema,
                format!("`{token}` is not a page token of this journey; pass next_page_token back unchanged"),
            )])
        })?
    };
    let conn = state.db.conn().await?;
    let mut rows: Vec<JourneyRow> = crate::with_conn!(conn, c => journey::table
        .filter(journey::enrollment_id.eq(enrollment_id))
        .filter(journey::seq.gt(after))
        .order(journey::seq.asc())
        .limit(size + 1)
        .select(JourneyRow::as_select())
        .load(c)
        .await)
    .map_err(StoreError::from)?;
    let next = next_page_token(&mut rows, size, |r| r.seq.to_string());
    Ok((
        rows.into_iter()
            .map(|r| Entry {
                seq: r.seq,
                at: from_millis(r.at),
                kind: r.kind,
                detail: r.detail,
            })
            .collect(),
        next,
    ))
}
