//! Engine throughput on a real database: `BatchEnroll` rate, and the planner's due-step rate
//! with N enrollments due at once. Prints one line per figure.
//!
//! ```text
//! nudge-bench --database-url sqlite:///tmp/bench.db --n 20000
//! nudge-bench --database-url postgres://postgres@127.0.0.1/bench --n 100000 [--callers 1] [--batch 1000] [--workers 4]
//! ```
//! Use an empty database: the bench migrates it and enrolls into the default account.

use chrono::Duration;
use nudge::app::App;
use nudge::clock::{Clock, ManualClock, SystemClock};
use nudge::config::{ClockKind, Config, DatabaseUrl};
use nudge::planner::Planner;
use chrono::{DateTime, Utc};
use nudge::api::AppState;
use nudge::clock::to_millis;
use nudge::store::contacts::ContactRow;
use nudge::store::schema::contacts;
use nudge::store::Conn;
use nudge::service::enrollments::{self, EnrollInput};
use nudge::service::flows;
use nudge::store::accounts::DEFAULT_ACCOUNT_ID;
use std::sync::Arc;
use std::time::Instant;

/// A wait, an email, a wait, then the end: every wake is one step of real work.
const FLOW: &str = r#"{
  "name": "bench",
  "start": "w1",
  "steps": {
    "w1": { "type": "wait", "params": { "duration": "1h" }, "next": { "then": "mail" } },
    "mail": { "type": "email", "params": { "template": "t" }, "next": { "then": "w2" } },
    "w2": { "type": "wait", "params": { "duration": "1h" }, "next": { "then": "done" } },
    "done": { "type": "end" }
  }
}"#;

fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let url = DatabaseUrl::parse(&arg("--database-url").unwrap_or("sqlite://bench.db".into()))
        .map_err(anyhow::Error::msg)?;
    let n: usize = arg("--n").map(|s| s.parse()).transpose()?.unwrap_or(20_000);
    let mut config = Config::new("127.0.0.1:0".parse()?, url.clone(), ClockKind::Manual);
    config.announce_first_token = false;
    let clock = Arc::new(ManualClock::new(SystemClock.now()));
    let app = App::build_with_clock(config, clock.clone()).await?;
    let state = app.state().clone();
    let now = clock.now();
    flows::create(&state.db, DEFAULT_ACCOUNT_ID, FLOW, now).await?;
    insert_contacts(&state, n, now).await?;

    // `--callers` clients send BatchEnroll calls of up to 10,000 side by side, as a CRM's
    // workers would; each call's contacts are its own.
    let callers: usize = arg("--callers").map(|s| s.parse()).transpose()?.unwrap_or(1);
    let started = Instant::now();
    let calls: Vec<(usize, usize)> = (0..n)
        .step_by(enrollments::MAX_BATCH)
        .map(|start| (start, (n - start).min(enrollments::MAX_BATCH)))
        .collect();
    let queue = Arc::new(std::sync::Mutex::new(calls.into_iter()));
    let mut clients = tokio::task::JoinSet::new();
    for _ in 0..callers.max(1) {
        let (state, queue) = (state.clone(), queue.clone());
        clients.spawn(async move {
            loop {
                let next = queue.lock().expect("queue lock").next();
                let Some((start, size)) = next else {
                    return Ok::<(), anyhow::Error>(());
                };
                let items = (start..start + size)
                    .map(|i| EnrollInput {
                        contact_id: format!("c{i}"),
                        flow_id: "bench".into(),
                        ..Default::default()
                    })
                    .collect();
                let results = enrollments::batch_enroll(&state, DEFAULT_ACCOUNT_ID, items).await?;
                anyhow::ensure!(results.iter().all(|r| r.is_ok()), "an enrollment failed");
            }
        });
    }
    while let Some(joined) = clients.join_next().await {
        joined??;
    }
    let secs = started.elapsed().as_secs_f64();
    println!(
        "{url}: BatchEnroll {n} enrollments in {secs:.2} s = {:.0} enrollments/s ({callers} callers)",
        n as f64 / secs
    );

    // All of them are due at once an hour later: each wake sends the email and enters w2.
    let due = now + Duration::hours(1);
    clock.set(due);
    let mut planner = Planner::new(state.clone());
    if let Some(batch) = arg("--batch") {
        planner.batch = batch.parse()?;
    }
    if let Some(workers) = arg("--workers") {
        planner.workers = workers.parse()?;
    }
    let started = Instant::now();
    let woken = planner.drain(due).await?;
    let secs = started.elapsed().as_secs_f64();
    println!(
        "{url}: planner woke {woken} due enrollments (each: email dispatch + next wait) in {secs:.2} s = {:.0} steps/s (batch {}, workers {})",
        woken as f64 / secs,
        planner.batch,
        planner.workers
    );
    if let Some(rss) = rss_kib() {
        println!("{url}: RSS after the run {} MiB", rss / 1024);
    }
    Ok(())
}

/// `n` contacts `c0`, `c1`, … written straight to the table (the bench measures enrolling,
/// not contact upserts).
async fn insert_contacts(state: &AppState, n: usize, now: DateTime<Utc>) -> anyhow::Result<()> {
    let rows: Vec<ContactRow> = (0..n)
        .map(|i| ContactRow {
            account_id: DEFAULT_ACCOUNT_ID.into(),
            id: format!("c{i}"),
            email: Some(format!("c{i}@example.com")),
            phone: None,
            tz: Some("UTC".into()),
            attributes: "{}".into(),
            opted_out: "[]".into(),
            created_at: to_millis(now),
            updated_at: to_millis(now),
        })
        .collect();
    match state.db.conn().await? {
        Conn::Postgres(mut c) => {
            use diesel_async::RunQueryDsl;
            for chunk in rows.chunks(3_000) {
                diesel::insert_into(contacts::table)
                    .values(chunk)
                    .execute(&mut *c)
                    .await?;
            }
        }
        Conn::Sqlite(mut c) => {
            c.spawn_blocking(move |c| {
                use diesel::RunQueryDsl;
                for chunk in rows.chunks(3_000) {
                    diesel::insert_into(contacts::table).values(chunk).execute(c)?;
                }
                Ok::<(), diesel::result::Error>(())
            })
            .await?;
        }
    }
    Ok(())
}

/// Resident set size from /proc (Linux), in KiB.
fn rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}
