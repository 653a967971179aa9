//! One engine step on a stored enrollment, turned into rows inside the caller's transaction.
//!
//! Every writer of enrollment state (the planner, enroll, operator actions, signals, task
//! outcomes) goes through [`apply`], so a step means the same wherever it runs: the stored
//! state is decoded, the flow version found (parsed once per process, [`FlowCache`]), the pure
//! interpreter run, and what it did added to a [`Writes`] the caller stores with
//! [`Tx::write_all`](crate::store::Tx::write_all).

use super::flows::{FlowCache, FlowKey};
use crate::capacity::{Book, Caps};
use crate::code::Code;
use crate::engine::state::Before;
use crate::engine::CapacityView;
use crate::engine::{self, Ctx, Effect, EnrollmentState, Input, JourneyEntry, Status};
use crate::store::capacity::SenderKey;
use crate::store::{EnrollmentRow, StoreError, Tx, Writes};
use crate::timing::{Duration, QuietHours};
use chrono::{DateTime, Utc};
use std::collections::HashMap;
use std::sync::Mutex;

/// The distinct senders of `rows`, in order (sorted by reference: only the distinct ones are
/// copied, not one pair of strings per row).
fn sender_keys(rows: &[EnrollmentRow]) -> Vec<SenderKey> {
    let mut keys: Vec<(&str, &str)> = rows
        .iter()
        .map(|r| (r.account_id.as_str(), r.sender_id.as_str()))
        .collect();
    keys.sort_unstable();
    keys.dedup();
    keys.into_iter()
        .map(|(account, sender)| (account.to_string(), sender.to_string()))
        .collect()
}

/// The engine's context from an account's stored `max_wait`, and the quiet-hours policy SMS
/// and calls are timed under (docs/timing.md, "Holiday calendars and quiet hours"). This is the one place execution obtains that policy:
/// the account's `quiet_hours` (set with `AccountService.UpdateAccount`) when it has one, else
/// the server's `--quiet-hours` flag (`NUDGE_QUIET_HOURS`, federal by default, held in
/// [`Core::quiet_hours`](super::Core)).
pub fn ctx_for(
    max_wait: Option<&str>,
    account_quiet_hours: Option<&str>,
    server_quiet_hours: &QuietHours,
) -> Ctx {
    Ctx {
        max_wait: max_wait.and_then(|t| Duration::parse(t).ok()),
        seed: 0,
        // The account's setting (checked when stored) wins; the server's flag is the default.
        quiet_hours: account_quiet_hours
            .and_then(|text| serde_json::from_str(text).ok())
            .and_then(|v| QuietHours::from_json(&v).ok())
            .unwrap_or_else(|| server_quiet_hours.clone()),
        stopped: Default::default(),
    }
}

/// What a transaction reads once before stepping some enrollments: the definitions of the flow
/// versions the cache lacks, and each account's engine context.
#[derive(Debug, Default)]
pub struct StepContext {
    definitions: HashMap<FlowKey, String>,
    /// The parsed flow of the first [`FEW_VERSIONS`] versions the rows run, found once per
    /// batch: a step finds its own among these few by comparison, not through the shared
    /// cache's lock and hash (the rows of other versions still go to the cache).
    versions: Vec<(FlowKey, std::sync::Arc<crate::flow::Flow>)>,
    ctx: crate::store::FastMap<String, Ctx>,
    /// The caps of the rows' senders that have any (docs/capacity.md).
    caps: HashMap<SenderKey, Caps>,
    /// The planner's locked ledgers of those senders ([`StepContext::lock_books`]); without
    /// them a capped step that would go now is handed to the planner.
    books: Option<Mutex<HashMap<SenderKey, Book>>>,
}

impl StepContext {
    /// Reads, with `tx`, what stepping `rows` needs and `flows` does not hold yet.
    pub async fn load(
        tx: &mut Tx,
        flows: &FlowCache,
        rows: &[EnrollmentRow],
        quiet_hours: &QuietHours,
    ) -> Result<StepContext, StoreError> {
        let mut accounts: Vec<&str> = rows.iter().map(|r| r.account_id.as_str()).collect();
        accounts.sort();
        accounts.dedup();
        let settings = tx.account_settings(&accounts).await?;
        Self::load_with_settings(tx, flows, rows, settings, quiet_hours).await
    }

