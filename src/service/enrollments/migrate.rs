//! Moving a flow's running enrollments to another version, on purpose (`MigrateEnrollments`).
//!
//! A new version never changes a running enrollment by itself; an operator moves them. Every
//! active or paused enrollment on a `from` version moves to `to_version`: its current step is
//! found there by `step_map`, else by the same id, and must be a step of the same type (a run is
//! never entered again, so nothing is sent twice). The move is planned first over every
//! enrollment it would touch; a step with no place refuses the whole call (`UNMAPPED_STEP`,
//! `TYPE_CHANGED`, `UNKNOWN_TARGET`, each with its count) and nothing moves. A dry run answers
//! the plan, problems included, and changes nothing. A real move runs in batches that commit one by one, each locking its enrollment
//! rows in id order as the signal paths do (the planner skips a locked row and takes it after
//! the batch, on the new version), so an enrollment due meanwhile is stepped once, on one
//! version or the other. Each batch writes its counts and cursor to the move's row in the same
//! transaction: a call repeated with the same `client_key` answers the same counts, and a move a
//! crash stopped resumes after its last committed batch (the caller's retry, or any replica once
//! the runner's lease has run out).

use crate::code::Code;
use crate::engine::{Input, Status};
use crate::runtime::{apply, Core, StepContext};
use crate::service::fields::{self, Limit};
use crate::service::flows;
use crate::service::{ServiceError, Violation, Violations};
use crate::store::enrollment_migrations::{self as store, MigrationRow, MigrationStatus};
use crate::store::{EnrollmentRow, StoreError, Tx, Writes};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;

/// How many enrollments one batch moves (one transaction).
pub const BATCH: i64 = 500;
/// How long a runner holds a move without committing a batch before another may resume it.
pub const LEASE_MS: i64 = 60_000;
/// How often a replica looks for moves whose runner stopped.
pub const RESUME_EVERY: std::time::Duration = std::time::Duration::from_secs(30);

/// What the operator asks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MigrateRequest {
    /// The flow's id or name.
    pub flow_id: String,
    /// The versions whose enrollments move; empty: every version older than `to_version`.
    pub from_versions: Vec<i32>,
    pub to_version: i32,
    /// Old step id → new step id, for steps renamed or replaced.
    pub step_map: BTreeMap<String, String>,
    /// Plan and answer; change nothing.
    pub dry_run: bool,
    /// The caller's idempotency key: the same key answers the same move.
    pub client_key: String,
}

/// What a move was asked, normalized: a second call with the same key must ask the same.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Asked {
    from_versions: Vec<i32>,
    to_version: i32,
    step_map: BTreeMap<String, String>,
}

/// The enrollments at one current step of one version, where they go, and what stops them.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct MigrationGroup {
    pub from_version: i32,
    /// The step they are at ("" for an enrollment with no open run).
    pub from_step: String,
    /// The step of `to_version` they continue as ("" when it has no place).
    pub to_step: String,
    /// Why they cannot move (`UNMAPPED_STEP`, `TYPE_CHANGED`, `UNKNOWN_TARGET`); `None` when
    /// they can.
    pub problem: Option<Code>,
    pub count: i64,
}

/// The answer: the plan (a dry run) or what moved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Migration {
    /// The flow's id.
    pub flow_id: String,
    pub to_version: i32,
    /// How many enrollments moved (0 in a dry run).
    pub moved: i64,
    /// Per version and current step, in that order.
    pub groups: Vec<MigrationGroup>,
    /// The move's key: the caller's `client_key`, or one nudge chose (empty for a dry run).
    pub client_key: String,
    pub dry_run: bool,
}

/// Counts by group, merged.
#[derive(Debug, Default)]
struct Tally(BTreeMap<Placed, i64>);

impl Tally {
    fn add(&mut self, g: &Placed, n: i64) {
        *self.0.entry(g.clone()).or_insert(0) += n;
    }

