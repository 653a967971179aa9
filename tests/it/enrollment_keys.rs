//! What an enrollment is found by (its contact and flow, its client key, its status) across the
//! migration that took the PostgreSQL keys table's primary key away (`enrollment_keys_by_flow`):
//! a store written before it migrates and reads back the same; afterwards a status change still
//! reaches the keys, one live enrollment per contact and flow is still the rule, and a client
//! key still returns its enrollment.

use crate::common::{spawn_app, Backend, TestApp};
use crate::journey_golden::advance;
use diesel_async::RunQueryDsl;
use nudge::proto::v1::enrollment_service_client::EnrollmentServiceClient;
use nudge::proto::v1::*;
use nudge::store::Db;

backend_tests!(
    a_store_written_before_the_keys_lost_their_primary_key_reads_back_the_same,
    a_store_written_before_ids_compared_bytewise_reads_back_the_same,
);

/// A wait, then the end: an hour after enrolling, an enrollment completes.
const FLOW: &str = r#"{
  "name": "keys",
  "start": "w",
  "steps": {
    "w": { "type": "wait", "params": { "duration": "1h" }, "next": { "then": "done" } },
    "done": { "type": "end" }
  }
}"#;

/// The migration that took the keys' primary key, as diesel records it, and its undoing.
const KEYS_BY_FLOW: (&str, &str) = (
    "20261215100000",
    include_str!("../../migrations/postgres/2026-12-15-100000_enrollment_keys_by_flow/down.sql"),
);

/// The migration that made identifiers compare bytewise (on SQLite, which compares text
/// bytewise already, it changes nothing), and its undoing.
const IDS_COLLATE_C: (&str, &str) = (
    "20261217100000",
    include_str!("../../migrations/postgres/2026-12-17-100000_ids_collate_c/down.sql"),
);

/// Enrolls contact `c` with `key`; the enrollment, or the refusal's code.
async fn enroll(
    app: &TestApp,
    key: &str,
    allow_duplicate: bool,
) -> Result<(String, bool), tonic::Code> {
    EnrollmentServiceClient::new(app.channel().await)
        .enroll(app.authed(EnrollRequest {
            contact_id: "c".into(),
            flow_id: "keys".into(),
            client_key: key.into(),
            allow_duplicate,
            ..Default::default()
        }))
        .await
        .map(|r| {
            let r = r.into_inner();
            (r.enrollment.unwrap().id, r.created)
        })
        .map_err(|s| s.code())
}

/// The ids `ListEnrollments` gives for the flow, the contact, and each status, in that order.
async fn listed(app: &TestApp) -> Vec<Vec<String>> {
    let mut client = EnrollmentServiceClient::new(app.channel().await);
    let mut out = Vec::new();
    for (flow_id, contact_id, status) in [
        ("keys", "", ""),
        ("", "c", ""),
        ("keys", "", "active"),
        ("keys", "", "completed"),
        ("", "c", "completed"),
    ] {
        let page = client
            .list_enrollments(app.authed(ListEnrollmentsRequest {
                flow_id: flow_id.into(),
                contact_id: contact_id.into(),
                status: status.into(),
                page: None,
            }))
            .await
            .unwrap()
            .into_inner();
        out.push(page.enrollments.into_iter().map(|e| e.id).collect());
    }
    out
}

/// Puts the store back as it was before `migration` (PostgreSQL: its own `down.sql`; SQLite
/// has nothing to undo), the migration not applied.
async fn write_as_before(db: &Db, migration: (&str, &str)) {
    let (version, down) = migration;
    let forget = format!("DELETE FROM __diesel_schema_migrations WHERE version = '{version}'");
    match db {
        Db::Postgres(pool) => {
            let c = &mut *pool.get().await.unwrap();
            diesel_async::SimpleAsyncConnection::batch_execute(c, down)
                .await
                .unwrap();
            diesel::sql_query(forget).execute(c).await.unwrap();
        }
        Db::Sqlite(pool) => {
            let c = &mut *pool.get().await.unwrap();
            diesel::sql_query(forget).execute(c).await.unwrap();
        }
    }
}

