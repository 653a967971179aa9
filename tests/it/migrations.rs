//! `MigrateEnrollments` end to end: a dry run shows every group (its problems too) and moves
//! nothing; a move with a step that has no place is refused with each problem in the
//! `BadRequest` details and nothing moves; a real move keeps each waiting run's wake time and
//! place, listens for the new version's events (a buffered reply is taken at the move), leaves
//! paused ones paused and finished ones on their version, writes one `migrated` entry each,
//! sends nothing twice, answers the same for the same key and refuses the key for another move;
//! a move a stopped replica left is resumed from its cursor; the console shows where the running
//! enrollments are.

use crate::common::{detail_json, spawn_app, Backend, TestApp};
use nudge::proto::v1::dispatch_service_client::DispatchServiceClient;
use nudge::proto::v1::enrollment_service_client::EnrollmentServiceClient;
use nudge::proto::v1::signal_service_client::SignalServiceClient;
use nudge::proto::v1::test_clock_service_client::TestClockServiceClient;
use nudge::proto::v1::*;
use std::collections::HashMap;

backend_tests!(
    a_dry_run_shows_every_group_and_a_step_without_a_place_refuses_the_move,
    a_move_keeps_each_wait_and_takes_the_new_versions_branches,
    a_move_a_stopped_replica_left_is_resumed_from_its_cursor,
);

const V1: &str = r#"{
  "name": "moving",
  "start": "mail",
  "steps": {
    "mail": {"type": "email", "params": {"template": "t1"}, "next": {"then": "listen"}},
    "listen": {"type": "wait_for", "params": {"events": ["meeting_booked"], "timeout": {"for": "3d"}},
               "next": {"meeting_booked": "done", "timeout": "done"}},
    "done": {"type": "end"}
  }
}"#;

/// Renames `listen` to `wait_reply`, listens for replies too, and thanks a person who replies.
const V2: &str = r#"{
  "name": "moving",
  "start": "mail",
  "steps": {
    "mail": {"type": "email", "params": {"template": "t1"}, "next": {"then": "wait_reply"}},
    "wait_reply": {"type": "wait_for", "params": {"events": ["reply", "meeting_booked"], "timeout": {"for": "3d"}},
                   "next": {"reply": "thanks", "meeting_booked": "done", "timeout": "done"}},
    "thanks": {"type": "email", "params": {"template": "thanks"}, "next": {"then": "done"}},
    "done": {"type": "end"}
  }
}"#;

const CONTACTS: usize = 6;

async fn create(app: &TestApp, definition: &str) {
    app.flows()
        .await
        .create_flow(app.authed(CreateFlowRequest {
            definition: definition.into(),
        }))
        .await
        .unwrap();
}

/// The flow's first version with `CONTACTS` contacts enrolled (each at `listen` after its
/// first email); returns the enrollment ids by contact index.
async fn enrolled(app: &TestApp) -> Vec<String> {
    create(app, V1).await;
    let mut e = EnrollmentServiceClient::new(app.channel().await);
    let mut ids = Vec::new();
    for i in 0..CONTACTS {
        app.contacts()
            .await
            .upsert_contact(app.authed(UpsertContactRequest {
                contact: Some(Contact {
                    id: format!("c-{i}"),
                    email: format!("c{i}@example.com"),
                    tz: "UTC".into(),
                    ..Default::default()
                }),
            }))
            .await
            .unwrap();
        let got = e
            .enroll(app.authed(EnrollRequest {
                contact_id: format!("c-{i}"),
                flow_id: "moving".into(),
                ..Default::default()
            }))
            .await
            .unwrap()
            .into_inner()
            .enrollment
            .unwrap();
        assert_eq!(got.current_step, "listen", "{got:?}");
        ids.push(got.id);
    }
    ids
}

async fn migrate(
    app: &TestApp,
    step_map: &[(&str, &str)],
    dry_run: bool,
    client_key: &str,
) -> Result<MigrateEnrollmentsResponse, tonic::Status> {
    app.flows()
        .await
        .migrate_enrollments(
            app.authed(MigrateEnrollmentsRequest {
                flow_id: "moving".into(),
                from_versions: vec![],
                to_version: 2,
                step_map: step_map
                    .iter()
                    .map(|(a, b)| (a.to_string(), b.to_string()))
                    .collect(),
                dry_run,
                client_key: client_key.into(),
            }),
        )
        .await
        .map(|r| r.into_inner())
}

