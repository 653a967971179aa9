//! Engine figures on a real database. Prints one line per figure.
//!
//! - default (`--mode throughput`): `BatchEnroll` rate (`--callers` side by side, calls of
//!   `--enroll-batch` items, 10,000 by default), and the planner's due-step rate with N
//!   enrollments due at once (manual clock, `Planner::drain`). With `--consumers K`, K delivery
//!   workers claim (1,000 at a time) and ack (BatchAckDispatch of `--ack-batch`, 1,000, or with
//!   `--ack-batch 1` one AckDispatch each; `--acks-in-flight` calls each, 8) every dispatch while
//!   the planner drains, through the service calls the gRPC adapter makes, and a line gives the
//!   steps/s up to the last ack; `--signals S` then reports S reply signals, one per enrolled
//!   contact, `--signal-concurrency` (32) at a time. `--variants 1` runs the same flow with a
//!   step experiment on its email (exposures written at each ack, conversions at each reply),
//!   to compare the two. Every run ends with `GetFlowStats` read 21 times (the first folds the
//!   count rows the run appended), its figures checked against the run.
//! - `--via grpc` (module `grpc`): the same run through a real `nudge serve --clock manual`
//!   (the `nudge` binary next to this one) and the tonic client: BatchEnroll calls of 1,000,
//!   `TestClockService.Advance` to make them due, ClaimDispatches/AckDispatch workers (2 by
//!   default) until the last ack, ReportSignal (10,000 by default). With
//!   `--compare-database-url`, the in-process run with the same settings first, on that
//!   database, and the ratios.
//! - `--mode wake-latency`: the real planner loop of `nudge serve` (system clock, `Wakeup` and
//!   on PostgreSQL `LISTEN/NOTIFY`) while timers are created at `--rate` per second for `--secs`
//!   seconds (every 10 ms a `BatchEnroll` into `wait 2s → end`); the latency of a wake is the
//!   time its batch ran (the journey's `run_closed` entry) minus the wait's due time.
//! - `--mode caps`: the planner's due-step rate without and with sending capacity (docs/capacity.md),
//!   in the same run on the same database: `--n` enrollments spread over `--senders` senders
//!   without caps, all due at once; then as many over as many senders whose email `daily` cap
//!   is two thirds of their share, so a third of the steps are deferred (each deferral is a
//!   processed step too: it computes the slot and writes the deferral).
//! - `--mode migrate`: `MigrateEnrollments` of `--n` enrollments (waiting at `w1`) to a
//!   second version of the flow, in one call, while the planner drains the same enrollments'
//!   due steps (each one is stepped on the first version or the second, never twice); the
//!   move's time, the planner's steps/s meanwhile, and the versions counted after.
//! - `--mode memory`: RSS while `BatchEnroll` stores `--n` enrollments that wait 30 days (every
//!   100,000), then while the planner loop works through `--rounds` rounds of `--due`
//!   enrollments due a second after they are enrolled.
//!
//! `--help` prints example runs of each mode (`USAGE`).
//! Use an empty database for each run: the bench migrates it and enrolls into the default
//! account. `--stored M` (PostgreSQL, throughput and wake-latency) first stores M enrollments
//! that are not due, so the figures show what a big table costs (docs/benchmarks.md, "10,000,000 stored enrollments").

use chrono::{DateTime, Duration, Utc};

/// `--features mimalloc`: the allocator measured against glibc's (docs/benchmarks.md).
#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
/// jemalloc, the default (feature `jemalloc`): fewer instructions a step than the system's
/// malloc, within the memory bound (docs/benchmarks.md); `--no-default-features` leaves it out.
#[cfg(all(feature = "jemalloc", not(feature = "mimalloc")))]
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use futures_util::{StreamExt, TryStreamExt};
use nudge::api::AppState;
use nudge::app::App;
use nudge::clock::{to_millis, Clock, ManualClock, SystemClock};
use nudge::config::{ClockKind, Config, DatabaseUrl};
use nudge::inbound::SignalKind;
use nudge::planner::Planner;
use nudge::service::contacts::{self as contact_service, ContactInput};
use nudge::service::enrollments::{self, EnrollInput};
use nudge::service::flows;
use nudge::service::signals;
use nudge::store::accounts::DEFAULT_ACCOUNT_ID;
use nudge::store::contacts::ContactRow;
use nudge::store::schema::contacts;
use nudge::store::schema::{enrollment_keys, enrollments as enrollments_table, journey};
use nudge::store::Db;
use run::{Acks, Figures, Run};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

mod grpc;
mod run;

/// Runs `$body` with `$c` bound to a pooled connection of whichever backend `$db` is (the body
/// is compiled for each): the bench reads its results with plain diesel.
macro_rules! on_db {
    ($db:expr, $c:ident => $body:expr) => {
        match $db {
            Db::Postgres(pool) => {
                let mut pooled = pool.get().await?;
                let $c = &mut *pooled;
                $body
            }
            Db::Sqlite(pool) => {
                let mut pooled = pool.get().await?;
                let $c = &mut *pooled;
                $body
            }
        }
    };
}

/// A wait, an email, a wait, then the end: every wake is one step of real work.
pub(crate) const FLOW: &str = r#"{
  "name": "bench",
  "start": "w1",
  "steps": {
    "w1": { "type": "wait", "params": { "duration": "1h" }, "next": { "then": "mail" } },
    "mail": { "type": "email", "params": { "template": "t" }, "next": { "then": "w2" } },
    "w2": { "type": "wait", "params": { "duration": "1h" }, "next": { "then": "done" } },
    "done": { "type": "end" }
  }
}"#;

