//! docs/service.md, "Errors" under concurrency: "one active enrollment of a contact in a flow" and "one
//! enrollment per client key" hold when calls race (unique indexes, not a check then an insert),
//! and replicas starting at once on a fresh database all migrate it, once.
//!
//! SQLite serializes this process's writers on one connection, so its twins of the racing
//! tests pass with or without the indexes; `the_index_refuses_a_second_live_enrollment` shows
//! the index itself on both backends.

use crate::common::{empty_database, spawn_app, Backend, TestApp};
use nudge::app::App;
use nudge::clock::ManualClock;
use nudge::config::{ClockKind, Config};
use nudge::proto::v1::enrollment_service_client::EnrollmentServiceClient;
use nudge::proto::v1::*;
use nudge::store::enrollments::ListFilter;
use nudge::store::{Db, StoreError, Writes};
use std::collections::HashSet;
use std::sync::Arc;
use tonic::Code;

backend_tests!(
    concurrent_enrolls_make_one_active_enrollment,
    concurrent_enrolls_with_one_client_key_answer_one_enrollment,
    concurrent_batch_enrolls_make_one_active_enrollment_per_contact,
    the_index_refuses_a_second_live_enrollment,
    concurrent_migrations_apply_each_migration_once,
    concurrent_app_starts_on_a_fresh_database_all_succeed,
);

/// Trials of each race; one trial often passes by luck, twenty rarely.
const TRIALS: usize = 20;
/// Concurrent calls per trial.
const RACERS: usize = 4;

/// The docs/flows.md example flow and contacts `c0`…`c{n-1}`.
async fn setup(app: &TestApp, contacts: usize) {
    let definition = std::fs::read_to_string("fixtures/flows/outbound-v1.json").unwrap();
    app.flows()
        .await
        .create_flow(app.authed(CreateFlowRequest { definition }))
        .await
        .unwrap();
    let mut client = app.contacts().await;
    for i in 0..contacts {
        client
            .upsert_contact(app.authed(UpsertContactRequest {
                contact: Some(Contact {
                    id: format!("c{i}"),
                    email: format!("c{i}@example.com"),
                    tz: "America/New_York".into(),
                    ..Default::default()
                }),
            }))
            .await
            .unwrap();
    }
}

fn enroll_req(contact: &str, key: &str) -> EnrollRequest {
    EnrollRequest {
        contact_id: contact.into(),
        flow_id: "outbound-v1".into(),
        input: r#"{"demo_at": "2026-12-20T15:00:00Z", "nudge_ms": 60000}"#.into(),
        client_key: key.into(),
        ..Default::default()
    }
}

/// `RACERS` clients, each on its own connection, so their calls really run at once.
async fn racers(app: &TestApp) -> Vec<EnrollmentServiceClient<tonic::transport::Channel>> {
    let mut out = Vec::new();
    for _ in 0..RACERS {
        out.push(EnrollmentServiceClient::new(app.channel().await));
    }
    out
}

async fn live_enrollments_of(app: &TestApp, contact: &str) -> usize {
    let filter = ListFilter {
        contact_id: Some(contact),
        ..Default::default()
    };
    nudge::store::enrollments::list(&app.state.core.db, "default", &filter, 100)
        .await
        .unwrap()
        .iter()
        .filter(|e| nudge::store::LIVE.contains(&e.status.as_str()))
        .count()
}

async fn concurrent_enrolls_make_one_active_enrollment(backend: Backend) {
    let app = spawn_app(backend).await;
    setup(&app, TRIALS).await;
    let clients = racers(&app).await;
    for trial in 0..TRIALS {
        let contact = format!("c{trial}");
        let calls = clients.iter().map(|c| {
            let (mut c, request) = (c.clone(), app.authed(enroll_req(&contact, "")));
            tokio::spawn(async move { c.enroll(request).await })
        });
        let answers = futures_util::future::join_all(calls).await;
        let mut created = 0;
        for answer in answers {
            match answer.unwrap() {
                Ok(r) => {
                    assert!(r.into_inner().created);
                    created += 1;
                }
                Err(status) => {
                    assert_eq!(
                        status.code(),
                        Code::AlreadyExists,
                        "trial {trial}: {status:?}"
                    );
                    assert!(status.message().contains("allow_duplicate"), "{status:?}");
                }
            }
        }
        assert_eq!(
            created, 1,
            "trial {trial}: one call enrolls, the others are refused"
        );
        assert_eq!(
            live_enrollments_of(&app, &contact).await,
            1,
            "trial {trial}"
        );
    }
    app.stop().await;
}

async fn concurrent_enrolls_with_one_client_key_answer_one_enrollment(backend: Backend) {
    let app = spawn_app(backend).await;
    setup(&app, TRIALS).await;
    let clients = racers(&app).await;
    for trial in 0..TRIALS {
        let contact = format!("c{trial}");
        let key = format!("key-{trial}");
        let calls = clients.iter().map(|c| {
            let (mut c, request) = (c.clone(), app.authed(enroll_req(&contact, &key)));
            tokio::spawn(async move { c.enroll(request).await })
        });
        let answers = futures_util::future::join_all(calls).await;
        let mut ids = HashSet::new();
        let mut created = 0;
        for answer in answers {
            // As a sequential repeat: the same enrollment, never ALREADY_EXISTS.
            let answer = answer
                .unwrap()
                .unwrap_or_else(|s| panic!("trial {trial}: {s:?}"))
                .into_inner();
            created += usize::from(answer.created);
            ids.insert(answer.enrollment.unwrap().id);
        }
        assert_eq!(ids.len(), 1, "trial {trial}: one enrollment for one key");
        assert_eq!(created, 1, "trial {trial}: created by one call only");
        assert_eq!(
            live_enrollments_of(&app, &contact).await,
            1,
            "trial {trial}"
        );
    }
    app.stop().await;
}