async fn get(app: &TestApp, id: &str) -> Enrollment {
    EnrollmentServiceClient::new(app.channel().await)
        .get_enrollment(app.authed(GetEnrollmentRequest { id: id.into() }))
        .await
        .unwrap()
        .into_inner()
        .enrollment
        .unwrap()
}

/// Every pending dispatch, claimed and acked: (enrollment id, template) of each.
async fn sent(app: &TestApp) -> Vec<(String, String)> {
    let mut d = DispatchServiceClient::new(app.channel().await);
    let claimed = d
        .claim_dispatches(app.authed(ClaimDispatchesRequest {
            lease_ms: 600_000,
            max_count: 500,
            channels: vec!["email".into()],
        }))
        .await
        .unwrap()
        .into_inner()
        .dispatches;
    let mut out = Vec::new();
    for x in claimed {
        d.ack_dispatch(app.authed(AckDispatchRequest {
            id: x.id.clone(),
            lease_token: x.lease_token.clone(),
            provider_message_id: format!("m-{}", x.id),
            ..Default::default()
        }))
        .await
        .unwrap();
        out.push((x.enrollment_id, x.template));
    }
    out
}

async fn reply(app: &TestApp, contact: usize) {
    SignalServiceClient::new(app.channel().await)
        .report_signal(app.authed(ReportSignalRequest {
            contact: format!("c-{contact}"),
            kind: "reply".into(),
            channel: "email".into(),
            ..Default::default()
        }))
        .await
        .unwrap();
}

fn group(r: &MigrateEnrollmentsResponse) -> Vec<(i32, &str, &str, i64, &str)> {
    r.groups
        .iter()
        .map(|g| {
            (
                g.from_version,
                g.from_step.as_str(),
                g.to_step.as_str(),
                g.count,
                g.problem.as_str(),
            )
        })
        .collect()
}

async fn a_dry_run_shows_every_group_and_a_step_without_a_place_refuses_the_move(backend: Backend) {
    let app = spawn_app(backend).await;
    let ids = enrolled(&app).await;
    // One finished: it stays where it is and is in no group.
    EnrollmentServiceClient::new(app.channel().await)
        .exit(app.authed(ExitRequest {
            id: ids[5].clone(),
            reason: "done by hand".into(),
        }))
        .await
        .unwrap();
    create(&app, V2).await;

    // Without a map, `listen` has no place in version 2.
    let plan = migrate(&app, &[], true, "").await.unwrap();
    assert!(plan.dry_run);
    assert_eq!(plan.moved, 0);
    assert_eq!(group(&plan), [(1, "listen", "", 5, "UNMAPPED_STEP")]);
    let refused = migrate(&app, &[], false, "k-1").await.unwrap_err();
    assert_eq!(
        refused.code(),
        tonic::Code::FailedPrecondition,
        "{refused:?}"
    );
    assert!(refused.message().contains("5 enrollment(s)"), "{refused:?}");
    let details = tonic_types::StatusExt::get_error_details(&refused);
    let bad = details.bad_request().expect("BadRequest details");
    assert_eq!(bad.field_violations.len(), 1);
    assert_eq!(bad.field_violations[0].field, "step_map[`listen`]");
    assert_eq!(bad.field_violations[0].reason, "UNMAPPED_STEP");

    // Mapped to a step of another type, or to one that does not exist.
    let typed = migrate(&app, &[("listen", "mail")], true, "")
        .await
        .unwrap();
    assert_eq!(group(&typed), [(1, "listen", "mail", 5, "TYPE_CHANGED")]);
    let unknown = migrate(&app, &[("listen", "nope")], true, "")
        .await
        .unwrap();
    assert_eq!(
        group(&unknown),
        [(1, "listen", "nope", 5, "UNKNOWN_TARGET")]
    );
    let refused = migrate(&app, &[("listen", "mail")], false, "")
        .await
        .unwrap_err();
    assert_eq!(refused.code(), tonic::Code::FailedPrecondition);

    // Mapped well: the plan moves five; nothing has moved yet, and the refused calls stored
    // nothing (their key is free for the real move).
    let plan = migrate(&app, &[("listen", "wait_reply")], true, "")
        .await
        .unwrap();
    assert_eq!(group(&plan), [(1, "listen", "wait_reply", 5, "")]);
    for id in &ids {
        assert_eq!(get(&app, id).await.flow_version, 1);
    }
    let moved = migrate(&app, &[("listen", "wait_reply")], false, "k-1")
        .await
        .unwrap();
    assert_eq!(moved.moved, 5);

    // Bad requests name their field.
    let bad = app
        .flows()
        .await
        .migrate_enrollments(app.authed(MigrateEnrollmentsRequest {
            flow_id: "moving".into(),
            from_versions: vec![2],
            to_version: 2,
            ..Default::default()
        }))
        .await
        .unwrap_err();
    assert_eq!(bad.code(), tonic::Code::InvalidArgument);
    assert!(bad.message().contains("from_versions[0]"), "{bad:?}");
    let missing = migrate_to(&app, 9).await.unwrap_err();
    assert_eq!(missing.code(), tonic::Code::NotFound, "{missing:?}");
    // To the first version there is nothing older: nothing moves, nothing is stored.
    let first = migrate_to(&app, 1).await.unwrap();
    assert_eq!((first.moved, first.groups.len()), (0, 0));
    assert!(first.client_key.is_empty());
}