pub(crate) fn arg(name: &str) -> Option<String> {
    // The list `check_args` accepts must name every flag read, or that flag would be refused.
    assert!(
        FLAGS.contains(&name),
        "nudge-bench reads {name}: add it to FLAGS"
    );
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

/// [`FLOW`] with a step experiment on the email (`--variants 1`): each ack of it writes an
/// exposure, each reply after it a conversion.
pub(crate) const VARIANT_FLOW: &str = r#"{
  "name": "bench",
  "start": "w1",
  "steps": {
    "w1": { "type": "wait", "params": { "duration": "1h" }, "next": { "then": "mail" } },
    "mail": { "type": "email", "params": { "template": "t" },
              "variants": [ { "name": "a" }, { "name": "b", "params": { "template": "t_b" } } ],
              "experiment": { "goal": "reply" },
              "next": { "then": "w2" } },
    "w2": { "type": "wait", "params": { "duration": "1h" }, "next": { "then": "done" } },
    "done": { "type": "end" }
  }
}"#;

/// Wake latency: a two-second wait, then the end.
const LATENCY_FLOW: &str = r#"{
  "name": "latency",
  "start": "w",
  "steps": {
    "w": { "type": "wait", "params": { "duration": "2s" }, "next": { "then": "done" } },
    "done": { "type": "end" }
  }
}"#;

/// Memory: what stays stored for a month.
const HOLD_FLOW: &str = r#"{
  "name": "hold",
  "start": "w",
  "steps": {
    "w": { "type": "wait", "params": { "duration": "30d" }, "next": { "then": "done" } },
    "done": { "type": "end" }
  }
}"#;

/// Memory: the due subset, woken a second after enrolling, sends an email and ends.
const DUE_FLOW: &str = r#"{
  "name": "due",
  "start": "w",
  "steps": {
    "w": { "type": "wait", "params": { "duration": "1s" }, "next": { "then": "mail" } },
    "mail": { "type": "email", "params": { "template": "t" }, "next": { "then": "done" } },
    "done": { "type": "end" }
  }
}"#;

pub(crate) fn num<T: std::str::FromStr>(name: &str, default: T) -> anyhow::Result<T>
where
    T::Err: std::error::Error + Send + Sync + 'static,
{
    Ok(arg(name).map(|s| s.parse()).transpose()?.unwrap_or(default))
}

/// Where the bench runs without `--database-url`.
pub(crate) const DEFAULT_DATABASE_URL: &str = "sqlite://bench.db";

/// Every flag the bench reads; each takes a value. Checked before anything runs, so a typo
/// (or `--help`) is not a silent default run on `bench.db` in the current folder.
const FLAGS: &[&str] = &[
    "--ack-batch",
    "--acks-in-flight",
    "--batch",
    "--callers",
    "--compare-database-url",
    "--consumers",
    "--database-url",
    "--due",
    "--enroll-batch",
    "--mode",
    "--n",
    "--rate",
    "--rounds",
    "--secs",
    "--senders",
    "--signal-concurrency",
    "--signals",
    "--stored",
    "--variants",
    "--via",
    "--workers",
];

/// What `--help` prints: a run of each mode.
const USAGE: &str = "\
usage: nudge-bench [--flag value]...   (use an empty database for each run)
  nudge-bench --database-url sqlite:///tmp/bench.db --n 20000
  nudge-bench --database-url postgres://postgres@127.0.0.1/bench --n 100000 [--callers 1] [--batch 1000] [--workers 4]
  nudge-bench --via grpc --database-url postgres://postgres@127.0.0.1/bench_grpc --compare-database-url postgres://postgres@127.0.0.1/bench --n 100000 --callers 4
  nudge-bench --database-url postgres://postgres@127.0.0.1/bench --mode wake-latency --rate 1000 --secs 10
  nudge-bench --database-url postgres://postgres@127.0.0.1/bench --mode memory --n 1000000
  nudge-bench --database-url postgres://postgres@127.0.0.1/bench --mode caps --n 30000 --senders 1000
  nudge-bench --database-url postgres://postgres@127.0.0.1/bench --mode migrate --n 100000
  nudge-bench --database-url postgres://postgres@127.0.0.1/bench --n 1000000 --consumers 2 --signals 100000 --variants 1";

/// `Ok(true)` when the arguments ask for help; an error naming the first argument that is
/// not a known flag followed by its value.
fn check_args(args: &[String]) -> anyhow::Result<bool> {
    let mut rest = args.iter();
    while let Some(flag) = rest.next() {
        if flag == "--help" || flag == "-h" {
            return Ok(true);
        }
        anyhow::ensure!(
            FLAGS.contains(&flag.as_str()),
            "unknown argument `{flag}`: the flags are {} (each with a value); --help shows runs",
            FLAGS.join(", ")
        );
        anyhow::ensure!(
            rest.next().is_some(),
            "`{flag}` needs a value: `{flag} VALUE`"
        );
    }
    Ok(false)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    if check_args(&std::env::args().skip(1).collect::<Vec<_>>())? {
        println!("{USAGE}");
        return Ok(());
    }
    let url = DatabaseUrl::parse(&arg("--database-url").unwrap_or(DEFAULT_DATABASE_URL.into()))
        .map_err(anyhow::Error::msg)?;
    if let Some(via) = arg("--via") {
        anyhow::ensure!(
            via == "grpc",
            "unknown --via {via}: grpc (or leave it out: in process)"
        );
        return grpc::throughput(url).await;
    }
    match arg("--mode").as_deref().unwrap_or("throughput") {
        "throughput" => {
            let run = Run::from_args(enrollments::MAX_BATCH, 0, 0)?;
            throughput(url, &run).await.map(drop)
        }
        "wake-latency" => wake_latency(url).await,
        "memory" => memory(url).await,
        "caps" => caps(url).await,
        "migrate" => migrate(url).await,
        other => anyhow::bail!(
            "unknown --mode {other}: throughput, wake-latency, memory, caps or migrate"
        ),
    }
}