    /// [`StepContext::load`] with the accounts' settings read already (the signal group reads
    /// them in the same round trip as its insert).
    pub async fn load_with_settings(
        tx: &mut Tx,
        flows: &FlowCache,
        rows: &[EnrollmentRow],
        settings: Vec<crate::store::accounts::AccountSettings>,
        quiet_hours: &QuietHours,
    ) -> Result<StepContext, StoreError> {
        let keys = sender_keys(rows);
        let definitions = Self::definitions(tx, flows, rows).await?;
        let mut ctx = Self::ctx_by_account(settings, quiet_hours);
        // Step experiments assign by which variants are stopped: read only for flows that
        // have experiments (none, in most batches), beside the senders' caps (no round trip
        // of its own).
        let mut experimental: Vec<&str> = Vec::new();
        let mut versions: Vec<(FlowKey, std::sync::Arc<crate::flow::Flow>)> = Vec::new();
        // Once per run of rows of one flow version (a batch is mostly one or a few).
        for r in first_of_each_version_run(rows) {
            let Ok(flow) = flow_of(flows, &definitions, r) else {
                continue;
            };
            if flow.has_experiments() && !experimental.contains(&r.flow_id.as_str()) {
                experimental.push(r.flow_id.as_str());
            }
            if versions.len() < FEW_VERSIONS && find_version(&versions, r).is_none() {
                versions.push(((r.flow_id.clone(), r.flow_version), flow));
            }
        }
        let (caps, stopped) = tx.caps_and_stopped(&keys, &experimental).await?;
        if !experimental.is_empty() {
            let stopped = std::sync::Arc::new(stopped);
            for c in ctx.values_mut() {
                c.stopped = stopped.clone();
            }
        }
        Ok(StepContext {
            definitions,
            versions,
            ctx,
            caps: caps.into_iter().map(|(k, (caps, _))| (k, caps)).collect(),
            books: None,
        })
    }

    /// The planner's side: locks the capped senders among the rows and reads their ledgers
    /// (`Tx::lock_books`), so [`apply`] reserves slots in this transaction.
    pub async fn lock_books(&mut self, tx: &mut Tx, now_ms: i64) -> Result<(), StoreError> {
        let keys: Vec<SenderKey> = self.caps.keys().cloned().collect();
        let books = tx.lock_books(&keys, now_ms).await?;
        // Caps read again under the lock: a change committed meanwhile applies now.
        self.caps = books
            .iter()
            .map(|(k, b)| (k.clone(), b.caps.clone()))
            .collect();
        self.books = Some(Mutex::new(books));
        Ok(())
    }

    /// True when some row's sender has caps.
    pub fn has_caps(&self) -> bool {
        !self.caps.is_empty()
    }

    /// True when the sender of `row` has caps.
    pub fn is_capped(&self, row: &EnrollmentRow) -> bool {
        self.caps_of(row).is_some()
    }

    /// The caps of `row`'s sender, if it has any (no key is built when no sender has caps,
    /// the common case).
    fn caps_of(&self, row: &EnrollmentRow) -> Option<(SenderKey, &Caps)> {
        if self.caps.is_empty() {
            return None;
        }
        let key: SenderKey = (row.account_id.clone(), row.sender_id.clone());
        let caps = self.caps.get(&key)?;
        Some((key, caps))
    }

    async fn definitions<'r>(
        tx: &mut Tx,
        flows: &FlowCache,
        rows: impl IntoIterator<Item = &'r EnrollmentRow>,
    ) -> Result<HashMap<FlowKey, String>, StoreError> {
        // Cached versions cost no statement: the common case, after a process's first batch.
        // Asked once per run of rows of one flow version.
        let mut wanted: Vec<&str> = Vec::new();
        for r in first_of_each_version_run(rows) {
            if flows.get(&r.flow_id, r.flow_version).is_none() {
                wanted.push(r.flow_id.as_str());
            }
        }
        wanted.sort();
        wanted.dedup();
        if wanted.is_empty() {
            return Ok(HashMap::new());
        }
        Ok(tx
            .flow_definitions(&wanted)
            .await?
            .into_iter()
            .map(|(id, version, definition)| ((id, version), definition))
            .collect())
    }

    /// The parsed flow of each of `rows` (those that parse): the cache first, then the stored
    /// definitions of the versions it lacks, read in `tx` (no statement when every version is
    /// cached).
    pub async fn flows_of(
        tx: &mut Tx,
        flows: &FlowCache,
        rows: &[&EnrollmentRow],
    ) -> Result<HashMap<FlowKey, std::sync::Arc<crate::flow::Flow>>, StoreError> {
        let definitions = Self::definitions(tx, flows, rows.iter().copied()).await?;
        let mut parsed = HashMap::new();
        for r in rows {
            let key = (r.flow_id.clone(), r.flow_version);
            if parsed.contains_key(&key) {
                continue;
            }
            if let Ok(flow) = flows.get_or_parse(&key, definitions.get(&key).map(String::as_str)) {
                parsed.insert(key, flow);
            }
        }
        Ok(parsed)
    }

    fn ctx_by_account(
        settings: Vec<crate::store::accounts::AccountSettings>,
        quiet_hours: &QuietHours,
    ) -> crate::store::FastMap<String, Ctx> {
        settings
            .into_iter()
            .map(|(id, max_wait, account_quiet)| {
                let ctx = ctx_for(max_wait.as_deref(), account_quiet.as_deref(), quiet_hours);
                (id, ctx)
            })
            .collect()
    }

    /// The engine context of `account_id` (the defaults when its settings were not read).
    pub fn ctx(&self, account_id: &str) -> std::borrow::Cow<'_, Ctx> {
        match self.ctx.get(account_id) {
            Some(ctx) => std::borrow::Cow::Borrowed(ctx),
            None => std::borrow::Cow::Owned(Ctx::default()),
        }
    }
}

