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
        // Best effort: the answer stands either way, and the next read folds again.
        if let Err(e) = store::flow_stats::fold(&core.db, account_id, &latest.id).await {
            tracing::warn!(error = %e, flow = %latest.id, "folding flow counts failed");
        }
    }

    // The versions whose steps are listed: the one asked for, or every one counted.
    let mut parsed: Vec<Arc<Flow>> = vec![parse(core, &latest)?];
    if version == 0 {
        let mut others: Vec<i32> = rows.iter().map(|r| r.flow_version).collect();
        others.sort_unstable_by(|a, b| b.cmp(a));
        others.dedup();
        for v in others.into_iter().filter(|&v| v != latest.version) {
            let older = flows::get(core, account_id, &latest.id, v).await?;
            parsed.push(parse(core, &older)?);
        }
    }

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
                experiment_stats(key, settings, &step.variants, |variant| {
                    arms.get(&(id, variant)).copied().unwrap_or_default()
                })
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