async fn migrate_to(
    app: &TestApp,
    version: i32,
) -> Result<MigrateEnrollmentsResponse, tonic::Status> {
    app.flows()
        .await
        .migrate_enrollments(app.authed(MigrateEnrollmentsRequest {
            flow_id: "moving".into(),
            to_version: version,
            ..Default::default()
        }))
        .await
        .map(|r| r.into_inner())
}

async fn a_move_keeps_each_wait_and_takes_the_new_versions_branches(backend: Backend) {
    let app = spawn_app(backend).await;
    let ids = enrolled(&app).await;
    let first = sent(&app).await;
    assert_eq!(first.len(), CONTACTS);
    let mut e = EnrollmentServiceClient::new(app.channel().await);
    e.pause(app.authed(PauseRequest { id: ids[4].clone() }))
        .await
        .unwrap();
    e.exit(app.authed(ExitRequest {
        id: ids[5].clone(),
        reason: "done by hand".into(),
    }))
    .await
    .unwrap();
    // Contact 0 replies before the move: version 1 does not listen for replies (buffered).
    reply(&app, 0).await;
    let before: HashMap<String, Enrollment> = {
        let mut m = HashMap::new();
        for id in &ids {
            m.insert(id.clone(), get(&app, id).await);
        }
        m
    };
    assert_eq!(before[&ids[0]].current_step, "listen");
    create(&app, V2).await;

    let moved = migrate(&app, &[("listen", "wait_reply")], false, "move-1")
        .await
        .unwrap();
    assert_eq!(moved.moved, 5, "{moved:?}");
    assert_eq!(moved.client_key, "move-1");
    assert_eq!(group(&moved), [(1, "listen", "wait_reply", 5, "")]);

    for (i, id) in ids.iter().enumerate() {
        let now = get(&app, id).await;
        let was = &before[id];
        if i == 5 {
            // Finished: stays on its version, untouched.
            assert_eq!((now.flow_version, now.status.as_str()), (1, "exited"));
            continue;
        }
        assert_eq!(now.flow_version, 2, "{now:?}");
        let journey = app.journey(id).await;
        let migrated: Vec<_> = journey.iter().filter(|j| j.kind == "migrated").collect();
        assert_eq!(migrated.len(), 1, "{journey:?}");
        let detail = detail_json(migrated[0]);
        assert_eq!(detail["from_version"], 1);
        assert_eq!(detail["to_version"], 2);
        assert_eq!(detail["from_step"], "listen");
        assert_eq!(detail["to_step"], "wait_reply");
        if i == 0 {
            // Its buffered reply is taken as the new version's wait starts listening: thanked
            // (below) and done.
            assert_eq!(now.status, "completed", "{now:?}");
            let woken = now.woken.as_ref().expect("woken by the reply");
            assert_eq!(
                (woken.step.as_str(), woken.branch.as_str()),
                ("wait_reply", "reply")
            );
            continue;
        }
        // The same run, waiting at its new name until the same moment; paused stays paused.
        assert_eq!(now.current_step, "wait_reply");
        assert_eq!(now.current_run, was.current_run);
        assert_eq!(now.next_run_at, was.next_run_at);
        assert_eq!(now.status, if i == 4 { "paused" } else { "active" });
    }

    // Contact 0's thanks went out at the move; contact 1 replies now and gets one too;
    // nothing was sent again.
    reply(&app, 1).await;
    let after = sent(&app).await;
    let mut thanked: Vec<&str> = after
        .iter()
        .filter(|(_, t)| t == "thanks")
        .map(|(e, _)| e.as_str())
        .collect();
    thanked.sort();
    let mut expected = vec![ids[0].as_str(), ids[1].as_str()];
    expected.sort();
    assert_eq!(thanked, expected);
    assert!(after.iter().all(|(_, t)| t == "thanks"), "{after:?}");

    // The same key answers the same move; another move under it is refused.
    let again = migrate(&app, &[("listen", "wait_reply")], false, "move-1")
        .await
        .unwrap();
    assert_eq!((again.moved, group(&again)), (moved.moved, group(&moved)));
    let journey = app.journey(&ids[2]).await;
    assert_eq!(journey.iter().filter(|j| j.kind == "migrated").count(), 1);
    let other = migrate(&app, &[("listen", "other")], false, "move-1")
        .await
        .unwrap_err();
    assert_eq!(other.code(), tonic::Code::FailedPrecondition, "{other:?}");
    assert!(other.message().contains("another move"), "{other:?}");

    // The timeouts come on the new version: the waiting ones end, nobody gets a thanks.
    TestClockServiceClient::new(app.channel().await)
        .advance(app.authed(AdvanceRequest {
            target: Some(advance_request::Target::ByMs(4 * 86_400_000)),
        }))
        .await
        .unwrap();
    assert!(sent(&app).await.is_empty());
    for id in &ids[2..4] {
        assert_eq!(get(&app, id).await.status, "completed");
    }

    // The console's flow page says where the running enrollments are: the paused one on v2.
    let (_, cookies) = crate::console::sign_in(&app, &app.token, &[]).await;
    let page = crate::common::http::get(
        app.addr,
        &format!("/console/flows/{}", moved.flow_id),
        &[("Cookie", cookies.as_str())],
    )
    .await;
    assert_eq!(page.status, 200, "{}", page.body);
    let live = page
        .body
        .split("Running enrollments")
        .nth(1)
        .expect("the per-version table");
    assert!(
        live.contains("<td>v2 (latest)</td><td>1</td>") && live.contains("<td>v1</td><td>0</td>"),
        "{live}"
    );
}