/// The service's configuration for an in-process run, with patient database timeouts: under
/// callgrind (scripts/instructions-per-step.sh) the process runs some fifty times slower, and
/// a connection's startup, or a batch's answer, would miss the service's 5 s and 20 s.
fn bench_config(url: DatabaseUrl, clock: ClockKind) -> anyhow::Result<Config> {
    let mut config = Config::new("127.0.0.1:0".parse()?, url, clock);
    config.database_connect_timeout = std::time::Duration::from_secs(120);
    let pg = &mut config.database.postgres;
    pg.connect = std::time::Duration::from_secs(120);
    pg.statement = std::time::Duration::ZERO;
    pg.answer = std::time::Duration::from_secs(600);
    Ok(config)
}

/// An in-process app on `url` with a manual clock at the host's time, `flow` created and `n`
/// contacts (`c0`, `c1`, …) stored: how every in-process mode starts. The app is returned to be
/// kept alive for the run.
async fn manual_app(
    url: &DatabaseUrl,
    flow: &str,
    n: usize,
) -> anyhow::Result<(App, AppState, Arc<ManualClock>)> {
    let mut config = bench_config(url.clone(), ClockKind::Manual)?;
    config.announce_first_token = false;
    let clock = Arc::new(ManualClock::new(SystemClock.now()));
    let app = App::build_with_clock(config, clock.clone()).await?;
    let state = app.state().clone();
    let now = clock.now();
    flows::create(&state.core, DEFAULT_ACCOUNT_ID, flow, now).await?;
    insert_contacts(&state.core.db, n, now).await?;
    Ok((app, state, clock))
}

/// The in-process run: BatchEnroll, the planner's drain of N due enrollments (with delivery
/// workers acking meanwhile when `run.consumers` > 0), then reply signals.
pub(crate) async fn throughput(url: DatabaseUrl, run: &Run) -> anyhow::Result<Figures> {
    let mut figures = Figures::default();
    let variants = num("--variants", 0u8)? == 1;
    let flow = if variants { VARIANT_FLOW } else { FLOW };
    let (_app, state, clock) = manual_app(&url, flow, run.n).await?;
    let now = clock.now();
    store_idle(&state).await?;
    // A line between setup and the measured phases, so a profiler reading the output (CPU
    // per phase) can tell them apart.
    println!("{url}: set up {} contacts", run.n);

    // `--callers` clients send BatchEnroll calls side by side, as a CRM's workers would; each
    // call's contacts are its own.
    let started = Instant::now();
    let queue = Arc::new(std::sync::Mutex::new(run.enroll_calls()));
    let mut clients = tokio::task::JoinSet::new();
    for _ in 0..run.callers {
        let (state, queue) = (state.clone(), queue.clone());
        clients.spawn(async move {
            loop {
                let next = queue.lock().expect("queue lock").next();
                let Some(contacts) = next else {
                    return Ok::<(), anyhow::Error>(());
                };
                let items = contacts
                    .map(|i| EnrollInput {
                        contact_id: format!("c{i}"),
                        flow_id: "bench".into(),
                        ..Default::default()
                    })
                    .collect();
                let results =
                    enrollments::batch_enroll(&state.core, DEFAULT_ACCOUNT_ID, items).await?;
                anyhow::ensure!(results.iter().all(|r| r.is_ok()), "an enrollment failed");
            }
        });
    }
    while let Some(joined) = clients.join_next().await {
        joined??;
    }
    figures.enrolled = run.print_enrolled(&url.to_string(), started.elapsed());

    // All of them are due at once an hour later: each wake sends the email and enters w2.
    // With `--consumers`, delivery workers claim and ack the dispatches meanwhile (the service
    // calls the gRPC adapter makes, without gRPC).
    let due = now + Duration::hours(1);
    clock.set(due);
    let mut planner = Planner::new(state.core.clone());
    if let Some(batch) = arg("--batch") {
        planner.batch = batch.parse()?;
    }
    if let Some(workers) = arg("--workers") {
        planner.workers = workers.parse()?;
    }
    let acks = Arc::new(Acks::new(run.n));
    let mut consumers = tokio::task::JoinSet::new();
    for _ in 0..run.consumers {
        consumers.spawn(consume(state.clone(), run.clone(), acks.clone()));
    }
    let started = Instant::now();
    let woken = planner.drain(due).await?;
    let secs = started.elapsed().as_secs_f64();
    figures.stepped = woken as f64 / secs;
    println!(
        "{url}: planner woke {woken} due enrollments (each: email dispatch + next wait) in {secs:.2} s = {:.0} steps/s (batch {}, workers {})",
        figures.stepped,
        planner.batch,
        planner.workers
    );
    if run.consumers > 0 {
        while let Some(joined) = consumers.join_next().await {
            joined??;
        }
        figures.delivered =
            Some(run.print_delivered(&url.to_string(), acks.count(), acks.elapsed_since(started)));
    }

    if run.signals > 0 {
        let kind = SignalKind::reply("email").map_err(|e| anyhow::anyhow!(e.message))?;
        let elapsed = run
            .report_signals(|i| {
                let (state, kind) = (state.clone(), kind.clone());
                async move {
                    let now = state.core.clock.now();
                    let contact = format!("c{i}");
                    let report = signals::Report {
                        contact: &contact,
                        kind,
                        provider_id: Some(format!("bench-{i}")),
                        words: signals::Words::default(),
                        intent: "",
                    };
                    signals::report(&state.signals, DEFAULT_ACCOUNT_ID, report, now).await?;
                    Ok::<(), anyhow::Error>(())
                }
            })
            .await?;
        figures.signalled = Some(run.print_signals(&url.to_string(), elapsed));
    }
    flow_stats_reads(&state, &url.to_string(), run.n).await?;
    if let Some(rss) = rss_kib() {
        println!("{url}: RSS after the run {} MiB", rss / 1024);
    }
    Ok(figures)
}