    fn from_groups(groups: &[MigrationGroup]) -> Tally {
        let mut t = Tally::default();
        for g in groups {
            t.add(&Placed::of(g), g.count);
        }
        t
    }

    fn groups(&self) -> Vec<MigrationGroup> {
        self.0
            .iter()
            .map(|(g, n)| MigrationGroup {
                from_version: g.from_version,
                from_step: g.from_step.clone(),
                to_step: g.to_step.clone(),
                problem: g.problem,
                count: *n,
            })
            .collect()
    }
}

/// Where one enrollment goes: a group's key (its fields in the order groups are listed).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Placed {
    from_version: i32,
    from_step: String,
    to_step: String,
    problem: Option<Code>,
}

impl Placed {
    fn of(g: &MigrationGroup) -> Placed {
        Placed {
            from_version: g.from_version,
            from_step: g.from_step.clone(),
            to_step: g.to_step.clone(),
            problem: g.problem,
        }
    }
}

/// Where an enrollment at `from_step` (of type `kind`, `None` without an open run) goes in
/// `target`, by `step_map` else the same id.
fn place(
    target: &crate::flow::Flow,
    step_map: &BTreeMap<String, String>,
    from_version: i32,
    current: Option<(&str, crate::flow::StepKind)>,
) -> Placed {
    let Some((from_step, kind)) = current else {
        return Placed {
            from_version,
            from_step: String::new(),
            to_step: String::new(),
            problem: None,
        };
    };
    let mapped = step_map.get(from_step);
    let to_step = mapped.map_or(from_step, String::as_str);
    let problem = match target.step(to_step) {
        None if mapped.is_some() => Some(Code::UnknownTarget),
        None => Some(Code::UnmappedStep),
        Some(s) if s.kind() != kind => Some(Code::TypeChanged),
        Some(_) => None,
    };
    Placed {
        from_version,
        from_step: from_step.to_string(),
        to_step: if problem == Some(Code::UnmappedStep) {
            String::new()
        } else {
            to_step.to_string()
        },
        problem,
    }
}

/// Where a stored enrollment goes (`None`: it is on a version the move leaves, or not live).
fn place_row(
    target: &crate::flow::Flow,
    asked: &Asked,
    row: &EnrollmentRow,
) -> Result<Option<Placed>, StoreError> {
    if !asked.from_versions.contains(&row.flow_version) {
        return Ok(None);
    }
    let state = row.engine_state()?;
    if !Status::LIVE.contains(&state.status) {
        return Ok(None);
    }
    let current = state.run.as_ref().map(|r| (r.step.as_str(), r.step_type));
    Ok(Some(place(
        target,
        &asked.step_map,
        row.flow_version,
        current,
    )))
}

/// The refusal of a plan with problems: one violation per group that cannot move.
fn refusal(groups: &[MigrationGroup], to_version: i32) -> Option<ServiceError> {
    let problems: Vec<Violation> = groups
        .iter()
        .filter_map(|g| {
            let code = g.problem?;
            let at = crate::quote::quote(&g.from_step);
            let n = g.count;
            let message = match code {
                Code::UnknownTarget => format!(
                    "{n} enrollment(s) at step {at} of version {}: step_map sends them to {}, \
                     which version {to_version} does not have; map {at} to one of its steps",
                    g.from_version,
                    crate::quote::quote(&g.to_step)
                ),
                Code::TypeChanged => format!(
                    "{n} enrollment(s) at step {at} of version {}: step {} of version \
                     {to_version} is of another type, and a run cannot change type; map {at} \
                     to a step of its type (one that precedes the new one), or move them with \
                     MoveTo first",
                    g.from_version,
                    crate::quote::quote(&g.to_step)
                ),
                _ => format!(
                    "{n} enrollment(s) at step {at} of version {}: version {to_version} has no \
                     step {at}; map it in step_map to a step of the same type",
                    g.from_version
                ),
            };
            Some(Violation::new(
                format!("step_map[{}]", crate::quote::quote(&g.from_step)),
                code,
                message,
            ))
        })
        .collect();
    (!problems.is_empty()).then_some(ServiceError::Refused(problems))
}