async fn a_move_a_stopped_replica_left_is_resumed_from_its_cursor(backend: Backend) {
    use nudge::service::enrollments::migrate::{self, LEASE_MS};
    let app = spawn_app(backend).await;
    let mut ids = enrolled(&app).await;
    create(&app, V2).await;
    ids.sort();
    // A move that committed the batch up to the third enrollment and stopped: its row says so,
    // and its lease runs for another LEASE_MS.
    let core = &app.state.core;
    let now_ms = nudge::clock::to_millis(nudge::clock::Clock::now(&*app.clock));
    let row = nudge::store::enrollment_migrations::MigrationRow {
        id: "mg_left".into(),
        account_id: "default".into(),
        flow_id: get(&app, &ids[0]).await.flow_id,
        client_key: "left".into(),
        request: r#"{"from_versions":[1],"to_version":2,"step_map":{"listen":"wait_reply"}}"#
            .into(),
        status: "running".into(),
        moved: 3,
        groups: r#"[{"from_version":1,"from_step":"listen","to_step":"wait_reply","problem":null,"count":3}]"#.into(),
        cursor: ids[2].clone(),
        started_by: "test".into(),
        lease_until: now_ms + LEASE_MS,
        created_at: now_ms,
        finished_at: None,
    };
    nudge::transaction!(core.db, |tx| tx.start_migration(&row).await).unwrap();
    // Its lease has not run out: nobody takes it over.
    assert_eq!(migrate::resume_abandoned(core).await.unwrap(), 0);
    app.clock.advance(chrono::Duration::milliseconds(LEASE_MS));
    assert_eq!(migrate::resume_abandoned(core).await.unwrap(), 0);
    app.clock.advance(chrono::Duration::milliseconds(1));
    assert_eq!(migrate::resume_abandoned(core).await.unwrap(), 1);
    // The three past the cursor moved; the three before it were the stopped runner's (they
    // never moved here, so they are still on version 1).
    for (i, id) in ids.iter().enumerate() {
        assert_eq!(get(&app, id).await.flow_version, if i > 2 { 2 } else { 1 });
    }
    // The same key answers the whole move (from every older version is version 1 here: the
    // same request).
    let answered = migrate(&app, &[("listen", "wait_reply")], false, "left")
        .await
        .unwrap();
    assert_eq!(answered.moved, 6);
    assert_eq!(group(&answered), [(1, "listen", "wait_reply", 6, "")]);
}

