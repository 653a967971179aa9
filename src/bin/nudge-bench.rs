//! Engine throughput on a real database: `BatchEnroll` rate, and the planner's due-step rate
//! with N enrollments due at once. Prints one line per figure.
//!
//! ```text
//! nudge-bench --database-url sqlite:///tmp/bench.db --n 20000
//! nudge-bench --database-url postgres://postgres@127.0.0.1/bench --n 100000
//! ```
//! Use an empty database: the bench migrates it and enrolls into the default account.

use chrono::Duration;
use nudge::app::App;
use nudge::clock::{Clock, ManualClock, SystemClock};
use nudge::config::{ClockKind, Config, DatabaseUrl};
use nudge::planner::Planner;
use nudge::service::contacts::{self, ContactInput};
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
    contacts::upsert(
        &state.db,
        DEFAULT_ACCOUNT_ID,
        ContactInput {
            id: "bench".into(),
            email: "bench@example.com".into(),
            tz: "UTC".into(),
            ..Default::default()
        },
        now,
    )
    .await?;

    let started = Instant::now();
    let mut done = 0;
    while done < n {
        let size = (n - done).min(enrollments::MAX_BATCH);
        let items = (0..size)
            .map(|_| EnrollInput {
                contact_id: "bench".into(),
                flow_id: "bench".into(),
                allow_duplicate: true,
                ..Default::default()
            })
            .collect();
        let results = enrollments::batch_enroll(&state, DEFAULT_ACCOUNT_ID, items).await?;
        assert!(results.iter().all(|r| r.is_ok()));
        done += size;
    }
    let secs = started.elapsed().as_secs_f64();
    println!(
        "{url}: BatchEnroll {n} enrollments in {secs:.2} s = {:.0} enrollments/s",
        n as f64 / secs
    );

    // All of them are due at once an hour later: each wake sends the email and enters w2.
    let due = now + Duration::hours(1);
    clock.set(due);
    let planner = Planner::new(state.clone());
    let started = Instant::now();
    let woken = planner.drain(due).await?;
    let secs = started.elapsed().as_secs_f64();
    println!(
        "{url}: planner woke {woken} due enrollments (each: email dispatch + next wait) in {secs:.2} s = {:.0} steps/s (batch {})",
        woken as f64 / secs,
        planner.batch
    );
    if let Some(rss) = rss_kib() {
        println!("{url}: RSS after the run {} MiB", rss / 1024);
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