/// The checks every field can fail, all at once.
fn check(req: &MigrateRequest) -> Result<(), ServiceError> {
    let mut problems = Violations::default();
    if req.flow_id.trim().is_empty() {
        problems.push(Violation::new(
            "flow_id",
            Code::BadSchema,
            "give the flow's id or name",
        ));
    }
    if req.to_version < 1 {
        problems.push(Violation::new(
            "to_version",
            Code::BadSchema,
            "name the version to move to (1 for the first, then 2, 3, …)",
        ));
    }
    for (i, v) in req.from_versions.iter().enumerate() {
        if *v < 1 {
            problems.push(Violation::new(
                format!("from_versions[{i}]"),
                Code::BadSchema,
                format!("{v} is no version: versions count from 1"),
            ));
        } else if *v == req.to_version {
            problems.push(Violation::new(
                format!("from_versions[{i}]"),
                Code::BadSchema,
                format!("version {v} is the version moved to; leave it out"),
            ));
        }
    }
    for (from, to) in &req.step_map {
        let field = format!("step_map[{}]", crate::quote::quote(from));
        if from.trim().is_empty() || to.trim().is_empty() {
            problems.push(Violation::new(
                field.clone(),
                Code::BadSchema,
                "map a step id to a step id: neither may be empty",
            ));
        }
        problems.check(fields::check_text(&field, from, Limit::Name));
        problems.check(fields::check_text(&field, to, Limit::Name));
    }
    problems.check(fields::check_text(
        "client_key",
        &req.client_key,
        Limit::Name,
    ));
    problems.finish()
}

/// Plans and (unless `dry_run`) makes the move. `started_by` is kept with it (the token's id,
/// or the command line).
pub async fn migrate(
    core: &Core,
    account_id: &str,
    req: MigrateRequest,
    started_by: &str,
) -> Result<Migration, ServiceError> {
    check(&req)?;
    // The same NOT_FOUND as GetFlow, for the flow and for each version named.
    let to = flows::get(core, account_id, &req.flow_id, req.to_version).await?;
    let from_versions: Vec<i32> = if req.from_versions.is_empty() {
        (1..req.to_version).collect()
    } else {
        let mut named = req.from_versions.clone();
        named.sort_unstable();
        named.dedup();
        for v in &named {
            flows::get(core, account_id, &to.id, *v).await?;
        }
        named
    };
    let target = parsed(core, &to)?;
    let asked = Asked {
        from_versions,
        to_version: to.version,
        step_map: req.step_map.clone(),
    };
    // Version 1 has no older version: nothing to plan, store or move.
    if asked.from_versions.is_empty() {
        return Ok(Migration {
            flow_id: to.id,
            to_version: to.version,
            moved: 0,
            groups: Vec::new(),
            client_key: String::new(),
            dry_run: req.dry_run,
        });
    }

    // A key already used answers its move (resumed if a crash stopped it).
    if !req.dry_run && !req.client_key.is_empty() {
        if let Some(row) = store::by_client_key(&core.db, account_id, &req.client_key).await? {
            same_request(&row, &asked)?;
            return finish(core, row, &asked, target).await;
        }
    }

    let plan = plan(core, account_id, &to.id, &asked, &target).await?;
    // A dry run shows the problems with their groups; a real move refuses them.
    if req.dry_run {
        return Ok(Migration {
            flow_id: to.id,
            to_version: to.version,
            moved: 0,
            groups: plan.groups(),
            client_key: String::new(),
            dry_run: true,
        });
    }
    if let Some(refused) = refusal(&plan.groups(), to.version) {
        return Err(refused);
    }
    let now_ms = crate::clock::to_millis(core.clock.now());
    let id = crate::store::new_id("mg");
    let new = MigrationRow {
        client_key: if req.client_key.is_empty() {
            id.clone()
        } else {
            req.client_key.clone()
        },
        id,
        account_id: account_id.to_string(),
        flow_id: to.id.clone(),
        request: serde_json::to_string(&asked).expect("a request serializes"),
        status: MigrationStatus::Running.as_str().into(),
        moved: 0,
        groups: "[]".into(),
        cursor: String::new(),
        started_by: started_by.to_string(),
        lease_until: now_ms + LEASE_MS,
        created_at: now_ms,
        finished_at: None,
    };
    let row = crate::transaction!(core.db, |tx| tx.start_migration(&new).await)?;
    // Another call with the same key may have started first.
    same_request(&row, &asked)?;
    finish(core, row, &asked, target).await
}