/// `GetFlowStats` of the bench flow after the run: the first read (which folds the count rows
/// the run appended, when they are many), then 20 more; the figures checked against the run.
async fn flow_stats_reads(state: &AppState, url: &str, n: usize) -> anyhow::Result<()> {
    use nudge::service::flow_stats;
    let (_, rows) = nudge::store::flow_stats::read(
        &state.core.db,
        DEFAULT_ACCOUNT_ID,
        &flows::get(&state.core, DEFAULT_ACCOUNT_ID, "bench", 0)
            .await?
            .id,
        i64::MIN,
    )
    .await?;
    let started = Instant::now();
    let first = flow_stats::get(&state.core, DEFAULT_ACCOUNT_ID, "bench", 0, None).await?;
    let first_ms = started.elapsed().as_secs_f64() * 1e3;
    let mut times = Vec::new();
    for _ in 0..20 {
        let started = Instant::now();
        let again = flow_stats::get(&state.core, DEFAULT_ACCOUNT_ID, "bench", 0, None).await?;
        times.push(started.elapsed().as_secs_f64() * 1e3);
        anyhow::ensure!(again.steps == first.steps, "a read answered other figures");
    }
    times.sort_by(f64::total_cmp);
    let mail = first
        .steps
        .iter()
        .find(|s| s.step == "mail")
        .ok_or_else(|| anyhow::anyhow!("no mail step in the statistics"))?;
    let entered = mail.count(nudge::engine::funnel::Metric::Entered);
    anyhow::ensure!(
        entered == n as i64,
        "the statistics count {entered} entered `mail`, the run woke {n}"
    );
    let exposed: i64 = mail
        .experiment
        .iter()
        .flat_map(|e| &e.variants)
        .map(|v| v.exposed)
        .sum();
    let converted: i64 = mail
        .experiment
        .iter()
        .flat_map(|e| &e.variants)
        .map(|v| v.converted)
        .sum();
    println!(
        "{url}: GetFlowStats with {n} enrollments ({rows} count rows): first read {first_ms:.1} ms, \
         then p50 {:.1} ms, max {:.1} ms (mail: entered {entered}, sent {}, exposed {exposed}, converted {converted})",
        times[times.len() / 2],
        times[times.len() - 1],
        mail.count(nudge::engine::funnel::Metric::Sent),
    );
    Ok(())
}

/// A delivery worker as a CRM runs one, in process: claims up to 1,000 due dispatches (what
/// ClaimDispatches does, unsubscribe headers included), acks them as sent (`ack_batch` per
/// call, `acks_in_flight` calls at a time), until every dispatch of the run is acked.
async fn consume(state: AppState, run: Run, acks: Arc<Acks>) -> anyhow::Result<()> {
    use nudge::service::dispatches::{self, AckItem, Outcome};
    use nudge::service::{approvals, unsubscribe};
    while !acks.all_done() {
        let mut rows =
            dispatches::claim(&state.core, DEFAULT_ACCOUNT_ID, 60_000, 1_000, &[]).await?;
        if rows.is_empty() {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            continue;
        }
        unsubscribe::attach(&state.core, DEFAULT_ACCOUNT_ID, &state.link_base, &mut rows).await?;
        approvals::attach_url(&state.link_base, &mut rows);
        let items: Vec<AckItem> = rows
            .into_iter()
            .map(|d| AckItem {
                outcome: Outcome::Sent {
                    provider_message_id: format!("p-{}", d.id),
                },
                lease_token: d.lease_token.unwrap_or_default(),
                id: d.id,
            })
            .collect();
        let chunks: Vec<Vec<_>> = items.chunks(run.ack_batch).map(<[_]>::to_vec).collect();
        futures_util::stream::iter(chunks)
            .map(|chunk| {
                let (state, acks) = (&state, &acks);
                async move {
                    if let [item] = chunk.as_slice() {
                        let AckItem {
                            id,
                            lease_token,
                            outcome,
                        } = item;
                        dispatches::ack(&state.core, DEFAULT_ACCOUNT_ID, id, lease_token, outcome)
                            .await?;
                    } else {
                        for answer in
                            dispatches::ack_batch(&state.core, DEFAULT_ACCOUNT_ID, &chunk).await?
                        {
                            answer?;
                        }
                    }
                    acks.add(chunk.len());
                    Ok::<(), anyhow::Error>(())
                }
            })
            .buffer_unordered(run.acks_in_flight)
            .try_collect::<()>()
            .await?;
    }
    Ok(())
}