/// The real server killed (SIGKILL) in the middle of a move on PostgreSQL while the planner
/// steps the same enrollments; restarted, the same call (same `client_key`) resumes the move.
mod killed {
    mod postgres {
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        #[ignore = "needs PostgreSQL: set NUDGE_TEST_DATABASE_URL and run with --ignored (bash .ci/run does)"]
        async fn a_move_killed_half_way_resumes_and_moves_each_once() {
            super::super::a_move_killed_half_way_resumes_and_moves_each_once().await
        }
    }
}

const KILLED_N: usize = 6_000;

const CRASH_V1: &str = r#"{
  "name": "crash",
  "start": "w1",
  "steps": {
    "w1": { "type": "wait", "params": { "duration": "1h" }, "next": { "then": "mail" } },
    "mail": { "type": "email", "params": { "template": "t1" }, "next": { "then": "w2" } },
    "w2": { "type": "wait", "params": { "duration": "1h" }, "next": { "then": "done" } },
    "done": { "type": "end" }
  }
}"#;

async fn a_move_killed_half_way_resumes_and_moves_each_once() {
    use crate::common::pg::PgDatabase;
    use crate::common::process::{
        all_enrollments, claim_all, connect, create_flow_and_contact, enroll_items, free_port,
        journey_of, nudge, serve, KillOnDrop,
    };
    use crate::common::with_token as authed;
    use nudge::proto::v1::flow_service_client::FlowServiceClient;
    use std::collections::HashSet;

    let pg = PgDatabase::create().await;
    let token = nudge(&["token", "create", "--database-url", &pg.url])
        .trim()
        .to_string();
    let port = free_port();
    let mut first = KillOnDrop(serve(&pg.url, port));
    let ch = connect(port).await;
    create_flow_and_contact(&ch, &token, CRASH_V1).await;
    let mut enrollments = EnrollmentServiceClient::new(ch.clone());
    for chunk in enroll_items("crash", KILLED_N).chunks(1_000) {
        let results = enrollments
            .batch_enroll(authed(
                BatchEnrollRequest {
                    items: chunk.to_vec(),
                },
                &token,
            ))
            .await
            .unwrap()
            .into_inner()
            .results;
        assert!(results.iter().all(|r| r.enrollment.is_some()));
    }
    FlowServiceClient::new(ch.clone())
        .create_flow(authed(
            CreateFlowRequest {
                definition: CRASH_V1.replace(r#""template": "t1""#, r#""template": "t2""#),
            },
            &token,
        ))
        .await
        .unwrap();
    let request = MigrateEnrollmentsRequest {
        flow_id: "crash".into(),
        to_version: 2,
        client_key: "crash-move".into(),
        ..Default::default()
    };

    // The waits fall due while the move runs; the server is killed once a batch committed.
    let mut clock = TestClockServiceClient::new(ch.clone());
    let advance = authed(
        AdvanceRequest {
            target: Some(advance_request::Target::ByMs(3_600_000)),
        },
        &token,
    );
    let advancing = tokio::spawn(async move { clock.advance(advance).await });
    let mut flows = FlowServiceClient::new(ch.clone());
    let call = authed(request.clone(), &token);
    let moving = tokio::spawn(async move { flows.migrate_enrollments(call).await });
    let db = nudge::store::Db::connect(&nudge::config::DatabaseUrl::Postgres(pg.url.clone()))
        .await
        .unwrap();
    // Polled as fast as the database answers (each read is the pace), until a batch committed
    // or a minute passed.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let mut seen = None;
    while seen.is_none() && std::time::Instant::now() < deadline {
        seen = nudge::store::enrollment_migrations::by_client_key(&db, "default", "crash-move")
            .await
            .unwrap()
            .filter(|r| r.moved > 0);
    }
    first.take();
    let seen = seen.expect("a batch committed before the kill");
    assert!(
        moving.await.unwrap().is_err(),
        "killed before the move answered"
    );
    let _ = advancing.await;
    let stopped = nudge::store::enrollment_migrations::by_client_key(&db, "default", "crash-move")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        stopped.status, "running",
        "the kill landed mid-move: {seen:?}"
    );
    assert!((stopped.moved as usize) < KILLED_N, "{stopped:?}");

    // Restarted, the same call resumes the move and answers all of it.
    let port = free_port();
    let _second = KillOnDrop(serve(&pg.url, port));
    let ch = connect(port).await;
    let done = FlowServiceClient::new(ch.clone())
        .migrate_enrollments(authed(request, &token))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(done.moved as usize, KILLED_N, "{done:?}");
    TestClockServiceClient::new(ch.clone())
        .advance(authed(
            AdvanceRequest {
                target: Some(advance_request::Target::ByMs(3 * 3_600_000)),
            },
            &token,
        ))
        .await
        .unwrap();

    // Every enrollment on version 2 and finished, moved once; one email each (t1 when the
    // planner stepped it before its move, t2 after), each step entered once.
    let all = all_enrollments(&ch, &token).await;
    assert_eq!(all.len(), KILLED_N);
    assert!(all
        .iter()
        .all(|e| e.flow_version == 2 && e.status == "completed"));
    let mut keys = HashSet::new();
    for x in claim_all(&ch, &token).await {
        assert!(["t1", "t2"].contains(&x.template.as_str()), "{x:?}");
        assert!(keys.insert(x.idempotency_key.clone()), "{x:?}");
    }
    assert_eq!(keys.len(), KILLED_N, "one email each");
    for e in all.iter().step_by(97) {
        let entries = journey_of(&ch, &token, &e.id).await;
        assert_eq!(
            entries.iter().filter(|j| j.kind == "migrated").count(),
            1,
            "{entries:?}"
        );
        let runs: Vec<serde_json::Value> = entries
            .iter()
            .filter(|j| j.kind == "run_opened")
            .map(crate::common::detail_json)
            .collect();
        let steps: Vec<&str> = runs.iter().map(|r| r["step"].as_str().unwrap()).collect();
        assert_eq!(steps, ["w1", "mail", "w2", "done"], "{entries:?}");
        let ids: Vec<u64> = runs.iter().map(|r| r["id"].as_u64().unwrap()).collect();
        assert_eq!(ids, [1, 2, 3, 4]);
    }
}