/// How many flow versions a [`StepContext`] keeps at hand: a batch mostly runs one or a few,
/// and a longer list would cost more to search than the cache.
const FEW_VERSIONS: usize = 8;

/// The parsed flow of `row`'s version among `versions`, if it is there.
fn find_version(
    versions: &[(FlowKey, std::sync::Arc<crate::flow::Flow>)],
    row: &EnrollmentRow,
) -> Option<std::sync::Arc<crate::flow::Flow>> {
    versions
        .iter()
        .find(|((id, version), _)| *version == row.flow_version && *id == row.flow_id)
        .map(|(_, flow)| flow.clone())
}

/// The parsed flow of `row`'s version: from the cache (looked up by the row's own id), else
/// parsed from `definitions`.
fn flow_of(
    flows: &FlowCache,
    definitions: &HashMap<FlowKey, String>,
    row: &EnrollmentRow,
) -> Result<std::sync::Arc<crate::flow::Flow>, String> {
    if let Some(flow) = flows.get(&row.flow_id, row.flow_version) {
        return Ok(flow);
    }
    let key = (row.flow_id.clone(), row.flow_version);
    flows.get_or_parse(&key, definitions.get(&key).map(String::as_str))
}

/// Applies `input` to a stored enrollment, adds the result to `writes`, and returns the
/// engine's effects (typed, for callers that answer with them: a signal's effect, a refusal).
/// A flow that cannot be loaded fails the enrollment with a journey entry instead of stopping
/// the batch.
pub fn apply(
    writes: &mut Writes,
    flows: &FlowCache,
    context: &StepContext,
    row: EnrollmentRow,
    input: Input,
    now: DateTime<Utc>,
) -> Result<Vec<Effect>, StoreError> {
    let stepped = step_row(
        writes,
        flows,
        context,
        row,
        input,
        now,
        Vec::with_capacity(8),
    )?;
    writes.add_step(
        stepped.row,
        &stepped.was,
        &stepped.after,
        &stepped.effects,
        now,
        stepped.outcome.as_deref(),
    );
    Ok(stepped.effects)
}

/// [`apply`] for a caller that does not read the effects (the planner): their strings move
/// into the rows written instead of being copied. `effects` is an empty vector the step's
/// effects are made in and taken from, left empty with its room for the next step.
pub fn apply_unread(
    writes: &mut Writes,
    flows: &FlowCache,
    context: &StepContext,
    row: EnrollmentRow,
    input: Input,
    now: DateTime<Utc>,
    effects: &mut Vec<Effect>,
) -> Result<(), StoreError> {
    let room = std::mem::take(effects);
    let mut stepped = step_row(writes, flows, context, row, input, now, room)?;
    writes.add_step_owned(
        stepped.row,
        &stepped.was,
        &stepped.after,
        &mut stepped.effects,
        now,
        stepped.outcome.as_deref(),
    );
    *effects = stepped.effects;
    Ok(())
}

/// One step of [`apply`], its funnel counts and conversions added to `writes`, the rest still
/// to write.
struct Stepped {
    row: EnrollmentRow,
    was: Before,
    after: Box<EnrollmentState>,
    effects: Vec<Effect>,
    /// The task outcome the step applied, if it was one.
    outcome: Option<String>,
}

