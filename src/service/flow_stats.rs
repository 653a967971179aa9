//! `FlowService.GetFlowStats`: a flow's funnel step by step and each step experiment's
//! always-valid comparison, from the counts the write path appended (`store::flow_stats`).
//! No journey is read: the answer costs a sum over a few rows whatever the flow's size.

use super::flows;
use super::ServiceError;
use crate::engine::funnel::Metric;
use crate::experiment::stats::{self, Arm, Comparison, NotYet};
use crate::flow::model::{Experiment, Flow};
use crate::runtime::Core;
use crate::store;
use chrono::{DateTime, Utc};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// A flow's statistics.
#[derive(Debug, Clone, PartialEq)]
pub struct FlowStats {
    pub flow_id: String,
    pub name: String,
    /// The version asked for; 0 for every version together.
    pub version: i32,
    pub since: Option<DateTime<Utc>>,
    /// In the flow's order: the latest version's steps (as listed), then steps only older
    /// versions had.
    pub steps: Vec<StepStats>,
}

/// One step's funnel.
#[derive(Debug, Clone, PartialEq)]
pub struct StepStats {
    pub step: String,
    /// The step type (`email`, `wait`, …).
    pub step_type: String,
    /// Every metric but `exposed` and `converted` (those are per variant), 0 when none.
    pub counts: BTreeMap<Metric, i64>,
    /// The step's experiment, when it has variants.
    pub experiment: Option<ExperimentStats>,
}

impl StepStats {
    /// The count of `metric`.
    pub fn count(&self, metric: Metric) -> i64 {
        self.counts.get(&metric).copied().unwrap_or(0)
    }
}

/// A step experiment's figures.
#[derive(Debug, Clone, PartialEq)]
pub struct ExperimentStats {
    /// `"<flow name>/<step id>"`, or the shared experiment's name.
    pub key: String,
    pub settings: Experiment,
    /// The variants in the order the step lists them; the first is the control.
    pub variants: Vec<VariantStats>,
    /// The sample-ratio check's p-value (chi-square of exposed against the weights).
    pub sample_ratio_p: f64,
    /// True when `sample_ratio_p` is under 0.001: the split is not what the weights say, the
    /// usual sign of a broken assignment or of exposures lost on one side.
    pub sample_ratio_warning: bool,
}

/// Where a variant stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VariantState {
    /// Taking new contacts.
    Running,
    /// Taking no new contacts.
    Stopped,
    /// The last one running after the others were stopped.
    Winner,
}

impl VariantState {
    pub fn as_str(self) -> &'static str {
        match self {
            VariantState::Running => "running",
            VariantState::Stopped => "stopped",
            VariantState::Winner => "winner",
        }
    }
}

/// One variant's figures.
#[derive(Debug, Clone, PartialEq)]
pub struct VariantStats {
    pub name: String,
    pub weight: f64,
    pub exposed: i64,
    pub converted: i64,
    /// `converted / exposed`; 0 with nobody exposed.
    pub rate: f64,
    /// Against the control (not on the control itself), once the data back it.
    pub comparison: Option<Comparison>,
    /// Why there is no comparison (on a variant other than the control).
    pub not_yet: Option<NotYet>,
    pub state: VariantState,
    pub stopped_reason: Option<String>,
}

/// Rows read past which a read folds the flow's counts (one row per key) for the next one.
const FOLD_AFTER: usize = 256;