/// `nudge migrate-enrollments` on the host, beside a running server on the same SQLite file: the
/// dry run as a table first, a refusal that says what to map, and a move only with `--yes`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_command_line_prints_the_dry_run_and_moves_only_when_told() {
    use crate::common::process::NUDGE;
    let app = spawn_app(Backend::Sqlite).await;
    let ids = enrolled(&app).await;
    create(&app, V2).await;
    let nudge::config::DatabaseUrl::Sqlite(path) = &app.database_url else {
        panic!("a SQLite test app");
    };
    let run = |extra: &[&str]| {
        let mut args = vec![
            "migrate-enrollments",
            "moving",
            "--to-version",
            "2",
            "--database-url",
            path,
        ];
        args.extend_from_slice(extra);
        let out = std::process::Command::new(NUDGE)
            .args(&args)
            .env_remove("NUDGE_DATABASE_URL")
            .output()
            .unwrap();
        (
            out.status.success(),
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };

    let (ok, out, err) = run(&["--yes"]);
    assert!(!ok, "{out}{err}");
    assert!(out.contains("UNMAPPED_STEP"), "{out}");
    assert!(
        err.contains("--map OLD=NEW") && err.contains("nothing moved"),
        "{err}"
    );

    let (ok, out, err) = run(&["--map", "listen=wait_reply"]);
    assert!(ok, "{out}{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "version  step    to step     count  problem");
    assert_eq!(lines[1], "1        listen  wait_reply  6");
    assert!(
        lines[2].starts_with("dry run: 6 enrollment(s) would move"),
        "{out}"
    );
    for id in &ids {
        assert_eq!(get(&app, id).await.flow_version, 1);
    }

    let (ok, out, err) = run(&["--map", "listen=wait_reply", "--yes"]);
    assert!(ok, "{out}{err}");
    assert!(out.contains("moved 6 enrollment(s)"), "{out}");
    for id in &ids {
        assert_eq!(get(&app, id).await.flow_version, 2);
    }
    let (ok, _, err) = run(&["--map", "listen"]);
    assert!(!ok);
    assert!(err.contains("is not OLD=NEW"), "{err}");
}