/// `room` is the (empty) vector the effects are made in.
fn step_row(
    writes: &mut Writes,
    flows: &FlowCache,
    context: &StepContext,
    row: EnrollmentRow,
    input: Input,
    now: DateTime<Utc>,
    room: Vec<Effect>,
) -> Result<Stepped, StoreError> {
    let before = Box::new(row.engine_state()?);
    let outcome = match &input {
        Input::TaskOutcome { outcome, .. } => Some(outcome.clone()),
        _ => None,
    };
    let flow = match find_version(&context.versions, &row) {
        Some(flow) => Ok(flow),
        None => flow_of(flows, &context.definitions, &row),
    };
    let ctx = context.ctx(&row.account_id);
    // What a signal adds to the funnel and may convert, whatever the step does with it.
    let (signal_counts, goals) = match &input {
        Input::Signal(signal) => (
            crate::engine::funnel::of_signal(&before, signal),
            crate::engine::funnel::goal_events(signal)
                .into_iter()
                .map(str::to_string)
                .collect(),
        ),
        _ => (Vec::new(), Vec::new()),
    };
    let was = Before::of(&before);
    // The interpreter works on the decoded state itself; the rare replay after a failure
    // decodes it again.
    let original = || {
        Box::new(
            row.engine_state()
                .expect("a stored state decodes as it did a moment ago"),
        )
    };
    let (after, effects) = match &flow {
        Ok(flow) => {
            let step = |view: CapacityView<'_>| {
                engine::step_owned(before, original, flow, input, now, &ctx, view, room)
            };
            match (&context.books, context.caps_of(&row)) {
                (_, None) => step(CapacityView::Unlimited),
                (Some(books), Some((sender, caps))) => {
                    let mut books = books.lock().expect("the ledger lock is never poisoned");
                    match books.get_mut(&sender) {
                        Some(book) => {
                            let out = step(CapacityView::Ledger(book));
                            // The next enrollment of this sender in the batch sees this one's slot.
                            for e in &out.1 {
                                let slot = match e {
                                    Effect::Dispatch(d) => d.reservation.as_ref(),
                                    Effect::TaskCreated(t) => t.reservation.as_ref(),
                                    _ => None,
                                };
                                if let Some(slot) = slot {
                                    book.reserve(slot.clone());
                                }
                            }
                            if let Some(queued) =
                                engine::campaign::queued_slot(&out.0, &out.1, caps)
                            {
                                // A step deferred for capacity keeps its place in this batch:
                                // the next one deferred computes the slot after it, so waiters
                                // wake one slot each, in priority order, not all at the first
                                // free slot.
                                book.reserve(queued);
                            }
                            out
                        }
                        None => step(CapacityView::HandOff(caps)),
                    }
                }
                (None, Some((_, caps))) => step(CapacityView::HandOff(caps)),
            }
        }
        Err(message) => flow_unavailable(before, message.clone()),
    };
    let now_ms = crate::clock::to_millis(now);
    for (step, metric) in signal_counts {
        writes.count(&row, &step, metric, "", now_ms);
    }
    // Only a flow with step experiments has exposures to convert.
    if flow.as_ref().is_ok_and(|f| f.has_experiments()) {
        for goal in goals {
            writes
                .conversions
                .push(crate::store::flow_stats::Conversion {
                    enrollment_id: row.id.clone(),
                    goal,
                    at: now_ms,
                });
        }
    }
    Ok(Stepped {
        row,
        was,
        after,
        effects,
        outcome,
    })
}

fn flow_unavailable(
    before: Box<EnrollmentState>,
    message: String,
) -> (Box<EnrollmentState>, Vec<Effect>) {
    let mut after = before;
    after.status = Status::Failed;
    after.next_run_at = None;
    after.reason = Some(format!("{}: {message}", Code::FlowUnavailable.as_str()));
    (
        after,
        vec![Effect::Journey(JourneyEntry::Failed {
            code: Code::FlowUnavailable,
            step: None,
            message,
        })],
    )
}

/// The first row of each run of consecutive rows on one flow version: what is looked up once
/// per version (a batch is mostly one run or a few).
fn first_of_each_version_run<'r>(
    rows: impl IntoIterator<Item = &'r EnrollmentRow>,
) -> impl Iterator<Item = &'r EnrollmentRow> {
    let mut last: Option<(&'r str, i32)> = None;
    rows.into_iter().filter(move |r| {
        let this = Some((r.flow_id.as_str(), r.flow_version));
        let new = last != this;
        last = this;
        new
    })
}
