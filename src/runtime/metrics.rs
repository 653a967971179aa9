//! Prometheus metrics (docs/operations.md), kept per process through `metrics` and rendered by
//! `metrics-exporter-prometheus` (the classic text format, 0.0.4).
//!
//! The recorder is this [`Metrics`]' own, never the process-global one: every record goes
//! through [`metrics::with_local_recorder`], so two servers in one process (the tests) keep
//! their numbers apart, and nothing here depends on start-up order.
//!
//! Counters and histograms are recorded where the work happens (the planner, the engine
//! apply, signal receipts, the edge's request span). Gauges that need a count query
//! (enrollments by status, waiting runs by reason, pending dispatches) are set by
//! [`run_refresher`] in the background, every `--metrics-refresh` (15 s by default), never per
//! scrape; the wait reasons come from a census that explains at most [`SCAN_BUDGET`] pages of
//! live enrollments per refresh. The pool gauges are read from the pool at scrape time (no
//! query).

use crate::engine::{self, Status, WaitReason};
use crate::runtime::{Core, Stop};
use crate::store::{self, StoreError};
use crate::timing::Channel;
use metrics::{counter, describe_counter, describe_gauge, describe_histogram, gauge, histogram};
use metrics_exporter_prometheus::{
    Matcher, PrometheusBuilder, PrometheusHandle, PrometheusRecorder,
};
use std::collections::BTreeMap;
use std::time::Duration;

/// The default interval of the count-based gauges.
pub const DEFAULT_REFRESH: Duration = Duration::from_secs(15);

/// Wake minus due, 1 ms to 65 s by doubling: fine where lateness matters (milliseconds) and
/// still bounded at a minute.
pub const LATENESS_BUCKETS: [f64; 17] = [
    0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.128, 0.256, 0.512, 1.024, 2.048, 4.096,
    8.192, 16.384, 32.768, 65.536,
];

/// Request and planner-batch durations: 1 ms to 10 s.
const DURATION_BUCKETS: [f64; 12] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0,
];

/// Signals a router task took into one group: 1 to the most a group holds, by doubling.
const GROUP_BUCKETS: [f64; 9] = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0];

/// One process's metrics.
pub struct Metrics {
    recorder: PrometheusRecorder,
    handle: PrometheusHandle,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    /// A recorder with the buckets and descriptions of every metric.
    pub fn new() -> Metrics {
        let builder = PrometheusBuilder::new()
            .set_buckets_for_metric(
                Matcher::Full("nudge_timer_lateness_seconds".into()),
                &LATENESS_BUCKETS,
            )
            .and_then(|b| {
                b.set_buckets_for_metric(
                    Matcher::Full("nudge_signal_group_size".into()),
                    &GROUP_BUCKETS,
                )
            })
            .and_then(|b| b.set_buckets(&DURATION_BUCKETS))
            .expect("the bucket lists are not empty");
        let recorder = builder.build_recorder();
        let handle = recorder.handle();
        let m = Metrics { recorder, handle };
        m.record(describe);
        m
    }

    /// Runs `f` with this recorder as the current one (the `metrics` macros inside it record
    /// here).
    pub fn record<T>(&self, f: impl FnOnce() -> T) -> T {
        metrics::with_local_recorder(&self.recorder, f)
    }

    /// A batch's timers fired each `late` after it was due. One histogram handle a batch: the
    /// macro looks the histogram up in the registry each time it runs, which cost a due step
    /// more than recording did.
    pub fn timer_lateness(&self, late: &[chrono::Duration]) {
        self.record(|| {
            let histogram = histogram!("nudge_timer_lateness_seconds");
            for late in late {
                let secs = late.num_microseconds().unwrap_or(i64::MAX).max(0) as f64 / 1e6;
                histogram.record(secs);
            }
        });
    }

    /// A planner batch took `took`.
    pub fn planner_batch(&self, took: Duration) {
        self.record(|| histogram!("nudge_planner_batch_seconds").record(took.as_secs_f64()));
    }

    /// A router task took `signals` into one group: how well concurrent signals share their
    /// transaction (a group's cost is mostly per statement).
    pub fn signal_group(&self, signals: usize) {
        self.record(|| histogram!("nudge_signal_group_size").record(signals as f64));
    }

    /// Runs entered, by step type.
    pub fn transitions(&self, step_types: &BTreeMap<&'static str, u64>) {
        self.record(|| {
            for (t, n) in step_types {
                counter!("nudge_transitions_total", "step_type" => *t).increment(*n);
            }
        });
    }

    /// What a signal of `kind` did, by effect (`none` when it reached no enrollment).
    pub fn signal(&self, kind: &'static str, effects: &BTreeMap<&'static str, u64>) {
        self.record(|| {
            if effects.is_empty() {
                counter!("nudge_signals_total", "kind" => kind, "effect" => "none").increment(1);
            }
            for (effect, n) in effects {
                counter!("nudge_signals_total", "kind" => kind, "effect" => *effect).increment(*n);
            }
        });
    }