/// `GetFlowStats`: the flow named or numbered `id_or_name`, at `version` (0: all together),
/// counting what happened from `since`'s hour on (everything when `None`).
pub async fn get(
    core: &Core,
    account_id: &str,
    id_or_name: &str,
    version: i32,
    since: Option<DateTime<Utc>>,
) -> Result<FlowStats, ServiceError> {
    // The same checks and the same NOT_FOUND as GetFlow.
    let latest = flows::get(core, account_id, id_or_name, version).await?;
    let since_hour = since.map_or(i64::MIN, |s| {
        store::flow_stats::hour_of(crate::clock::to_millis(s))
    });
    let (rows, read) =
        store::flow_stats::read(&core.db, account_id, &latest.id, since_hour).await?;
    let rows: Vec<_> = rows
        .into_iter()
        .filter(|r| version == 0 || r.flow_version == version)
        .collect();
    if read > FOLD_AFTER && read > 2 * rows.len() {
        // Best effort, and not in the answer's time (tens of thousands of rows after a busy
        // hour took a read at 1,000,000 enrollments to 348 ms): the answer stands either way,
        // and the next read folds again.
        let (db, account, flow) = (core.db.clone(), account_id.to_string(), latest.id.clone());
        tokio::spawn(async move {
            if let Err(e) = store::flow_stats::fold(&db, &account, &flow).await {
                tracing::warn!(error = %e, flow = %flow, "folding flow counts failed");
            }
        });
    }

    // The versions whose steps are listed: the one asked for, or every one counted (newest
    // first), those this process has not parsed yet read in one statement.
    let mut parsed: Vec<Arc<Flow>> = vec![parse(core, &latest)?];
    if version == 0 {
        let mut others: Vec<i32> = rows
            .iter()
            .map(|r| r.flow_version)
            .filter(|&v| v != latest.version)
            .collect();
        others.sort_unstable_by(|a, b| b.cmp(a));
        others.dedup();
        let key = |v: i32| (latest.id.clone(), v);
        let unparsed: Vec<i32> = others
            .iter()
            .copied()
            .filter(|&v| !core.flows.contains(&key(v)))
            .collect();
        let definitions: HashMap<i32, String> =
            store::flows::versions(&core.db, &latest.id, &unparsed)
                .await?
                .into_iter()
                .map(|r| (r.version, r.definition))
                .collect();
        for v in others {
            let definition = definitions.get(&v).map(String::as_str);
            if definition.is_none() && !core.flows.contains(&key(v)) {
                return Err(ServiceError::NotFound {
                    what: "flow",
                    id: format!("{}@{v}", latest.id),
                });
            }
            let flow = core
                .flows
                .get_or_parse(&key(v), definition)
                .map_err(|message| {
                    ServiceError::Internal(format!("flow {} version {v}: {message}", latest.id))
                })?;
            parsed.push(flow);
        }
    }

    // Where each variant stands, by (experiment, variant).
    let states: HashMap<(String, String), store::variant_states::VariantStateRow> =
        store::variant_states::of_flow(&core.db, account_id, &latest.id)
            .await?
            .into_iter()
            .map(|r| ((r.experiment.clone(), r.variant.clone()), r))
            .collect();

    // Counts by step, and by (step, variant) for exposures and conversions.
    let mut counts: HashMap<&str, BTreeMap<Metric, i64>> = HashMap::new();
    let mut arms: HashMap<(&str, &str), Arm> = HashMap::new();
    for r in &rows {
        let Some(metric) = Metric::parse(&r.metric) else {
            continue;
        };
        let n = r.n.max(0) as u64;
        match metric {
            Metric::Exposed => arms.entry((&r.step, &r.variant)).or_default().exposed += n,
            Metric::Converted => arms.entry((&r.step, &r.variant)).or_default().converted += n,
            _ => {
                *counts
                    .entry(&r.step)
                    .or_default()
                    .entry(metric)
                    .or_insert(0) += r.n
            }
        }
    }

    let mut steps: Vec<StepStats> = Vec::new();
    for flow in &parsed {
        for (id, step) in flow.steps_in_order() {
            if steps.iter().any(|s| s.step == id) {
                continue;
            }
            let mut all: BTreeMap<Metric, i64> = Metric::all()
                .filter(|m| !matches!(m, Metric::Exposed | Metric::Converted))
                .map(|m| (m, 0))
                .collect();
            if let Some(c) = counts.get(id) {
                for (m, n) in c {
                    all.insert(*m, *n);
                }
            }
            let experiment = flow.experiment_of(id).map(|(key, _, settings)| {
                let mut e = experiment_stats(key, settings, &step.variants, |variant| {
                    arms.get(&(id, variant)).copied().unwrap_or_default()
                });
                for v in &mut e.variants {
                    let Some(row) = states.get(&(e.key.clone(), v.name.clone())) else {
                        continue;
                    };
                    v.state = match row.state.as_str() {
                        "stopped" => VariantState::Stopped,
                        "winner" => VariantState::Winner,
                        _ => VariantState::Running,
                    };
                    v.stopped_reason = row
                        .reason
                        .clone()
                        .filter(|_| v.state != VariantState::Running);
                    // The p-value reported is the smallest seen so far: valid, since the
                    // test is valid at every look.
                    if let (Some(c), Some(min)) = (v.comparison.as_mut(), row.min_p_value) {
                        c.p_value = c.p_value.min(min);
                    }
                }
                e
            });
            steps.push(StepStats {
                step: id.to_string(),
                step_type: step.kind().as_str().to_string(),
                counts: all,
                experiment,
            });
        }
    }
    Ok(FlowStats {
        flow_id: latest.id,
        name: latest.name,
        version,
        since,
        steps,
    })
}

