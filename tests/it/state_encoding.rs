//! The stored state's encoding changed from JSON text to MessagePack bytes
//! (`store::state_encoding`): a store written before it migrates, and every enrollment in it
//! reads back the same through `GetEnrollment`, `Explain` and `GetJourney`, then steps on and
//! is written in the new form.

use crate::common::{spawn_app, Backend, TestApp};
use crate::journey_golden::advance;
use diesel::sql_types::{Binary, Text};
use diesel_async::RunQueryDsl;
use nudge::proto::v1::enrollment_service_client::EnrollmentServiceClient;
use nudge::proto::v1::*;
use nudge::store::Db;

backend_tests!(a_store_written_as_json_migrates_and_reads_back_the_same);

const FLOW: &str = r#"{
  "name": "encoding",
  "start": "w1",
  "steps": {
    "w1": { "type": "wait", "params": { "duration": "1h" }, "next": { "then": "mail" } },
    "mail": { "type": "email", "params": { "template": "t" }, "next": { "then": "reply" } },
    "reply": { "type": "wait_for", "params": { "events": ["reply"], "timeout": "2d" },
               "next": { "reply": "won", "timeout": "lost" } },
    "won": { "type": "end", "params": { "outcome": "replied" } },
    "lost": { "type": "end", "params": { "outcome": "silent" } }
  }
}"#;

/// The migration that changed the encoding, as diesel records it.
const VERSION: &str = "20261207100000";

#[derive(diesel::QueryableByName)]
struct Stored {
    #[diesel(sql_type = Text)]
    id: String,
    #[diesel(sql_type = Binary)]
    state: Vec<u8>,
}

async fn stored(db: &Db) -> Vec<Stored> {
    let q = "SELECT id, state FROM enrollments ORDER BY id";
    match db {
        Db::Postgres(pool) => diesel::sql_query(q)
            .load(&mut *pool.get().await.unwrap())
            .await
            .unwrap(),
        Db::Sqlite(pool) => diesel::sql_query(q)
            .load(&mut *pool.get().await.unwrap())
            .await
            .unwrap(),
    }
}

/// Puts the store back as it was before the migration: every state as its JSON text, the
/// column text again (PostgreSQL: the migration's own `down.sql`), the migration not applied.
async fn write_as_before(db: &Db) {
    let states: Vec<(String, String)> = stored(db)
        .await
        .into_iter()
        .map(|s| {
            let state = nudge::store::state_encoding::decode(&s.state).unwrap();
            (s.id, serde_json::to_string(&state).unwrap())
        })
        .collect();
    assert!(!states.is_empty());
    let forget = format!("DELETE FROM __diesel_schema_migrations WHERE version = '{VERSION}'");
    match db {
        Db::Postgres(pool) => {
            let c = &mut *pool.get().await.unwrap();
            for (id, json) in &states {
                diesel::sql_query(
                    "UPDATE enrollments SET state = convert_to($1, 'UTF8') WHERE id = $2",
                )
                .bind::<Text, _>(json)
                .bind::<Text, _>(id)
                .execute(c)
                .await
                .unwrap();
            }
            let down =
                include_str!("../../migrations/postgres/2026-12-07-100000_state_encoding/down.sql");
            diesel::sql_query(down).execute(c).await.unwrap();
            diesel::sql_query(forget).execute(c).await.unwrap();
        }
        Db::Sqlite(pool) => {
            let c = &mut *pool.get().await.unwrap();
            for (id, json) in &states {
                // Bound as text, so SQLite stores a text value, as before the change.
                diesel::sql_query("UPDATE enrollments SET state = ? WHERE id = ?")
                    .bind::<Text, _>(json)
                    .bind::<Text, _>(id)
                    .execute(c)
                    .await
                    .unwrap();
            }
            diesel::sql_query(forget).execute(c).await.unwrap();
        }
    }
}

/// What a client reads of `id`.
async fn read(app: &TestApp, id: &str) -> (Enrollment, ExplainResponse, Vec<JourneyEntry>) {
    let mut client = EnrollmentServiceClient::new(app.channel().await);
    let enrollment = client
        .get_enrollment(app.authed(GetEnrollmentRequest { id: id.into() }))
        .await
        .unwrap()
        .into_inner()
        .enrollment
        .unwrap();
    let explain = client
        .explain(app.authed(ExplainRequest { id: id.into() }))
        .await
        .unwrap()
        .into_inner();
    (enrollment, explain, app.journey(id).await)
}

async fn enroll(app: &TestApp, key: &str) -> String {
    EnrollmentServiceClient::new(app.channel().await)
        .enroll(app.authed(EnrollRequest {
            contact_id: "c".into(),
            flow_id: "encoding".into(),
            client_key: key.into(),
            allow_duplicate: true,
            input: r#"{"deal":{"amount":12.5,"tags":["a","é \"q\""]},"n":-3,"big":18446744073709551615}"#
                .into(),
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner()
        .enrollment
        .unwrap()
        .id
}

async fn a_store_written_as_json_migrates_and_reads_back_the_same(backend: Backend) {
    let app = spawn_app(backend).await;
    crate::common::process::create_flow_and_contact(&app.channel().await, &app.token, FLOW).await;
    // One past its email and waiting for a reply, one in its first wait.
    let replying = enroll(&app, "k1").await;
    advance(&app, 3_600_000 + 1_000).await;
    let waiting = enroll(&app, "k2").await;
    let db = &app.state.core.db;
    assert!(
        stored(db).await.iter().all(|s| s.state[0] == 1),
        "written as MessagePack"
    );
    let before = [read(&app, &replying).await, read(&app, &waiting).await];
    assert_eq!(before[0].0.current_step, "reply");
    assert_eq!(before[1].0.current_step, "w1");

    write_as_before(db).await;
    assert!(
        stored(db).await.iter().all(|s| s.state[0] == b'{'),
        "JSON, as before"
    );
    assert_eq!(Db::migrate(&app.database_url).await.unwrap(), 1);

    // Read back the same, still stored as the JSON they were written in.
    let after = [read(&app, &replying).await, read(&app, &waiting).await];
    assert_eq!(after, before);
    assert!(stored(db).await.iter().all(|s| s.state[0] == b'{'));

    // They step on from there, and are written in the new form.
    advance(&app, 2 * 86_400_000).await;
    let (done, _, journey) = read(&app, &replying).await;
    assert_eq!(
        (done.status.as_str(), done.outcome.as_str()),
        ("completed", "silent")
    );
    assert!(journey.len() > before[0].2.len());
    let (moved, _, _) = read(&app, &waiting).await;
    assert_eq!(moved.current_step, "reply");
    assert!(
        stored(db).await.iter().all(|s| s.state[0] == 1),
        "stepped, so rewritten"
    );
    app.stop().await;
}