    /// A new human reply whose words were read: by intent and the channel it came on.
    pub fn reply(&self, intent: &'static str, channel: String) {
        self.record(|| {
            counter!("nudge_replies_total", "intent" => intent, "channel" => channel).increment(1);
        });
    }

    /// One request answered.
    pub fn request(&self, interface: &'static str, method: String, code: String, took: Duration) {
        self.record(|| {
            let labels = [
                ("interface", interface.to_string()),
                ("method", method),
                ("code", code),
            ];
            counter!("nudge_requests_total", &labels).increment(1);
            histogram!("nudge_request_seconds", &labels).record(took.as_secs_f64());
        });
    }

    /// The count-based gauges, as the refresher read them.
    pub fn set_counts(&self, counts: &Counts) {
        self.record(|| {
            for (status, n) in &counts.enrollments {
                gauge!("nudge_enrollments", "status" => *status).set(*n as f64);
            }
            for (reason, n) in &counts.waiting {
                gauge!("nudge_waiting_runs", "reason" => reason.as_str()).set(*n as f64);
            }
            for (channel, (n, oldest)) in &counts.pending {
                gauge!("nudge_dispatches_pending", "channel" => channel.as_str()).set(*n as f64);
                gauge!("nudge_dispatch_oldest_pending_seconds", "channel" => channel.as_str())
                    .set(*oldest);
            }
        });
    }

    /// The exposition, with the pool gauges read now.
    pub fn render(&self, db: &store::Db) -> String {
        let pool = db.pool_status();
        self.record(|| {
            gauge!("nudge_db_connections", "state" => "in_use").set(pool.in_use as f64);
            gauge!("nudge_db_connections", "state" => "idle").set(pool.idle as f64);
            gauge!("nudge_db_connections_max").set(pool.max as f64);
        });
        self.handle.render()
    }
}

fn describe() {
    describe_histogram!(
        "nudge_timer_lateness_seconds",
        metrics::Unit::Seconds,
        "How late a due enrollment was woken: wake time minus next_run_at."
    );
    describe_gauge!("nudge_enrollments", "Enrollments by status.");
    describe_gauge!(
        "nudge_waiting_runs",
        "Active and paused enrollments by what they wait for (Explain's reason)."
    );
    describe_gauge!(
        "nudge_dispatches_pending",
        "Dispatches waiting to be claimed, by channel."
    );
    describe_gauge!(
        "nudge_dispatch_oldest_pending_seconds",
        metrics::Unit::Seconds,
        "Age of the oldest pending dispatch past its due time, by channel (0 when none)."
    );
    describe_counter!("nudge_transitions_total", "Runs entered, by step type.");
    describe_counter!(
        "nudge_signals_total",
        "Signals received, by kind and what they did per enrollment reached."
    );
    describe_counter!(
        "nudge_replies_total",
        "Human replies received, by what their words said (intent) and channel."
    );
    describe_histogram!(
        "nudge_planner_batch_seconds",
        metrics::Unit::Seconds,
        "Duration of one planner batch (claim, step, write)."
    );
    describe_histogram!(
        "nudge_signal_group_size",
        metrics::Unit::Count,
        "Signals routed in one transaction (a router task's group)."
    );
    describe_counter!(
        "nudge_requests_total",
        "Requests answered, by interface (grpc, http), method or route, and code."
    );
    describe_histogram!(
        "nudge_request_seconds",
        metrics::Unit::Seconds,
        "Request duration, by interface, method or route, and code."
    );
    describe_gauge!(
        "nudge_db_connections",
        "Database pool connections by state (in_use, idle)."
    );
    describe_gauge!("nudge_db_connections_max", "Database pool size limit.");
}

/// What the count-based gauges show.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Counts {
    /// Enrollments by status, every status present (0 when none).
    pub enrollments: BTreeMap<&'static str, u64>,
    /// Live enrollments by wait reason, every reason present.
    pub waiting: BTreeMap<WaitReason, u64>,
    /// Pending dispatches by channel: how many, and the oldest one's age past due (seconds).
    pub pending: BTreeMap<Channel, (u64, f64)>,
}

/// Enrollments read per query while counting wait reasons (the live ones are explained).
const SCAN_PAGE: i64 = 1_000;
/// The most pages of enrollments one refresh reads (100,000 enrollments). Counting
/// wait reasons means reading and explaining every live enrollment; with 10,000,000 stored a
/// whole pass took longer than the interval, so the refresher never rested and the planner's
/// wake latency rose from 1 ms to 315 ms at p99. A pass now walks the table a slice
/// per refresh, and the gauges show the last complete pass.
pub const SCAN_BUDGET: usize = 100;