/// A stored move's JSON column, read back (a row that does not parse is a bug: INTERNAL).
fn stored<T: serde::de::DeserializeOwned>(
    row: &MigrationRow,
    json: &str,
) -> Result<T, ServiceError> {
    serde_json::from_str(json)
        .map_err(|e| ServiceError::Internal(format!("migration {}: {e}", row.id)))
}

/// The parsed flow of `to` (a version just read with `flows::get`), from the process's cache.
fn parsed(core: &Core, to: &flows::Flow) -> Result<Arc<crate::flow::Flow>, ServiceError> {
    core.flows
        .get_or_parse(&(to.id.clone(), to.version), Some(&to.definition))
        .map_err(|m| ServiceError::Internal(format!("flow {} v{}: {m}", to.id, to.version)))
}

/// Refuses a key reused for another request.
fn same_request(row: &MigrationRow, asked: &Asked) -> Result<(), ServiceError> {
    let before: Asked = stored(row, &row.request)?;
    if before == *asked {
        return Ok(());
    }
    Err(ServiceError::FailedPrecondition(format!(
        "client_key {} was used for another move of this account (to version {} from {:?}); \
         choose a new key for a new move",
        crate::quote::quote(&row.client_key),
        before.to_version,
        before.from_versions
    )))
}

/// Counts every live enrollment the move would touch, by version and current step.
async fn plan(
    core: &Core,
    account_id: &str,
    flow_id: &str,
    asked: &Asked,
    target: &crate::flow::Flow,
) -> Result<Tally, ServiceError> {
    let mut tally = Tally::default();
    let mut after = String::new();
    loop {
        let page = store::live_page(&core.db, account_id, flow_id, &after, PLAN_PAGE).await?;
        for row in &page {
            if let Some(placed) = place_row(target, asked, row)? {
                tally.add(&placed, 1);
            }
        }
        match page.last() {
            Some(last) if page.len() as i64 == PLAN_PAGE => after = last.id.clone(),
            _ => return Ok(tally),
        }
    }
}

/// How many enrollments the plan reads at a time.
const PLAN_PAGE: i64 = 2_000;

/// Runs the move's remaining batches (none when it is done) and answers what moved. The
/// batches run on their own task: a caller that goes away (a deadline, a dropped connection)
/// does not stop a move half-way.
async fn finish(
    core: &Core,
    row: MigrationRow,
    asked: &Asked,
    target: Arc<crate::flow::Flow>,
) -> Result<Migration, ServiceError> {
    let row = if row.status == MigrationStatus::Done.as_str() {
        row
    } else {
        let (core, asked, id) = (core.clone(), asked.clone(), row.id.clone());
        tokio::spawn(async move { run(&core, row, &asked, &target).await })
            .await
            .map_err(|e| ServiceError::Internal(format!("migration {id}: {e}")))??
    };
    answer(row, asked.to_version)
}

fn answer(row: MigrationRow, to_version: i32) -> Result<Migration, ServiceError> {
    let groups: Vec<MigrationGroup> = stored(&row, &row.groups)?;
    Ok(Migration {
        flow_id: row.flow_id,
        to_version,
        moved: row.moved,
        groups,
        client_key: row.client_key,
        dry_run: false,
    })
}