fn parse(core: &Core, flow: &flows::Flow) -> Result<Arc<Flow>, ServiceError> {
    core.flows
        .get_or_parse(&(flow.id.clone(), flow.version), Some(&flow.definition))
        .map_err(|message| ServiceError::Internal(format!("flow {}: {message}", flow.id)))
}

/// The figures of one experiment from its arms' counts.
fn experiment_stats(
    key: String,
    settings: Experiment,
    variants: &[crate::flow::model::Variant],
    arm: impl Fn(&str) -> Arm,
) -> ExperimentStats {
    let arms: Vec<Arm> = variants.iter().map(|v| arm(&v.name)).collect();
    let weights: Vec<f64> = variants.iter().map(|v| v.weight).collect();
    let exposed: Vec<u64> = arms.iter().map(|a| a.exposed).collect();
    let sample_ratio_p = stats::sample_ratio_p(&exposed, &weights);
    let control = arms.first().copied().unwrap_or_default();
    let variants = variants
        .iter()
        .zip(&arms)
        .enumerate()
        .map(|(i, (v, a))| {
            let (comparison, not_yet) = if i == 0 {
                (None, None)
            } else {
                match stats::compare(control, *a, settings.alpha, settings.tuning) {
                    Ok(c) => (Some(c), None),
                    Err(n) => (None, Some(n)),
                }
            };
            VariantStats {
                name: v.name.clone(),
                weight: v.weight,
                exposed: a.exposed as i64,
                converted: a.converted as i64,
                rate: a.rate(),
                comparison,
                not_yet,
                state: VariantState::Running,
                stopped_reason: None,
            }
        })
        .collect();
    ExperimentStats {
        key,
        settings,
        variants,
        sample_ratio_p,
        sample_ratio_warning: sample_ratio_p < stats::SAMPLE_RATIO_ALPHA,
    }
}

/// What [`judge`] decided.
#[derive(Debug, Clone, PartialEq)]
pub struct Stop {
    pub experiment: String,
    pub variant: String,
    /// `stopped` or `winner`.
    pub state: &'static str,
    pub reason: String,
}