/// The census of wait reasons, carried from one refresh to the next: where the current pass
/// is, what it counted so far, the last complete pass, and the statuses counted when the
/// current pass began.
#[derive(Debug, Clone, Default)]
pub struct Census {
    after: String,
    partial: BTreeMap<WaitReason, u64>,
    done: Option<BTreeMap<WaitReason, u64>>,
    statuses: Option<Vec<(String, i64)>>,
}

/// Reads the counts: one grouped query for pending dispatches; at most `budget` pages
/// ([`SCAN_BUDGET`] in the refresher) of the `census`'s keyset scan of enrollments for the
/// wait reasons (each live one explained by the pure [`engine::explain()`], the same answer
/// Explain gives), which are those of the last complete pass (until one completes, the counts
/// so far); and the enrollments by status, counted as each pass begins. That count reads the
/// whole table (2.2 s at 10,000,000), so once a pass rather than every refresh: on a table a
/// refresh covers whole, that is every refresh as before.
///
/// `pace` is a pause before each page after the first: the refresher spreads a refresh's pages
/// over half its interval, so the census never takes the cores in one burst.
pub async fn count(
    core: &Core,
    census: &mut Census,
    budget: usize,
    pace: Duration,
) -> Result<Counts, StoreError> {
    let now = core.clock.now();
    let mut counts = Counts::default();
    for s in [
        Status::Active,
        Status::Paused,
        Status::Completed,
        Status::Exited,
        Status::Failed,
    ] {
        counts.enrollments.insert(s.as_str(), 0);
    }
    if census.after.is_empty() {
        census.statuses = Some(store::enrollments::count_by_status(&core.db).await?);
    }
    for (status, n) in census.statuses.iter().flatten() {
        let n = *n;
        if let Some(s) = Status::parse(status) {
            counts.enrollments.insert(s.as_str(), n as u64);
        }
    }
    for r in WaitReason::ALL {
        counts.waiting.insert(r, 0);
    }
    let mut pages = 0;
    loop {
        if pages == budget.max(1) {
            break;
        }
        if pages > 0 && !pace.is_zero() {
            tokio::time::sleep(pace).await;
        }
        pages += 1;
        let page = store::enrollments::page_after(&core.db, &census.after, SCAN_PAGE).await?;
        let ended = (page.len() as i64) < SCAN_PAGE;
        if let Some(last) = page.last() {
            census.after = last.id.clone();
        }
        for row in page
            .iter()
            .filter(|r| store::enrollments::LIVE.contains(&r.status.as_str()))
        {
            let key = (row.flow_id.clone(), row.flow_version);
            let definition = if core.flows.contains(&key) {
                None
            } else {
                store::flows::get(&core.db, &row.account_id, &row.flow_id, row.flow_version)
                    .await?
                    .map(|f| f.version.definition)
            };
            let (Ok(state), Ok(flow)) = (
                row.engine_state(),
                core.flows.get_or_parse(&key, definition.as_deref()),
            ) else {
                continue;
            };
            if let Some(r) = engine::explain(&state, &flow, now).reason {
                *census.partial.entry(r).or_insert(0) += 1;
            }
        }
        if ended {
            census.done = Some(std::mem::take(&mut census.partial));
            census.after.clear();
            break;
        }
    }
    let reasons = census.done.as_ref().unwrap_or(&census.partial);
    for (r, n) in reasons {
        counts.waiting.insert(*r, *n);
    }
    for c in Channel::ALL {
        counts.pending.insert(c, (0, 0.0));
    }
    let now_ms = crate::clock::to_millis(now);
    for (channel, n, oldest) in store::dispatches::pending_by_channel(&core.db).await? {
        if let Ok(c) = channel.parse::<Channel>() {
            let age = oldest.map_or(0.0, |due| (now_ms - due).max(0) as f64 / 1000.0);
            counts.pending.insert(c, (n as u64, age));
        }
    }
    Ok(counts)
}

/// The pause between two pages of a refresh's census: its pages spread over half of `every`.
///
/// Read in one go, a refresh of 100,000 enrollments took a core for about 0.4 s every 15 s, and
/// the webhooks answered meanwhile waited behind it (signals bench, alternated runs: p99 19–22
/// ms with the census in the measured seconds, 11–14 ms without it).
pub fn census_pace(every: Duration) -> Duration {
    every / (2 * SCAN_BUDGET as u32)
}

/// Sets the count-based gauges now, then every `every`, until `stop`.
pub async fn run_refresher(core: Core, every: Duration, mut stop: Stop) {
    let mut census = Census::default();
    let pace = census_pace(every);
    loop {
        let counted = tokio::select! {
            counted = count(&core, &mut census, SCAN_BUDGET, pace) => counted,
            () = stop.stopped() => return,
        };
        match counted {
            Ok(counts) => core.metrics.set_counts(&counts),
            Err(e) => tracing::warn!(error = %e, "cannot refresh the metrics' counts"),
        }
        tokio::select! {
            () = tokio::time::sleep(every) => {}
            () = stop.stopped() => return,
        }
    }
}