async fn concurrent_batch_enrolls_make_one_active_enrollment_per_contact(backend: Backend) {
    const PER_TRIAL: usize = 3;
    let app = spawn_app(backend).await;
    setup(&app, TRIALS * PER_TRIAL).await;
    let clients = racers(&app).await;
    for trial in 0..TRIALS {
        let contacts: Vec<String> = (0..PER_TRIAL)
            .map(|i| format!("c{}", trial * PER_TRIAL + i))
            .collect();
        let calls = clients.iter().enumerate().map(|(n, c)| {
            // Each racer names the contacts in another order.
            let mut items: Vec<EnrollRequest> =
                contacts.iter().map(|id| enroll_req(id, "")).collect();
            items.rotate_left(n % PER_TRIAL);
            if n % 2 == 1 {
                items.reverse();
            }
            let (mut c, request) = (c.clone(), app.authed(BatchEnrollRequest { items }));
            tokio::spawn(async move { c.batch_enroll(request).await })
        });
        let answers = futures_util::future::join_all(calls).await;
        let mut created = 0;
        for answer in answers {
            let results = answer
                .unwrap()
                .unwrap_or_else(|s| panic!("trial {trial}: {s:?}"))
                .into_inner()
                .results;
            for r in results {
                if r.created {
                    created += 1;
                } else {
                    assert_eq!(r.error_code, "ALREADY_EXISTS", "trial {trial}: {r:?}");
                }
            }
        }
        assert_eq!(
            created, PER_TRIAL,
            "trial {trial}: each contact enrolled once"
        );
        for contact in &contacts {
            assert_eq!(live_enrollments_of(&app, contact).await, 1, "trial {trial}");
        }
    }
    app.stop().await;
}

/// Below the service: a second live enrollment of the same contact in the same flow, written
/// straight to the store (as a racing call would), is refused by `enrollments_one_live`; one
/// marked `allow_duplicate` is not.
async fn the_index_refuses_a_second_live_enrollment(backend: Backend) {
    let app = spawn_app(backend).await;
    setup(&app, 1).await;
    EnrollmentServiceClient::new(app.channel().await)
        .enroll(app.authed(enroll_req("c0", "")))
        .await
        .unwrap();
    let db = &app.state.core.db;
    let stored = nudge::store::enrollments::list(db, "default", &ListFilter::default(), 10)
        .await
        .unwrap()
        .remove(0);
    let write = |allow_duplicate: bool| {
        let row = nudge::store::EnrollmentRow {
            id: nudge::store::new_id("en"),
            allow_duplicate,
            client_key: None,
            ..stored.clone()
        };
        async move {
            let mut tx = db.begin().await?;
            let written = tx
                .write_all(&Writes {
                    created: [row.id.clone()].into_iter().collect(),
                    enrollments: vec![row],
                    ..Default::default()
                })
                .await;
            tx.finish(written).await
        }
    };
    let refused: Result<(), StoreError> = write(false).await;
    assert!(
        matches!(
            refused,
            Err(StoreError::Query(diesel::result::Error::DatabaseError(
                diesel::result::DatabaseErrorKind::UniqueViolation,
                _
            )))
        ),
        "{refused:?}"
    );
    write(true).await.unwrap();
    assert_eq!(live_enrollments_of(&app, "c0").await, 2);
    app.stop().await;
}

fn migration_count() -> usize {
    use diesel::migration::MigrationSource;
    MigrationSource::<diesel::pg::Pg>::migrations(&nudge::store::POSTGRES_MIGRATIONS)
        .unwrap()
        .len()
}

async fn concurrent_migrations_apply_each_migration_once(backend: Backend) {
    for trial in 0..5 {
        let (url, _dir, _pg) = empty_database(backend).await;
        let runs = (0..4).map(|_| {
            let url = url.clone();
            tokio::spawn(async move { Db::migrate(&url).await })
        });
        let mut applied = 0;
        for run in futures_util::future::join_all(runs).await {
            applied += run
                .unwrap()
                .unwrap_or_else(|e| panic!("trial {trial}: {e:?}"));
        }
        assert_eq!(
            applied,
            migration_count(),
            "trial {trial}: each migration ran once"
        );
        assert_eq!(Db::migrate(&url).await.unwrap(), 0);
    }
}

async fn concurrent_app_starts_on_a_fresh_database_all_succeed(backend: Backend) {
    let (url, _dir, _pg) = empty_database(backend).await;
    let starts = (0..3).map(|_| {
        let mut config = Config::new(
            "127.0.0.1:0".parse().unwrap(),
            url.clone(),
            ClockKind::Manual,
        );
        config.announce_first_token = false;
        let clock = Arc::new(ManualClock::new(crate::common::start_instant()));
        tokio::spawn(async move { App::build_with_clock(config, clock).await.map(drop) })
    });
    for start in futures_util::future::join_all(starts).await {
        start.unwrap().unwrap();
    }
    assert_eq!(Db::migrate(&url).await.unwrap(), 0);
}