/// The batches, from the move's cursor to the end.
async fn run(
    core: &Core,
    mut row: MigrationRow,
    asked: &Asked,
    target: &crate::flow::Flow,
) -> Result<MigrationRow, ServiceError> {
    while row.status != MigrationStatus::Done.as_str() {
        let (next, writes) = crate::transaction!(core.db, |tx| {
            batch(core, tx, &row.account_id, &row.client_key, asked, target).await
        })?;
        core.announce(writes.committed()).await;
        row = next;
    }
    Ok(row)
}

/// One batch in `tx`: the move's row and the next enrollments locked, each placed and moved,
/// the counts and cursor written. Returns the move as committed and what was written.
async fn batch(
    core: &Core,
    tx: &mut Tx,
    account_id: &str,
    client_key: &str,
    asked: &Asked,
    target: &crate::flow::Flow,
) -> Result<(MigrationRow, Writes), ServiceError> {
    let mut row = tx
        .lock_migration(account_id, client_key)
        .await?
        .ok_or_else(|| ServiceError::Internal(format!("migration {client_key} vanished")))?;
    let mut writes = Writes::default();
    if row.status == MigrationStatus::Done.as_str() {
        return Ok((row, writes));
    }
    let page = tx
        .lock_live_page(account_id, &row.flow_id, &row.cursor, BATCH)
        .await?;
    let now = core.clock.now();
    let now_ms = crate::clock::to_millis(now);
    let mut tally = Tally::from_groups(&stored::<Vec<MigrationGroup>>(&row, &row.groups)?);
    // The rows that move, already on the new version (the flow `apply` steps them with), and
    // where each goes.
    let mut rows: Vec<EnrollmentRow> = Vec::with_capacity(page.len());
    let mut places: Vec<Placed> = Vec::with_capacity(page.len());
    for e in page.iter() {
        let Some(placed) = place_row(target, asked, e)? else {
            continue;
        };
        // A step entered since the plan that has no place stays where it is, counted with its
        // problem in the answer.
        if placed.problem.is_some() {
            tally.add(&placed, 1);
            continue;
        }
        let mut moved = e.clone();
        moved.flow_version = asked.to_version;
        rows.push(moved);
        places.push(placed);
    }
    let context = StepContext::load(tx, &core.flows, &rows, &core.quiet_hours).await?;
    let ids: Vec<String> = rows.iter().map(|r| r.id.clone()).collect();
    for (e, placed) in rows.into_iter().zip(&places) {
        let step = placed.to_step.clone();
        let input = Input::Migrate {
            to_version: asked.to_version as u32,
            step,
        };
        apply(&mut writes, &core.flows, &context, e, input, now)?;
        tally.add(placed, 1);
    }
    tx.write_all(&writes).await?;
    let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
    tx.set_flow_version(&ids, asked.to_version).await?;
    row.moved += ids.len() as i64;
    row.groups = serde_json::to_string(&tally.groups()).expect("groups serialize");
    if let Some(last) = page.last() {
        row.cursor = last.id.clone();
    }
    row.lease_until = now_ms + LEASE_MS;
    if (page.len() as i64) < BATCH {
        row.status = MigrationStatus::Done.as_str().into();
        row.finished_at = Some(now_ms);
    }
    tx.save_migration(&row).await?;
    Ok((row, writes))
}

/// Resumes the moves whose runner stopped (its lease ran out): what each replica does every
/// [`RESUME_EVERY`]. Returns how many it finished.
pub async fn resume_abandoned(core: &Core) -> Result<usize, ServiceError> {
    let now_ms = crate::clock::to_millis(core.clock.now());
    let claimed = store::claim_abandoned(&core.db, now_ms, now_ms + LEASE_MS).await?;
    let mut finished = 0;
    for row in claimed {
        let asked: Asked = stored(&row, &row.request)?;
        let to = flows::get(core, &row.account_id, &row.flow_id, asked.to_version).await?;
        let target = parsed(core, &to)?;
        tracing::info!(migration = %row.id, flow = %row.flow_id, cursor = %row.cursor, "resuming a move of enrollments");
        run(core, row, &asked, &target).await?;
        finished += 1;
    }
    Ok(finished)
}