/// The flow, its contact and three enrollments of it (keys `k1`–`k3`): one completed, one
/// live, one live beside it (allow_duplicate).
async fn three_enrollments(app: &TestApp) -> [String; 3] {
    crate::common::process::create_flow_and_contact(&app.channel().await, &app.token, FLOW).await;
    let (done, _) = enroll(app, "k1", false).await.unwrap();
    advance(app, 3_600_000 + 1_000).await;
    let (live, _) = enroll(app, "k2", false).await.unwrap();
    let (beside, _) = enroll(app, "k3", true).await.unwrap();
    [done, live, beside]
}

async fn a_store_written_before_the_keys_lost_their_primary_key_reads_back_the_same(
    backend: Backend,
) {
    let app = spawn_app(backend).await;
    let [done, live, beside] = three_enrollments(&app).await;
    let before = listed(&app).await;
    assert_eq!(before[3], vec![done.clone()], "completed, in the keys");
    let mut active = vec![live.clone(), beside.clone()];
    active.sort();
    assert_eq!(before[2], active, "live, in the keys");

    write_as_before(&app.state.core.db, KEYS_BY_FLOW).await;
    assert_eq!(Db::migrate(&app.database_url).await.unwrap(), 1);
    assert_eq!(listed(&app).await, before, "read back the same");

    // A client key returns its enrollment; a second live one of the contact is refused.
    assert_eq!(enroll(&app, "k2", false).await, Ok((live.clone(), false)));
    assert_eq!(enroll(&app, "k1", false).await, Ok((done.clone(), false)));
    assert_eq!(
        enroll(&app, "k4", false).await,
        Err(tonic::Code::AlreadyExists)
    );
    // A status change reaches the keys: both live ones complete, and a new one may start.
    advance(&app, 3_600_000 + 1_000).await;
    let after = listed(&app).await;
    assert_eq!(after[2], Vec::<String>::new(), "none active");
    let mut completed = vec![done, live, beside];
    completed.sort();
    assert_eq!(after[3], completed);
    assert_eq!(after[4], completed);
    let (again, created) = enroll(&app, "k4", false).await.unwrap();
    assert!(created);
    assert_eq!(
        enroll(&app, "k5", false).await,
        Err(tonic::Code::AlreadyExists),
        "one live per contact and flow"
    );
    assert_eq!(enroll(&app, "k4", false).await, Ok((again, false)));
    app.stop().await;
}

/// Identifiers became bytewise ("C") on PostgreSQL: a store written before reads back the same
/// (listings by flow, contact and status, the journey), and afterwards the keys keep their
/// meaning: a client key returns its enrollment, a second live one is refused, a status change
/// reaches the keys. SQLite's migration of the same name changes nothing.
async fn a_store_written_before_ids_compared_bytewise_reads_back_the_same(backend: Backend) {
    let app = spawn_app(backend).await;
    let [done, live, beside] = three_enrollments(&app).await;
    let before = listed(&app).await;
    let ids = [done.clone(), live.clone(), beside.clone()];
    let journeys_before = journeys(&app, &ids).await;

    write_as_before(&app.state.core.db, IDS_COLLATE_C).await;
    assert_eq!(Db::migrate(&app.database_url).await.unwrap(), 1);
    assert_eq!(listed(&app).await, before, "read back the same");
    assert_eq!(journeys(&app, &ids).await, journeys_before);

    assert_eq!(enroll(&app, "k2", false).await, Ok((live.clone(), false)));
    assert_eq!(
        enroll(&app, "k4", false).await,
        Err(tonic::Code::AlreadyExists),
        "one live per contact and flow"
    );
    advance(&app, 3_600_000 + 1_000).await;
    let after = listed(&app).await;
    assert_eq!(after[2], Vec::<String>::new(), "none active");
    let mut completed = vec![done, live, beside];
    completed.sort();
    assert_eq!(after[3], completed);
    app.stop().await;
}

/// Each enrollment's journey entries, as `GetJourney` gives them.
async fn journeys(app: &TestApp, ids: &[String]) -> Vec<String> {
    let mut client = EnrollmentServiceClient::new(app.channel().await);
    let mut out = Vec::new();
    for id in ids {
        let journey = client
            .get_journey(app.authed(GetJourneyRequest {
                enrollment_id: id.clone(),
                ..Default::default()
            }))
            .await
            .unwrap()
            .into_inner();
        assert!(!journey.entries.is_empty(), "{id} has a journey");
        out.push(format!("{:?}", journey.entries));
    }
    out
}
