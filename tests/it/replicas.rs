//! Replicas: three real `nudge serve` processes (manual clock) on one PostgreSQL database move
//! 10,000 enrollments through a flow with three timed steps. All three are told to advance to
//! the same instants at the same moment, so they compete for the same due rows (`FOR UPDATE
//! SKIP LOCKED`). Afterwards every run happened exactly once: one `run_opened` and one
//! `run_closed` per (enrollment, run), run ids and journey `seq` without gaps, one dispatch per
//! email run with unique idempotency keys, every step at its own due time, every enrollment
//! completed; and the work was shared: the wakes the three `Advance` calls report add up to
//! exactly one per due step, and each server did some of them.
//!
//! PostgreSQL only (SQLite has one writer; there is nothing to race): ignored by default, run
//! by `.ci/run` with `NUDGE_TEST_DATABASE_URL`.

use crate::common::process::{
    connect, create_flow_and_contact, enroll_items, free_port, nudge, serve,
};
use crate::common::{with_token, PgDatabase};
use nudge::proto::v1::enrollment_service_client::EnrollmentServiceClient;
use nudge::proto::v1::test_clock_service_client::TestClockServiceClient;
use nudge::proto::v1::*;
use std::process::Child;

const N: i64 = 10_000;
const SERVERS: usize = 3;
/// Timed steps: each enrollment is woken this many times.
const WAKES: i64 = 3;
/// Runs per enrollment: three waits, three emails, the end.
const RUNS: i64 = 7;
const HOUR_MS: i64 = 3_600_000;

/// Wait, email, three times over, then the end: each wake closes a wait, sends an email and
/// opens the next wait (the last one ends).
const FLOW: &str = r#"{
  "name": "replicas",
  "start": "w1",
  "steps": {
    "w1": { "type": "wait", "params": { "duration": "1h" }, "next": { "then": "m1" } },
    "m1": { "type": "email", "params": { "template": "one" }, "next": { "then": "w2" } },
    "w2": { "type": "wait", "params": { "duration": "1h" }, "next": { "then": "m2" } },
    "m2": { "type": "email", "params": { "template": "two" }, "next": { "then": "w3" } },
    "w3": { "type": "wait", "params": { "duration": "1h" }, "next": { "then": "m3" } },
    "m3": { "type": "email", "params": { "template": "three" }, "next": { "then": "done" } },
    "done": { "type": "end" }
  }
}"#;

/// Kills the servers when the test ends, also when it panics.
struct Servers(Vec<Child>);

