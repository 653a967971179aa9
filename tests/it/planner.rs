//! The planner called directly (`run_batch`, the "run one batch → outcome" function): several
//! planners at once on one database wake every due enrollment exactly once, and a batch
//! reports the next due time. SQLite always; PostgreSQL (where the planners really race, with
//! `FOR UPDATE SKIP LOCKED`) with `NUDGE_TEST_DATABASE_URL`.

use crate::common::{spawn_app, Backend, TestApp};
use chrono::Duration;
use nudge::auth::{Principal, Scope};
use nudge::clock::Clock;
use nudge::planner::Planner;
use nudge::proto::v1::*;
use nudge::service::enrollments::{self, EnrollInput};
use nudge::store::accounts::DEFAULT_ACCOUNT_ID;
use std::collections::HashMap;

backend_tests!(three_planners_wake_every_run_exactly_once);

/// Three one-hour waits, then the end.
const FLOW: &str = r#"{
  "name": "three-steps",
  "start": "a",
  "steps": {
    "a": { "type": "wait", "params": { "duration": "1h" }, "next": { "then": "b" } },
    "b": { "type": "wait", "params": { "duration": "1h" }, "next": { "then": "c" } },
    "c": { "type": "wait", "params": { "duration": "1h" }, "next": { "then": "done" } },
    "done": { "type": "end", "params": { "outcome": "walked" } }
  }
}"#;

async fn setup(app: &TestApp, n: usize) -> Vec<String> {
    app.flows()
        .await
        .create_flow(app.authed(CreateFlowRequest {
            definition: FLOW.into(),
        }))
        .await
        .unwrap();
    app.contacts()
        .await
        .upsert_contact(app.authed(UpsertContactRequest {
            contact: Some(Contact {
                id: "many".into(),
                tz: "UTC".into(),
                ..Default::default()
            }),
        }))
        .await
        .unwrap();
    let items: Vec<EnrollInput> = (0..n)
        .map(|i| EnrollInput {
            contact_id: "many".into(),
            flow_id: "three-steps".into(),
            client_key: format!("k{i}"),
            allow_duplicate: true,
            ..Default::default()
        })
        .collect();
    let results = enrollments::batch_enroll(&app.state.core, DEFAULT_ACCOUNT_ID, items)
        .await
        .unwrap();
    results
        .into_iter()
        .map(|r| r.unwrap().0.id.into_string())
        .collect()
}

async fn three_planners_wake_every_run_exactly_once(backend: Backend) {
    let n = 1_500;
    let app = spawn_app(backend).await;
    let ids = setup(&app, n).await;
    let planner = |batch| Planner {
        core: app.state.core.clone(),
        batch,
        workers: 2,
    };
    let start = app.clock.now();
    // Nothing is due yet; the batch says when the first thing is.
    let idle = planner(100).run_batch(start).await.unwrap();
    assert_eq!(idle.processed, 0);
    assert_eq!(idle.next_due, Some(start + Duration::hours(1)));

    for hour in 1..=3 {
        let now = start + Duration::hours(hour);
        app.clock.set(now);
        let runs = (0..3).map(|_| {
            let p = planner(200);
            tokio::spawn(async move { p.drain(now).await.unwrap() })
        });
        let mut total = 0;
        for r in runs {
            total += r.await.unwrap();
        }
        assert_eq!(total, n, "hour {hour}: every enrollment woken once");
    }
    let after = planner(100)
        .run_batch(start + Duration::hours(4))
        .await
        .unwrap();
    assert_eq!(after.processed, 0);
    assert_eq!(after.next_due, None);

    // Every enrollment: each step entered exactly once, in order, and completed.
    let who = Principal {
        account_id: DEFAULT_ACCOUNT_ID.into(),
        token_id: "test".into(),
        scope: Scope::Full,
    };
    for id in ids.iter().step_by(97) {
        let (entries, _) =
            enrollments::journey_page(&app.state.core, &who, &id.as_str().into(), 500, "")
                .await
                .unwrap();
        let mut opened: HashMap<String, usize> = HashMap::new();
        let mut order = Vec::new();
        for e in entries.iter().filter(|e| e.kind == "run_opened") {
            let d = serde_json::Value::Object(e.detail.clone());
            let step = d["step"].as_str().unwrap().to_string();
            *opened.entry(step.clone()).or_default() += 1;
            order.push(step);
        }
        assert_eq!(order, ["a", "b", "c", "done"], "{id}");
        assert!(opened.values().all(|&c| c == 1));
        let e = enrollments::get(&app.state.core, &who, &id.as_str().into())
            .await
            .unwrap();
        assert_eq!(e.status.as_str(), "completed");
        assert_eq!(e.state.outcome.as_deref(), Some("walked"));
        // Each wait woke at its own stored time (docs/timing.md, "Fixed once"): entered on the hour.
        for (k, e) in entries
            .iter()
            .filter(|e| e.kind == "run_opened")
            .enumerate()
        {
            assert_eq!(e.at, start + Duration::hours(k as i64), "{id} run {k}");
        }
    }
    app.stop().await;
}