/// Judges the flow's step experiments that have `auto_stop`: once a variant's always-valid
/// p-value against the control falls below `alpha / (k − 1)` (k variants), the worse of the
/// two stops taking new contacts; with two variants the better becomes the winner. Records
/// every compared variant's p-value (the smallest seen is what is reported). Each stop is
/// written once: a replica judging the same counts a moment later writes nothing and answers
/// no stop. Answers the stops this call wrote.
pub async fn judge(
    core: &Core,
    account_id: &str,
    flow_id: &str,
) -> Result<Vec<Stop>, ServiceError> {
    let stats = get(core, account_id, flow_id, 0, None).await?;
    let now_ms = crate::clock::to_millis(core.clock.now());
    let mut written = Vec::new();
    let mut judged: Vec<String> = Vec::new();
    for step in &stats.steps {
        let Some(e) = &step.experiment else { continue };
        if judged.contains(&e.key) {
            continue;
        }
        judged.push(e.key.clone());
        for v in e.variants.iter().skip(1) {
            if let Some(c) = v.comparison {
                store::variant_states::record_p(
                    &core.db,
                    account_id,
                    &stats.flow_id,
                    &e.key,
                    &v.name,
                    c.p_value,
                )
                .await?;
            }
        }
        if !e.settings.auto_stop || e.sample_ratio_warning {
            // A broken split decides nothing: its figures are not to be trusted.
            continue;
        }
        let k = e.variants.len();
        let threshold = e.settings.alpha / (k.max(2) - 1) as f64;
        let control = &e.variants[0];
        for v in e.variants.iter().skip(1) {
            let Some(c) = v.comparison else { continue };
            if c.p_value >= threshold
                || control.state != VariantState::Running
                || v.state != VariantState::Running
            {
                continue;
            }
            let (loser, better) = if c.difference > 0.0 {
                (control, v)
            } else {
                (v, control)
            };
            let reason = format!(
                "auto_stop: `{}` {}/{} ({:.4}) against `{}` {}/{} ({:.4}): difference {:+.4}, \
                 interval [{:.4}, {:.4}], p {:.6} < {:.6} (alpha {} over {} comparison{})",
                v.name,
                v.converted,
                v.exposed,
                v.rate,
                control.name,
                control.converted,
                control.exposed,
                control.rate,
                c.difference,
                c.ci_low,
                c.ci_high,
                c.p_value,
                threshold,
                e.settings.alpha,
                k - 1,
                if k == 2 { "" } else { "s" },
            );
            let stopped = store::variant_states::decide(
                &core.db,
                account_id,
                &stats.flow_id,
                &e.key,
                &loser.name,
                "stopped",
                &reason,
                "auto_stop",
                now_ms,
            )
            .await?;
            if !stopped {
                continue;
            }
            written.push(Stop {
                experiment: e.key.clone(),
                variant: loser.name.clone(),
                state: "stopped",
                reason: reason.clone(),
            });
            if k == 2
                && store::variant_states::decide(
                    &core.db,
                    account_id,
                    &stats.flow_id,
                    &e.key,
                    &better.name,
                    "winner",
                    &reason,
                    "auto_stop",
                    now_ms,
                )
                .await?
            {
                written.push(Stop {
                    experiment: e.key.clone(),
                    variant: better.name.clone(),
                    state: "winner",
                    reason,
                });
            }
            // One stop per experiment a pass: the next pass compares what is left.
            break;
        }
    }
    Ok(written)
}

/// Judges every flow whose experiments counted a conversion or an exposure since `since_ms`
/// ([`judge`]); what a replica's background pass runs.
pub async fn judge_recent(core: &Core, since_ms: i64) -> Result<usize, ServiceError> {
    let mut stops = 0;
    for (account_id, flow_id) in store::flow_stats::experimenting_since(&core.db, since_ms).await? {
        stops += judge(core, &account_id, &flow_id).await?.len();
    }
    Ok(stops)
}

/// What a person asks of a variant ([`set_variant_state`]).
#[derive(Debug, Clone, Copy)]
pub struct VariantChange<'a> {
    /// The step whose experiment it is (any of a shared experiment's steps).
    pub step: &'a str,
    pub variant: &'a str,
    /// Stop it (true) or restart it (false).
    pub stop: bool,
    /// Why, kept with a stop.
    pub reason: &'a str,
    /// Who.
    pub by: &'a str,
}