/// Every [`RESUME_EVERY`], the moves a stopped replica left are resumed.
pub async fn run_resumer(core: Core, mut stop: crate::runtime::Stop) {
    let mut tick = tokio::time::interval(RESUME_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = stop.stopped() => return,
            _ = tick.tick() => {
                if let Err(e) = resume_abandoned(&core).await {
                    tracing::warn!(error = %e, "resuming moves of enrollments failed");
                }
            }
        }
    }
}

/// How many live enrollments of the flow run on each version (the console's flow page).
pub async fn live_by_version(
    core: &Core,
    account_id: &str,
    flow_id: &str,
) -> Result<Vec<(i32, i64)>, ServiceError> {
    Ok(store::live_by_version(&core.db, account_id, flow_id).await?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flow::StepKind;

    fn target() -> crate::flow::Flow {
        let doc = serde_json::json!({
            "name": "f",
            "start": "mail",
            "steps": {
                "mail": {"type": "email", "params": {"template": "t"}, "next": {"then": "wait_reply"}},
                "wait_reply": {"type": "wait_for", "params": {"events": ["reply"], "timeout": {"for": "3d"}},
                               "next": {"reply": "done", "timeout": "done"}},
                "done": {"type": "end"}
            }
        });
        crate::flow::Flow::from_json(&doc, &crate::flow::ValidateOptions::default())
            .expect("the flow parses")
    }

    #[test]
    fn a_step_is_placed_by_the_map_else_by_its_id_and_keeps_its_type() {
        let t = target();
        let map: BTreeMap<String, String> = [
            ("listen".to_string(), "wait_reply".to_string()),
            ("gone".to_string(), "nowhere".to_string()),
            ("typed".to_string(), "mail".to_string()),
        ]
        .into();
        type Case<'a> = (Option<(&'a str, StepKind)>, &'a str, Option<Code>);
        let cases: [Case; 6] = [
            (Some(("mail", StepKind::Email)), "mail", None),
            (Some(("listen", StepKind::WaitFor)), "wait_reply", None),
            (
                Some(("gone", StepKind::WaitFor)),
                "nowhere",
                Some(Code::UnknownTarget),
            ),
            (
                Some(("typed", StepKind::Wait)),
                "mail",
                Some(Code::TypeChanged),
            ),
            (Some(("old", StepKind::Wait)), "", Some(Code::UnmappedStep)),
            (None, "", None),
        ];
        for (current, to, problem) in cases {
            let p = place(&t, &map, 1, current);
            assert_eq!(
                (p.to_step.as_str(), p.problem),
                (to, problem),
                "{current:?}"
            );
        }
    }

    #[test]
    fn a_refusal_lists_every_group_that_cannot_move_with_its_count() {
        let g = |from: &str, to: &str, problem, count| MigrationGroup {
            from_version: 1,
            from_step: from.into(),
            to_step: to.into(),
            problem,
            count,
        };
        let groups = [
            g("mail", "mail", None, 5),
            g("old", "", Some(Code::UnmappedStep), 3),
            g("typed", "mail", Some(Code::TypeChanged), 2),
        ];
        let Some(ServiceError::Refused(v)) = refusal(&groups, 2) else {
            panic!("refused");
        };
        assert_eq!(v.len(), 2);
        assert_eq!(v[0].code, Code::UnmappedStep);
        assert_eq!(v[0].field, "step_map[`old`]");
        assert!(
            v[0].message.starts_with("3 enrollment(s)"),
            "{}",
            v[0].message
        );
        assert_eq!(v[1].code, Code::TypeChanged);
        assert!(refusal(&groups[..1], 2).is_none());
    }
}
