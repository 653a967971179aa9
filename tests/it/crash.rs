//! Crash safety: the real `nudge` binary (SQLite, manual clock) is killed with SIGKILL in the
//! middle of waking thousands of enrollments, restarted on the same database, and finishes.
//! Afterwards every enrollment's runs happened exactly once: each step entered once and in
//! order, run ids without gaps or repeats, one dispatch per email run (unique idempotency
//! keys), and every stored wake time is the one computed when its step was entered (docs/timing.md, "Fixed once":
//! a replayed step never recomputes it, even though the restarted server's clock differs).
//!
//! Where the kill lands depends on timing; what is asserted holds wherever it lands. The test
//! polls the database to kill while batches are being written, not before or after.

use crate::common::process::{
    all_enrollments, claim_all, connect, create_flow_and_contact, enroll_items, free_port,
    journey_of, serve, NUDGE,
};
use crate::common::with_token as authed;
use nudge::proto::v1::enrollment_service_client::EnrollmentServiceClient;
use nudge::proto::v1::test_clock_service_client::TestClockServiceClient;
use nudge::proto::v1::*;
use std::collections::{HashMap, HashSet};
use std::process::Command;

const N: usize = 3_000;

const FLOW: &str = r#"{
  "name": "crash",
  "start": "w1",
  "steps": {
    "w1": { "type": "wait", "params": { "duration": "1h" }, "next": { "then": "mail" } },
    "mail": { "type": "email", "params": { "template": "t" }, "next": { "then": "w2" } },
    "w2": { "type": "wait", "params": { "duration": "1h" }, "next": { "then": "done" } },
    "done": { "type": "end" }
  }
}"#;

fn count(db: &str, sql: &str) -> i64 {
    use diesel::prelude::*;
    #[derive(QueryableByName)]
    struct N {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        n: i64,
    }
    let mut conn = diesel::SqliteConnection::establish(db).unwrap();
    diesel::sql_query(sql)
        .get_result::<N>(&mut conn)
        .map(|r| r.n)
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_mid_batch_then_restart_runs_everything_exactly_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("nudge.db").to_string_lossy().into_owned();
    let migrated = Command::new(NUDGE)
        .args(["migrate", "--database-url", &db])
        .output()
        .unwrap();
    assert!(migrated.status.success(), "{migrated:?}");
    let out = Command::new(NUDGE)
        .args(["token", "create", "--database-url", &db])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let token = String::from_utf8(out.stdout).unwrap().trim().to_string();

    let port = free_port();
    let mut first = serve(&db, port);
    let ch = connect(port).await;
    create_flow_and_contact(&ch, &token, FLOW).await;
    let items = enroll_items("crash", N);
    let mut enrollments = EnrollmentServiceClient::new(ch.clone());
    let results = enrollments
        .batch_enroll(authed(BatchEnrollRequest { items }, &token))
        .await
        .unwrap()
        .into_inner()
        .results;
    assert!(results.iter().all(|r| r.enrollment.is_some()));

    // Advance three hours in the background and kill the server while it writes.
    let mut clock = TestClockServiceClient::new(ch.clone());
    let advance_token = token.clone();
    let advancing = tokio::spawn(async move {
        clock
            .advance(authed(
                AdvanceRequest {
                    target: Some(advance_request::Target::ByMs(3 * 3_600_000)),
                },
                &advance_token,
            ))
            .await
    });
    let journey_rows = "SELECT COUNT(*) AS n FROM journey";
    let before = count(&db, journey_rows);
    for _ in 0..10_000 {
        if count(&db, journey_rows) > before + 2_000 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(2)).await;
    }
    first.kill().unwrap();
    first.wait().unwrap();
    assert!(
        advancing.await.unwrap().is_err(),
        "killed before Advance returned"
    );
    let done_before = count(
        &db,
        "SELECT COUNT(*) AS n FROM enrollments WHERE status = 'completed'",
    );
    assert!((done_before as usize) < N, "the kill landed before the end");

    // Restart on the same database; its manual clock starts at the host's time again.
    let port = free_port();
    let mut second = serve(&db, port);
    let ch = connect(port).await;
    TestClockServiceClient::new(ch.clone())
        .advance(authed(
            AdvanceRequest {
                target: Some(advance_request::Target::ByMs(4 * 3_600_000)),
            },
            &token,
        ))
        .await
        .unwrap();

    let all = all_enrollments(&ch, &token).await;
    assert_eq!(all.len(), N);
    assert!(
        all.iter().all(|e| e.status == "completed"),
        "every one finished"
    );

    // Dispatches: one per enrollment, unique keys.
    let mut keys = HashSet::new();
    for d in claim_all(&ch, &token).await {
        assert!(
            keys.insert(d.idempotency_key.clone()),
            "{}",
            d.idempotency_key
        );
    }
    assert_eq!(keys.len(), N);

    // Journeys: every step once, in order, run ids 1..=4, waits ending exactly 1h after entry.
    for e in all.iter().step_by(37) {
        let entries = journey_of(&ch, &token, &e.id).await;
        let runs: Vec<serde_json::Value> = entries
            .iter()
            .filter(|j| j.kind == "run_opened")
            .map(crate::common::detail_json)
            .collect();
        let steps: Vec<&str> = runs.iter().map(|r| r["step"].as_str().unwrap()).collect();
        assert_eq!(steps, ["w1", "mail", "w2", "done"], "{}", e.id);
        let ids: Vec<u64> = runs.iter().map(|r| r["id"].as_u64().unwrap()).collect();
        assert_eq!(ids, [1, 2, 3, 4]);
        let mut closed: HashMap<u64, usize> = HashMap::new();
        for j in entries.iter().filter(|j| j.kind == "run_closed") {
            let d = crate::common::detail_json(j);
            *closed.entry(d["run"].as_u64().unwrap()).or_default() += 1;
        }
        assert!(closed.values().all(|&c| c == 1), "{closed:?}");
        for r in runs.iter().filter(|r| r["type"] == "wait") {
            let entered =
                chrono::DateTime::parse_from_rfc3339(r["entered"].as_str().unwrap()).unwrap();
            let until = chrono::DateTime::parse_from_rfc3339(r["until"].as_str().unwrap()).unwrap();
            assert_eq!(until - entered, chrono::Duration::hours(1), "{r}");
        }
    }
    second.kill().unwrap();
    second.wait().unwrap();
}