/// `--mode migrate`: N enrollments enrolled (waiting at `w1`), then all due at once; the
/// planner drains them while one `MigrateEnrollments` call moves them to version 2.
async fn migrate(url: DatabaseUrl) -> anyhow::Result<()> {
    use nudge::service::enrollments::migrate::{self, MigrateRequest};
    let n: usize = num("--n", 100_000)?;
    let (_app, state, clock) = manual_app(&url, FLOW, n).await?;
    let now = clock.now();
    let run = Run::from_args(enrollments::MAX_BATCH, 0, 0)?;
    for contacts in run.enroll_calls() {
        let items = contacts
            .map(|i| EnrollInput {
                contact_id: format!("c{i}"),
                flow_id: "bench".into(),
                ..Default::default()
            })
            .collect();
        let results = enrollments::batch_enroll(&state.core, DEFAULT_ACCOUNT_ID, items).await?;
        anyhow::ensure!(results.iter().all(|r| r.is_ok()), "an enrollment failed");
    }
    // Version 2 changes the email's template and the second wait.
    let v2 = FLOW
        .replace(r#""template": "t""#, r#""template": "t2""#)
        .replace(
            r#""duration": "1h" }, "next": { "then": "done" }"#,
            r#""duration": "2h" }, "next": { "then": "done" }"#,
        );
    flows::create(&state.core, DEFAULT_ACCOUNT_ID, &v2, now).await?;
    println!("{url}: {n} enrollments waiting at w1 on version 1; version 2 created");

    let due = now + Duration::hours(1);
    clock.set(due);
    let planner = Planner::new(state.core.clone());
    let started = Instant::now();
    let draining = tokio::spawn(async move {
        let woken = planner.drain(due).await?;
        Ok::<_, anyhow::Error>((woken, Instant::now()))
    });
    let moved = migrate::migrate(
        &state.core,
        DEFAULT_ACCOUNT_ID,
        MigrateRequest {
            flow_id: "bench".into(),
            to_version: 2,
            ..Default::default()
        },
        "nudge-bench",
    )
    .await?;
    let move_secs = started.elapsed().as_secs_f64();
    let (woken, drained_at) = draining.await??;
    let drain_secs = (drained_at - started).as_secs_f64();
    println!(
        "{url}: MigrateEnrollments moved {} of {n} enrollments in {move_secs:.2} s = {:.0}/s, \
         while the planner woke {woken} due steps in {drain_secs:.2} s = {:.0} steps/s",
        moved.moved,
        moved.moved as f64 / move_secs,
        woken as f64 / drain_secs,
    );
    let live = migrate::live_by_version(&state.core, DEFAULT_ACCOUNT_ID, &moved.flow_id).await?;
    anyhow::ensure!(
        live == [(2, n as i64)],
        "after the move the live enrollments by version are {live:?}, not all {n} on version 2"
    );
    println!(
        "{url}: all {n} on version 2 after the move ({:?})",
        moved.groups
    );
    Ok(())
}

/// `--mode caps`: uncapped then capped due-step throughput, same run, same database.
async fn caps(url: DatabaseUrl) -> anyhow::Result<()> {
    use nudge::service::senders::{self, SenderInput};
    let n: usize = num("--n", 30_000)?;
    let senders_n: usize = num("--senders", 1_000)?;
    let (_app, state, clock) = manual_app(&url, FLOW, n).await?;
    let start = clock.now();
    let share = n.div_ceil(senders_n);
    let cap = (share * 2).div_ceil(3).max(1);
    for i in 0..senders_n {
        for (prefix, caps) in [
            ("free", None),
            ("capped", Some(serde_json::json!({"email": {"daily": cap}}))),
        ] {
            senders::upsert(
                &state.core,
                DEFAULT_ACCOUNT_ID,
                SenderInput {
                    id: format!("{prefix}{i}"),
                    tz: "UTC".into(),
                    caps,
                    ..Default::default()
                },
                false,
                start,
            )
            .await?;
        }
    }
    let mut planner = Planner::new(state.core.clone());
    if let Some(batch) = arg("--batch") {
        planner.batch = batch.parse()?;
    }
    if let Some(workers) = arg("--workers") {
        planner.workers = workers.parse()?;
    }
    let mut rates = Vec::new();
    let mut at = start;
    for prefix in ["free", "capped"] {
        clock.set(at);
        for chunk_start in (0..n).step_by(enrollments::MAX_BATCH) {
            let items = (chunk_start..(chunk_start + enrollments::MAX_BATCH).min(n))
                .map(|i| EnrollInput {
                    contact_id: format!("c{i}"),
                    flow_id: "bench".into(),
                    sender_id: format!("{prefix}{}", i % senders_n),
                    allow_duplicate: true,
                    ..Default::default()
                })
                .collect();
            let results = enrollments::batch_enroll(&state.core, DEFAULT_ACCOUNT_ID, items).await?;
            anyhow::ensure!(results.iter().all(|r| r.is_ok()), "an enrollment failed");
        }
        let due = at + Duration::hours(1);
        clock.set(due);
        let started = Instant::now();
        let woken = planner.drain(due).await?;
        let secs = started.elapsed().as_secs_f64();
        let sent = on_db!(&state.core.db, c => journey::table
            .filter(journey::kind.eq("dispatch"))
            .filter(journey::at.eq(to_millis(due)))
            .count()
            .get_result::<i64>(c)
            .await?);
        let deferred = on_db!(&state.core.db, c => journey::table
            .filter(journey::kind.eq("deferred"))
            .filter(journey::at.eq(to_millis(due)))
            .count()
            .get_result::<i64>(c)
            .await?);
        let rate = woken as f64 / secs;
        println!(
            "{url}: {prefix}: planner woke {woken} due enrollments over {senders_n} senders in {secs:.2} s = {rate:.0} steps/s ({sent} sent, {deferred} deferred; daily cap {}, batch {}, workers {})",
            if prefix == "capped" { cap.to_string() } else { "none".into() },
            planner.batch,
            planner.workers
        );
        rates.push(rate);
        // Finish the first round (their second wait) before the next one, unmeasured.
        at = due + Duration::hours(2);
        clock.set(at);
        planner.drain(at).await?;
    }
    println!(
        "{url}: with caps {:.0} % of the throughput without",
        100.0 * rates[1] / rates[0]
    );
    Ok(())
}

/// `n` contacts `c0`, `c1`, … written straight to the table (the bench measures enrolling,
/// not contact upserts).
pub(crate) async fn insert_contacts(db: &Db, n: usize, now: DateTime<Utc>) -> anyhow::Result<()> {
    let rows: Vec<ContactRow> = (0..n)
        .map(|i| ContactRow {
            account_id: DEFAULT_ACCOUNT_ID.into(),
            id: format!("c{i}"),
            email: Some(format!("c{i}@example.com")),
            phone: None,
            tz: Some("UTC".into()),
            country: None,
            attributes: "{}".into(),
            opted_out: "[]".into(),
            created_at: to_millis(now),
            updated_at: to_millis(now),
        })
        .collect();
    match db {
        Db::Postgres(pool) => {
            let mut c = pool.get().await?;
            for chunk in rows.chunks(3_000) {
                diesel::insert_into(contacts::table)
                    .values(chunk)
                    .execute(&mut *c)
                    .await?;
            }
        }
        Db::Sqlite(pool) => {
            let mut c = pool.get().await?;
            c.spawn_blocking(move |c| {
                for chunk in rows.chunks(3_000) {
                    diesel::RunQueryDsl::execute(
                        diesel::insert_into(contacts::table).values(chunk),
                        c,
                    )?;
                }
                Ok::<(), diesel::result::Error>(())
            })
            .await?;
        }
    }
    Ok(())
}

/// A server as `nudge serve` runs it (system clock, planner loop, `LISTEN` on PostgreSQL), in
/// this process; fire the sender to stop it.
async fn serve(
    url: &DatabaseUrl,
) -> anyhow::Result<(
    AppState,
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<std::io::Result<()>>,
)> {
    let mut config = bench_config(url.clone(), ClockKind::System)?;
    config.announce_first_token = false;
    let app = App::build(config).await?;
    let state = app.state().clone();
    let (tx, rx) = tokio::sync::oneshot::channel();
    let server = tokio::spawn(app.run(async {
        let _ = rx.await;
    }));
    contact_service::upsert(
        &state.core,
        DEFAULT_ACCOUNT_ID,
        ContactInput {
            id: "bench".into(),
            email: "bench@example.com".into(),
            tz: "UTC".into(),
            ..Default::default()
        },
        state.core.clock.now(),
    )
    .await?;
    Ok((state, tx, server))
}

/// `--stored M` (PostgreSQL): M more enrollments that are not due, as a long-running account
/// has: each a copy of one real enrollment waiting 30 days (`HOLD_FLOW`), with its journey row,
/// its own contact id and its own Watch positions, written by SQL in chunks (BatchEnroll would
/// take most of an hour for 10,000,000), then `VACUUM ANALYZE`d as a table that size would be.
/// Their contacts are not stored: no step of the run reads them.
async fn store_idle(state: &AppState) -> anyhow::Result<()> {
    use diesel::sql_types::{BigInt, Text};
    use diesel_async::SimpleAsyncConnection;
    let m: i64 = num("--stored", 0)?;
    if m == 0 {
        return Ok(());
    }
    let Db::Postgres(pool) = &state.core.db else {
        anyhow::bail!("--stored needs PostgreSQL (a --database-url postgres://…)");
    };
    let now = state.core.clock.now();
    let (hold, _) = flows::create(&state.core, DEFAULT_ACCOUNT_ID, HOLD_FLOW, now).await?;
    contact_service::upsert(
        &state.core,
        DEFAULT_ACCOUNT_ID,
        ContactInput {
            id: "idle-template".into(),
            email: "idle@example.com".into(),
            tz: "UTC".into(),
            ..Default::default()
        },
        now,
    )
    .await?;
    let item = EnrollInput {
        contact_id: "idle-template".into(),
        flow_id: hold.id.clone(),
        ..Default::default()
    };
    let template = enrollments::batch_enroll(&state.core, DEFAULT_ACCOUNT_ID, vec![item])
        .await?
        .remove(0)?
        .0
        .id;
    let mut c = pool.get().await?;
    let started = Instant::now();
    const CHUNK: i64 = 500_000;
    let mut lo = 1;
    while lo <= m {
        let hi = (lo + CHUNK - 1).min(m);
        c.batch_execute("BEGIN").await?;
        diesel::sql_query(
            "INSERT INTO enrollments (id, account_id, flow_id, flow_version, contact_id, \
             sender_id, status, client_key, state, next_run_at, journey_seq, created_at, \
             updated_at, allow_duplicate) \
             SELECT 'en_idle_' || g, account_id, flow_id, flow_version, 'idle-' || g, sender_id, \
             status, NULL, state, next_run_at, journey_seq, created_at, updated_at, allow_duplicate \
             FROM enrollments t, generate_series($1::int8, $2::int8) g WHERE t.id = $3",
        )
        .bind::<BigInt, _>(lo)
        .bind::<BigInt, _>(hi)
        .bind::<Text, _>(template.as_str())
        .execute(&mut *c)
        .await?;
        // The template's keys row holds its one journey step (its first).
        let copied = diesel::sql_query(
            "INSERT INTO enrollment_keys (id, account_id, contact_id, flow_id, status, \
             client_key, allow_duplicate, first_xid, first_n, first_at, first_entries) \
             SELECT 'en_idle_' || g, t.account_id, 'idle-' || g, t.flow_id, t.status, NULL, \
             t.allow_duplicate, pg_current_xact_id()::text::int8, t.first_n, t.first_at, \
             t.first_entries \
             FROM enrollments e JOIN enrollment_keys t ON t.account_id = e.account_id \
             AND t.flow_id = e.flow_id AND t.status = e.status AND t.id = e.id, \
             generate_series($1::int8, $2::int8) g \
             WHERE e.id = $3 AND t.first_xid IS NOT NULL",
        )
        .bind::<BigInt, _>(lo)
        .bind::<BigInt, _>(hi)
        .bind::<Text, _>(template.as_str())
        .execute(&mut *c)
        .await?;
        anyhow::ensure!(
            copied as i64 == hi - lo + 1,
            "the template enrollment's first journey step is not on its keys row"
        );
        c.batch_execute("COMMIT").await?;
        if hi % 1_000_000 == 0 || hi == m {
            println!(
                "stored {hi} idle enrollments by SQL, {:.0} s",
                started.elapsed().as_secs_f64()
            );
        }
        lo = hi + 1;
    }
    c.batch_execute("VACUUM ANALYZE enrollments, enrollment_keys, journey_steps")
        .await?;
    #[derive(diesel::QueryableByName)]
    struct Size {
        #[diesel(sql_type = Text)]
        size: String,
    }
    let size: Size = diesel::sql_query(
        "SELECT pg_size_pretty(pg_total_relation_size('enrollments')) || ' enrollments, ' || \
         pg_size_pretty(pg_total_relation_size('enrollment_keys')) || ' keys and first \
         journey steps (with indexes)' \
         AS size",
    )
    .get_result(&mut *c)
    .await?;
    println!(
        "{m} idle enrollments stored and analyzed in {:.0} s: {}",
        started.elapsed().as_secs_f64(),
        size.size
    );
    Ok(())
}

/// `BatchEnroll`s `n` enrollments of the `bench` contact into `flow`.
async fn enroll(state: &AppState, flow: &str, n: usize) -> anyhow::Result<()> {
    let items = (0..n)
        .map(|_| EnrollInput {
            contact_id: "bench".into(),
            flow_id: flow.into(),
            allow_duplicate: true,
            ..Default::default()
        })
        .collect();
    let results = enrollments::batch_enroll(&state.core, DEFAULT_ACCOUNT_ID, items).await?;
    anyhow::ensure!(results.iter().all(|r| r.is_ok()), "an enroll failed");
    Ok(())
}

/// How many enrollments of the flow with id `flow` are still active.
async fn active(state: &AppState, flow: &str) -> anyhow::Result<i64> {
    // From the keys, by account too, so the flow index answers it: on a table of 10,000,000
    // (`--stored`) a scan took a second a poll and slowed the very wakes being measured.
    let n: i64 = on_db!(&state.core.db, c => enrollment_keys::table
        .filter(enrollment_keys::account_id.eq(DEFAULT_ACCOUNT_ID))
        .filter(enrollment_keys::flow_id.eq(flow))
        .filter(enrollment_keys::status.eq("active"))
        .count()
        .get_result(c)
        .await)?;
    Ok(n)
}

/// Waits (polling every 100 ms) until no enrollment of the flow with id `flow` is active, at
/// most `limit`.
async fn until_done(
    state: &AppState,
    flow: &str,
    limit: std::time::Duration,
) -> anyhow::Result<()> {
    let started = Instant::now();
    loop {
        let left = active(state, flow).await?;
        if left == 0 {
            return Ok(());
        }
        anyhow::ensure!(
            started.elapsed() < limit,
            "{left} `{flow}` enrollments still active after {limit:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

async fn wake_latency(url: DatabaseUrl) -> anyhow::Result<()> {
    let rate: usize = num("--rate", 1_000)?;
    let secs: u64 = num("--secs", 10)?;
    let (state, stop, server) = serve(&url).await?;
    let (flow, _) = flows::create(
        &state.core,
        DEFAULT_ACCOUNT_ID,
        LATENCY_FLOW,
        state.core.clock.now(),
    )
    .await?;
    store_idle(&state).await?;

    // Every 10 ms, rate / 100 timers due two seconds later; each tick's BatchEnroll is its own
    // task, as concurrent requests would be, so a slow one does not hold back the next.
    let since = to_millis(state.core.clock.now());
    let per_tick = (rate / 100).max(1);
    let mut ticks = tokio::time::interval(std::time::Duration::from_millis(10));
    let started = Instant::now();
    let mut calls = Vec::new();
    while started.elapsed() < std::time::Duration::from_secs(secs) {
        ticks.tick().await;
        let state = state.clone();
        calls.push(tokio::spawn(async move {
            enroll(&state, "latency", per_tick).await
        }));
    }
    let created = calls.len() * per_tick;
    for call in calls {
        call.await??;
    }
    let elapsed = started.elapsed().as_secs_f64();
    until_done(&state, &flow.id, std::time::Duration::from_secs(60)).await?;
    // How the loop got through them: its batches (count, mean size and duration), from the
    // service's own metrics.
    let metrics = state.core.metrics.render(&state.core.db);
    let batches = prometheus_value(&metrics, "nudge_planner_batch_seconds_count").unwrap_or(0.0);
    let batch_secs = prometheus_value(&metrics, "nudge_planner_batch_seconds_sum").unwrap_or(0.0);
    let _ = stop.send(());
    server.await??;

    // Due time: the wait's `until` (run 1); woken: the `at` of run 1's `run_closed`. Only this
    // run's timers: the database may hold other enrollments (`--stored`, an earlier run).
    let rows: Vec<(String, i64, String, String)> = on_db!(&state.core.db, c => journey::table
        .filter(journey::kind.eq_any(vec!["run_opened", "run_closed"]))
        .filter(journey::enrollment_id.eq_any(
            enrollments_table::table
                .filter(enrollments_table::flow_id.eq(&flow.id))
                .filter(enrollments_table::created_at.ge(since))
                .select(enrollments_table::id),
        ))
        .select((journey::enrollment_id, journey::at, journey::kind, journey::detail))
        .load(c)
        .await)?;
    let mut due: HashMap<String, DateTime<Utc>> = HashMap::new();
    let mut woken: HashMap<String, i64> = HashMap::new();
    for (id, at, kind, detail) in rows {
        let detail: serde_json::Value = serde_json::from_str(&detail)?;
        if kind == "run_opened" && detail["id"] == 1 {
            let until = detail["until"].as_str().unwrap_or_default();
            due.insert(id, DateTime::parse_from_rfc3339(until)?.to_utc());
        } else if kind == "run_closed" && detail["run"] == 1 {
            woken.insert(id, at);
        }
    }
    let mut latencies: Vec<i64> = woken
        .iter()
        .filter_map(|(id, at)| Some(at - due.get(id)?.timestamp_millis()))
        .collect();
    latencies.sort_unstable();
    anyhow::ensure!(
        latencies.len() == created,
        "{} of {created} woken",
        latencies.len()
    );
    let pct = |p: f64| latencies[((latencies.len() - 1) as f64 * p).round() as usize];
    println!(
        "{url}: wake latency of {} timers created at {:.0}/s for {elapsed:.1} s: p50 {} ms, p90 {} ms, p99 {} ms, max {} ms (min {} ms)",
        latencies.len(),
        created as f64 / elapsed,
        pct(0.50),
        pct(0.90),
        pct(0.99),
        latencies[latencies.len() - 1],
        latencies[0],
    );
    if batches > 0.0 {
        println!(
            "{url}: wake latency: the planner ran {batches:.0} batches, {:.0} enrollments and {:.2} ms each on average",
            latencies.len() as f64 / batches,
            batch_secs * 1e3 / batches,
        );
    }
    Ok(())
}

/// The value of an unlabelled sample `name` in Prometheus text.
fn prometheus_value(text: &str, name: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' '))
        .and_then(|v| v.trim().parse().ok())
}

async fn memory(url: DatabaseUrl) -> anyhow::Result<()> {
    let n: usize = num("--n", 1_000_000)?;
    let due: usize = num("--due", 100_000)?;
    let rounds: usize = num("--rounds", 3)?;
    let (state, stop, server) = serve(&url).await?;
    let now = state.core.clock.now();
    flows::create(&state.core, DEFAULT_ACCOUNT_ID, HOLD_FLOW, now).await?;
    let (due_flow, _) = flows::create(&state.core, DEFAULT_ACCOUNT_ID, DUE_FLOW, now).await?;
    println!("{url}: memory: started, RSS {} MiB", rss_mib());

    let started = Instant::now();
    let mut done = 0;
    while done < n {
        let size = (n - done).min(enrollments::MAX_BATCH);
        enroll(&state, "hold", size).await?;
        done += size;
        if done % 100_000 == 0 || done == n {
            println!(
                "{url}: memory: {done} stored enrollments (30d wait), RSS {} MiB, {:.0} s",
                rss_mib(),
                started.elapsed().as_secs_f64()
            );
        }
    }

    // The planner loop wakes a due subset while the million stay stored.
    for round in 1..=rounds {
        let started = Instant::now();
        let mut enrolled = 0;
        while enrolled < due {
            let size = (due - enrolled).min(enrollments::MAX_BATCH);
            enroll(&state, "due", size).await?;
            enrolled += size;
        }
        until_done(&state, &due_flow.id, std::time::Duration::from_secs(600)).await?;
        println!(
            "{url}: memory: round {round}: {due} more enrolled and woken by the planner loop (wait 1s → email → end) in {:.0} s, RSS {} MiB",
            started.elapsed().as_secs_f64(),
            rss_mib()
        );
    }
    println!(
        "{url}: memory: peak RSS {} MiB",
        proc_status_kib("VmHWM:").unwrap_or(0) / 1024
    );
    let _ = stop.send(());
    server.await??;
    Ok(())
}

fn rss_mib() -> u64 {
    rss_kib().unwrap_or(0) / 1024
}

/// Resident set size from /proc (Linux), in KiB.
fn rss_kib() -> Option<u64> {
    proc_status_kib("VmRSS:")
}

/// A `/proc/self/status` field in KiB.
fn proc_status_kib(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find(|l| l.starts_with(field))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}