impl Drop for Servers {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

mod postgres {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[ignore = "needs PostgreSQL: set NUDGE_TEST_DATABASE_URL and run with --ignored (bash .ci/run does)"]
    async fn three_servers_run_every_step_exactly_once() {
        super::three_servers_run_every_step_exactly_once().await
    }
}

async fn three_servers_run_every_step_exactly_once() {
    let started = std::time::Instant::now();
    let pg = PgDatabase::create().await;
    // Migrate and make the default account once, before any server starts.
    nudge(&["migrate", "--database-url", &pg.url]);
    let token = nudge(&["token", "create", "--database-url", &pg.url])
        .trim()
        .to_string();
    let mut servers = Servers(Vec::new());
    let mut channels = Vec::new();
    for _ in 0..SERVERS {
        let port = free_port();
        servers.0.push(serve(&pg.url, port));
        channels.push(connect(port).await);
    }

    let ch = channels[0].clone();
    create_flow_and_contact(&ch, &token, FLOW).await;
    // Each server's manual clock started at the host's time when it started; the steps are
    // due relative to the clock of the server that enrolls.
    let t0 = TestClockServiceClient::new(ch.clone())
        .now(with_token(NowRequest {}, &token))
        .await
        .unwrap()
        .into_inner()
        .now
        .unwrap();
    let items = enroll_items("replicas", N as usize);
    let results = EnrollmentServiceClient::new(ch.clone())
        .batch_enroll(with_token(BatchEnrollRequest { items }, &token))
        .await
        .unwrap()
        .into_inner()
        .results;
    assert!(results.iter().all(|r| r.enrollment.is_some()));
    let enrolled = started.elapsed();

    // Hour by hour, all three servers advance to the same instant at once.
    let mut woken = vec![[0i64; WAKES as usize]; SERVERS];
    for hour in 1..=WAKES {
        let target = prost_types::Timestamp {
            seconds: t0.seconds + hour * 3_600,
            nanos: t0.nanos,
        };
        let calls = channels.iter().map(|ch| {
            let mut clock = TestClockServiceClient::new(ch.clone());
            let request = with_token(
                AdvanceRequest {
                    target: Some(advance_request::Target::To(target)),
                },
                &token,
            );
            async move { clock.advance(request).await }
        });
        let answers = futures_util::future::join_all(calls).await;
        for (server, answer) in answers.into_iter().enumerate() {
            let answer = answer.unwrap().into_inner();
            assert_eq!(answer.now, Some(target), "server {server}");
            woken[server][hour as usize - 1] = answer.woken;
        }
        let total: i64 = woken.iter().map(|w| w[hour as usize - 1]).sum();
        assert_eq!(total, N, "hour {hour}: every enrollment woken exactly once");
    }
    println!("wakes per server and hour: {woken:?}");
    for (server, w) in woken.iter().enumerate() {
        assert!(
            w.iter().sum::<i64>() > 0,
            "server {server} did none of the work: {woken:?}"
        );
    }
    let advanced = started.elapsed();

    // Everything else straight from the database.
    let (db, connection) = tokio_postgres::connect(&pg.url, tokio_postgres::NoTls)
        .await
        .unwrap();
    let driver = tokio::spawn(connection);
    let one = |sql: &'static str| {
        let db = &db;
        async move {
            let row = db
                .query_one(sql, &[])
                .await
                .unwrap_or_else(|e| panic!("{sql}: {e}"));
            row.get::<_, i64>(0)
        }
    };
    assert_eq!(one("SELECT COUNT(*) FROM enrollments").await, N);
    assert_eq!(
        one("SELECT COUNT(*) FROM enrollments WHERE status = 'completed' AND next_run_at IS NULL")
            .await,
        N,
        "every enrollment completed"
    );
    // Runs: ids 1..=RUNS per enrollment, each opened exactly once and closed exactly once.
    for (kind, field) in [("run_opened", "id"), ("run_closed", "run")] {
        let sql = format!(
            "SELECT COUNT(*), COUNT(DISTINCT (enrollment_id, run)), \
                    COALESCE(MIN(run), 0), COALESCE(MAX(run), 0) \
             FROM (SELECT enrollment_id, (detail::json->>'{field}')::bigint AS run \
                   FROM journey WHERE kind = '{kind}') r"
        );
        let row = db.query_one(&sql, &[]).await.unwrap();
        let counts: (i64, i64, i64, i64) = (row.get(0), row.get(1), row.get(2), row.get(3));
        assert_eq!(counts, (N * RUNS, N * RUNS, 1, RUNS), "{kind}");
    }
    // Journey seq: contiguous per enrollment (the key makes it unique).
    assert_eq!(
        one(
            "SELECT COUNT(*) FROM (SELECT enrollment_id FROM journey GROUP BY enrollment_id \
             HAVING MIN(seq) <> 1 OR MAX(seq) <> COUNT(*)) gaps"
        )
        .await,
        0,
        "journey seq has gaps"
    );
    assert_eq!(
        one("SELECT COUNT(DISTINCT enrollment_id) FROM journey").await,
        N
    );
    // Every entry stamped at one of the due times: each step ran at its own time.
    let t0_ms = t0.seconds * 1_000 + i64::from(t0.nanos) / 1_000_000;
    let row = db
        .query_one(
            "SELECT COUNT(*) FROM journey WHERE at NOT IN ($1, $2, $3, $4)",
            &[
                &t0_ms,
                &(t0_ms + HOUR_MS),
                &(t0_ms + 2 * HOUR_MS),
                &(t0_ms + 3 * HOUR_MS),
            ],
        )
        .await
        .unwrap();
    assert_eq!(row.get::<_, i64>(0), 0, "an entry off its due time");
    // Dispatches: one per email run, keyed `enrollment:run`, all distinct.
    assert_eq!(one("SELECT COUNT(*) FROM dispatches").await, N * WAKES);
    assert_eq!(
        one("SELECT COUNT(DISTINCT idempotency_key) FROM dispatches").await,
        N * WAKES
    );
    assert_eq!(
        one("SELECT COUNT(*) FROM dispatches d JOIN journey j \
               ON j.enrollment_id = d.enrollment_id AND j.kind = 'run_opened' \
              AND (j.detail::json->>'id')::bigint = d.run \
              AND j.detail::json->>'type' = 'email' \
             WHERE d.idempotency_key = d.enrollment_id || ':' || d.run")
        .await,
        N * WAKES,
        "every dispatch belongs to an email run and carries its key"
    );
    drop(db);
    let _ = driver.await;
    drop(servers);
    println!(
        "replicas: enrolled {N} in {:.1} s, advanced in {:.1} s, checked in {:.1} s",
        enrolled.as_secs_f64(),
        (advanced - enrolled).as_secs_f64(),
        (started.elapsed() - advanced).as_secs_f64()
    );
}