/// `SetVariantState`: a person stops a variant (it takes no new contacts; contacts already
/// given it keep it) or restarts it. Stopping the last running variant is refused.
pub async fn set_variant_state(
    core: &Core,
    account_id: &str,
    flow_id: &str,
    change: &VariantChange<'_>,
) -> Result<FlowStats, ServiceError> {
    let VariantChange {
        step,
        variant,
        stop,
        reason,
        by,
    } = *change;
    use crate::service::fields::{self, Limit};
    let mut problems = crate::service::Violations::default();
    problems.check(fields::check_text("step", step, Limit::Name));
    problems.check(fields::check_text("variant", variant, Limit::Name));
    problems.check(fields::check_text("reason", reason, Limit::Text));
    problems.check(fields::check_text("by", by, Limit::Email));
    problems.finish()?;
    let latest = flows::get(core, account_id, flow_id, 0).await?;
    let flow = parse(core, &latest)?;
    let Some((key, _, _)) = flow.experiment_of(step) else {
        return Err(ServiceError::Invalid(vec![crate::service::Violation::new(
            "step",
            crate::code::Code::BadSchema,
            format!(
                "step `{step}` of flow `{}` (version {}) has no variants; name a step that has",
                latest.name, latest.version
            ),
        )]));
    };
    let names: Vec<String> = flow
        .step(step)
        .map(|s| s.variants.iter().map(|v| v.name.clone()).collect())
        .unwrap_or_default();
    if !names.contains(&variant.to_string()) {
        return Err(ServiceError::Invalid(vec![crate::service::Violation::new(
            "variant",
            crate::code::Code::BadSchema,
            format!(
                "step `{step}` has no variant `{variant}`; its variants are {}",
                names.join(", ")
            ),
        )]));
    }
    let now_ms = crate::clock::to_millis(core.clock.now());
    if stop {
        let stopped =
            store::variant_states::stopped_of_flow(&core.db, account_id, &latest.id).await?;
        let already = stopped.get(&key);
        let running = names
            .iter()
            .filter(|n| *n != variant && !already.is_some_and(|s| s.contains(*n)))
            .count();
        if running == 0 {
            return Err(ServiceError::FailedPrecondition(format!(
                "every other variant of `{step}` is stopped; restart one before stopping `{variant}`"
            )));
        }
        let reason = if reason.is_empty() {
            format!("stopped by {by}")
        } else {
            format!("stopped by {by}: {reason}")
        };
        store::variant_states::decide(
            &core.db, account_id, &latest.id, &key, variant, "stopped", &reason, by, now_ms,
        )
        .await?;
    } else {
        store::variant_states::restart(&core.db, account_id, &latest.id, &key, variant).await?;
    }
    get(core, account_id, &latest.id, 0, None).await
}

/// How often a replica judges the experiments that had news, and how far back it looks.
pub const JUDGE_EVERY: std::time::Duration = std::time::Duration::from_secs(60);
/// How often a replica folds the flows whose count rows piled up (beyond [`FOLD_ROWS`]).
pub const FOLD_EVERY: std::time::Duration = std::time::Duration::from_secs(600);
/// Count rows a flow may have before the background pass folds them.
pub const FOLD_ROWS: i64 = 1_000;

/// The background pass every replica runs: judges recent experiments every [`JUDGE_EVERY`]
/// (so `auto_stop` acts without anyone reading the statistics) and folds crowded flows every
/// [`FOLD_EVERY`]. Replicas may run it at once: a stop is written once and a fold skips the
/// rows another holds.
pub async fn run_upkeep(core: Core, mut stop: crate::runtime::Stop) {
    let mut judge_tick = tokio::time::interval(JUDGE_EVERY);
    let mut fold_tick = tokio::time::interval(FOLD_EVERY);
    judge_tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    fold_tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = stop.stopped() => return,
            _ = judge_tick.tick() => {
                // Two passes' worth of hours back: nothing between two passes is missed.
                let since = crate::clock::to_millis(core.clock.now())
                    - 2 * JUDGE_EVERY.as_millis() as i64
                    - store::flow_stats::HOUR_MS;
                match judge_recent(&core, since).await {
                    Ok(0) => {}
                    Ok(n) => tracing::info!(stops = n, "step experiments stopped variants"),
                    Err(e) => tracing::warn!(error = %e, "judging step experiments failed"),
                }
            }
            _ = fold_tick.tick() => {
                match store::flow_stats::crowded(&core.db, FOLD_ROWS).await {
                    Ok(flows) => {
                        for (account, flow) in flows {
                            if let Err(e) = store::flow_stats::fold(&core.db, &account, &flow).await {
                                tracing::warn!(error = %e, flow = %flow, "folding flow counts failed");
                            }
                        }
                    }
                    Err(e) => tracing::warn!(error = %e, "finding flows to fold failed"),
                }
            }
        }
    }
}
