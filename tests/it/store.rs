//! The store's promises that the API does not show directly: foreign keys are enforced on both
//! backends, and SQLite runs with WAL, a busy timeout and foreign keys on.

use crate::common::{fresh_database, Backend};
use diesel::sql_types::{BigInt, Text};
use diesel::QueryableByName;
use diesel_async::RunQueryDsl;
use nudge::store::tokens::ApiToken;
use nudge::store::{Db, StoreError};
use nudge::with_conn;

backend_tests!(foreign_keys_are_enforced);

async fn foreign_keys_are_enforced(backend: Backend) {
    let (url, _dir, _pg) = fresh_database(backend).await;
    Db::migrate(&url).await.unwrap();
    let db = Db::connect(&url).await.unwrap();
    let orphan = ApiToken {
        id: "tok_orphan".into(),
        account_id: "no-such-account".into(),
        hash: "0".repeat(64),
        scope: "full".into(),
        created_at: 0,
    };
    let error = nudge::store::tokens::insert(&db, &orphan)
        .await
        .unwrap_err();
    assert!(
        matches!(
            error,
            StoreError::Query(diesel::result::Error::DatabaseError(
                diesel::result::DatabaseErrorKind::ForeignKeyViolation,
                _
            ))
        ),
        "{error:?}"
    );
}

#[derive(QueryableByName)]
struct Mode {
    #[diesel(sql_type = Text)]
    journal_mode: String,
}

#[derive(QueryableByName)]
struct Number {
    #[diesel(sql_type = BigInt)]
    value: i64,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_runs_with_wal_busy_timeout_and_foreign_keys() {
    let (url, _dir, _pg) = fresh_database(Backend::Sqlite).await;
    let db = Db::connect(&url).await.unwrap();
    let conn = db.conn().await.unwrap();
    let (mode, timeout, fks) = with_conn!(conn, c => {
        let mode: Mode = diesel::sql_query("PRAGMA journal_mode").get_result(c).await.unwrap();
        let timeout: Number = diesel::sql_query("SELECT timeout AS value FROM pragma_busy_timeout")
            .get_result(c)
            .await
            .unwrap();
        let fks: Number = diesel::sql_query("SELECT foreign_keys AS value FROM pragma_foreign_keys")
            .get_result(c)
            .await
            .unwrap();
        (mode.journal_mode, timeout.value, fks.value)
    });
    assert_eq!(mode, "wal");
    assert_eq!(timeout, 5_000);
    assert_eq!(fks, 1);
}

/// PostgreSQL's reach query joins on (account, contact) pairs: a group holding signals for
/// `ann` in one account and `bob` in another must not lock or route `bob` of the first account
/// or `ann` of the second (a cross product of the two lists would).
async fn reach_matches_account_and_contact_pairs() {
    let (url, _dir, _pg) = fresh_database(Backend::Postgres).await;
    Db::migrate(&url).await.unwrap();
    let db = Db::connect(&url).await.unwrap();
    let nudge::store::Conn::Postgres(mut pooled) = db.conn().await.unwrap() else {
        panic!("a PostgreSQL connection")
    };
    let c = &mut *pooled;
    diesel::sql_query(
        "INSERT INTO enrollments (id, account_id, flow_id, flow_version, contact_id, sender_id, \
         status, state, created_at, updated_at) VALUES \
         ('e1', 'a1', 'f', 1, 'ann', 's', 'active', '{}', 1, 1), \
         ('e2', 'a2', 'f', 1, 'ann', 's', 'active', '{}', 2, 2), \
         ('e3', 'a1', 'f', 1, 'bob', 's', 'paused', '{}', 3, 3), \
         ('e4', 'a2', 'f', 1, 'bob', 's', 'paused', '{}', 4, 4), \
         ('e5', 'a1', 'f', 1, 'ann', 's', 'completed', '{}', 5, 5)",
    )
    .execute(c)
    .await
    .unwrap();
    let pairs = [
        ("a1".to_string(), "ann".to_string()),
        ("a2".to_string(), "bob".to_string()),
    ];
    let found = nudge::store::pg_batch::reached_enrollments(c, &pairs)
        .await
        .unwrap();
    let ids: Vec<&str> = found.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids, ["e1", "e4"]);
    assert!(nudge::store::pg_batch::reached_enrollments(c, &[])
        .await
        .unwrap()
        .is_empty());
}

mod pg {
    mod postgres {
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        #[ignore = "needs PostgreSQL: set NUDGE_TEST_DATABASE_URL and run with --ignored (bash .ci/run does)"]
        async fn reach_matches_account_and_contact_pairs() {
            super::super::reach_matches_account_and_contact_pairs().await
        }
    }
}
