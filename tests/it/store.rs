//! The store's promises that the API does not show directly: foreign keys are enforced on both
//! backends, SQLite runs with WAL, a busy timeout and foreign keys on, and the batch writers
//! (PostgreSQL's array-bound `unnest` statements, SQLite's multi-row inserts) store every
//! column where `schema.rs` reads it back.

use crate::common::{fresh_database, Backend};
use diesel::sql_types::{BigInt, Text};
use diesel::QueryableByName;
use diesel_async::RunQueryDsl;
use nudge::store::tokens::ApiToken;
use nudge::store::{Db, StoreError};

backend_tests!(
    foreign_keys_are_enforced,
    batch_writers_round_trip,
    a_dispatch_key_is_written_once,
    a_claimed_enrollment_written_twice_in_one_transaction_keeps_the_last,
    the_link_secret_is_made_once_and_rotation_replaces_it
);

/// A link signed before a rotation is refused after it; a second `ensure` (another replica
/// starting) keeps the secret it finds.
async fn the_link_secret_is_made_once_and_rotation_replaces_it(backend: Backend) {
    use nudge::inbound::link::{self, LinkClaims, LinkError, LinkPurpose};
    use nudge::store::link_secret;
    let (url, _dir, _pg) = fresh_database(backend).await;
    Db::migrate(&url).await.unwrap();
    let db = Db::connect(&url).await.unwrap();
    assert!(
        link_secret::load(&db).await.is_err(),
        "no secret before the first start"
    );
    link_secret::ensure(&db, 1).await.unwrap();
    let first = link_secret::load(&db).await.unwrap();
    link_secret::ensure(&db, 2).await.unwrap();
    assert_eq!(link_secret::load(&db).await.unwrap(), first);
    assert_eq!(first.len(), 64, "32 random bytes, hex");

    let claims = LinkClaims {
        purpose: LinkPurpose::Approval,
        account: "default".into(),
        subject: "enr_1".into(),
        run: Some(1),
        expires_at_ms: None,
    };
    let token = link::sign(&first, &claims);
    let mut tx = db.begin().await.unwrap();
    let in_tx = tx.link_secret().await.unwrap();
    tx.commit().await.unwrap();
    assert_eq!(
        link::verify(&in_tx, &token, LinkPurpose::Approval, 0),
        Ok(claims)
    );

    link_secret::rotate(&db, 3).await.unwrap();
    let second = link_secret::load(&db).await.unwrap();
    assert_ne!(second, first);
    assert_eq!(
        link::verify(&second, &token, LinkPurpose::Approval, 0),
        Err(LinkError::Forged)
    );
}

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
    let Db::Sqlite(pool) = &db else {
        panic!("an SQLite database")
    };
    let mut pooled = pool.get().await.unwrap();
    let (mode, timeout, fks) = {
        let c = &mut *pooled;
        let mode: Mode = diesel::sql_query("PRAGMA journal_mode")
            .get_result(c)
            .await
            .unwrap();
        let timeout: Number = diesel::sql_query("SELECT timeout AS value FROM pragma_busy_timeout")
            .get_result(c)
            .await
            .unwrap();
        let fks: Number =
            diesel::sql_query("SELECT foreign_keys AS value FROM pragma_foreign_keys")
                .get_result(c)
                .await
                .unwrap();
        (mode.journal_mode, timeout.value, fks.value)
    };
    assert_eq!(mode, "wal");
    assert_eq!(timeout, 5_000);
    assert_eq!(fks, 1);
}

/// A fresh, migrated PostgreSQL database for the tests below that talk SQL to it directly;
/// dropped with the value.
struct ScratchPg {
    db: Db,
    _dir: tempfile::TempDir,
    _pg: Option<crate::common::PgDatabase>,
}

impl ScratchPg {
    async fn new() -> ScratchPg {
        let (url, dir, pg) = fresh_database(Backend::Postgres).await;
        Db::migrate(&url).await.unwrap();
        ScratchPg {
            db: Db::connect(&url).await.unwrap(),
            _dir: dir,
            _pg: pg,
        }
    }

    async fn connection(
        &self,
    ) -> diesel_async::pooled_connection::deadpool::Object<diesel_async::AsyncPgConnection> {
        let Db::Postgres(pool) = &self.db else {
            panic!("a PostgreSQL database")
        };
        pool.get().await.unwrap()
    }
}

/// PostgreSQL's reach query joins on (account, contact) pairs: a group holding signals for
/// `ann` in one account and `bob` in another must not lock or route `bob` of the first account
/// or `ann` of the second (a cross product of the two lists would).
async fn reach_matches_account_and_contact_pairs() {
    let pg = ScratchPg::new().await;
    let mut pooled = pg.connection().await;
    let c = &mut *pooled;
    diesel::sql_query(
        "INSERT INTO enrollments (id, account_id, flow_id, flow_version, contact_id, sender_id, \
         status, state, created_at, updated_at) VALUES \
         ('e1', 'a1', 'f', 1, 'ann', 's', 'active', '{}', 1, 1), \
         ('e2', 'a2', 'f', 1, 'ann', 's', 'active', '{}', 2, 2), \
         ('e3', 'a1', 'f', 1, 'bob', 's', 'paused', '{}', 3, 3), \
         ('e4', 'a2', 'f', 1, 'bob', 's', 'paused', '{}', 4, 4), \
         ('e5', 'a1', 'f', 1, 'ann', 's', 'completed', '{}', 5, 5), \
         ('e6', 'a1', 'g', 1, 'ann', 's', 'completed', '{}', 6, 6)",
    )
    .execute(c)
    .await
    .unwrap();
    // Their keys, as the writer keeps them; e6's still says active, as a row read before a
    // concurrent commit would: the enrollment's own status decides.
    diesel::sql_query(
        "INSERT INTO enrollment_keys (id, account_id, contact_id, flow_id, status, client_key, \
         allow_duplicate) SELECT id, account_id, contact_id, flow_id, \
         CASE id WHEN 'e6' THEN 'active' ELSE status END, client_key, allow_duplicate \
         FROM enrollments",
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

/// The arrays the batch writers bind (`store::pg_array`, encoded without diesel) reach the
/// server as the values they hold: every element type, NULLs, empty and non-ASCII text, the
/// extremes of each integer, and an empty array.
async fn bound_arrays_round_trip() {
    use diesel::sql_types::{Array, Bool, Integer, Nullable};
    use nudge::store::pg_array::Arr;
    let pg = ScratchPg::new().await;
    let mut pooled = pg.connection().await;
    let c = &mut *pooled;
    #[derive(QueryableByName, Debug, PartialEq)]
    struct Back {
        #[diesel(sql_type = Array<Text>)]
        texts: Vec<String>,
        #[diesel(sql_type = Array<Nullable<Text>>)]
        maybe_texts: Vec<Option<String>>,
        #[diesel(sql_type = Array<BigInt>)]
        ints: Vec<i64>,
        #[diesel(sql_type = Array<Nullable<BigInt>>)]
        maybe_ints: Vec<Option<i64>>,
        #[diesel(sql_type = Array<Integer>)]
        int4s: Vec<i32>,
        #[diesel(sql_type = Array<Bool>)]
        bools: Vec<bool>,
        #[diesel(sql_type = Array<Text>)]
        empty: Vec<String>,
    }
    let texts = vec!["", "a", "é \"q\" \\ \t 𝄞", "en_0123456789abcdef"];
    let maybe_texts = vec![Some("x"), None, Some("")];
    let ints = vec![0i64, -1, i64::MIN, i64::MAX, 1_796_196_858_714];
    let maybe_ints = vec![None, Some(7i64), None];
    let int4s = vec![0i32, i32::MIN, i32::MAX];
    let bools = vec![true, false, true];
    let back: Back = diesel::sql_query(
        "SELECT $1::text[] AS texts, $2::text[] AS maybe_texts, $3::int8[] AS ints, \
         $4::int8[] AS maybe_ints, $5::int4[] AS int4s, $6::bool[] AS bools, \
         $7::text[] AS empty",
    )
    .bind::<Array<Text>, _>(Arr(texts.clone()))
    .bind::<Array<Nullable<Text>>, _>(Arr(maybe_texts.clone()))
    .bind::<Array<BigInt>, _>(Arr(ints.clone()))
    .bind::<Array<Nullable<BigInt>>, _>(Arr(maybe_ints.clone()))
    .bind::<Array<Integer>, _>(Arr(int4s.clone()))
    .bind::<Array<Bool>, _>(Arr(bools.clone()))
    .bind::<Array<Text>, _>(Arr(Vec::<String>::new()))
    .get_result(c)
    .await
    .unwrap();
    assert_eq!(
        back,
        Back {
            texts: texts.iter().map(|t| t.to_string()).collect(),
            maybe_texts: maybe_texts.iter().map(|t| t.map(str::to_string)).collect(),
            ints,
            maybe_ints,
            int4s,
            bools,
            empty: vec![],
        }
    );
}

/// A line of `EXPLAIN`'s output.
#[derive(QueryableByName)]
struct PlanLine {
    #[diesel(sql_type = Text, column_name = "QUERY PLAN")]
    line: String,
}

/// `EXPLAIN`'s lines as one text, a line each.
fn plan_text(lines: Vec<PlanLine>) -> String {
    lines.iter().map(|l| format!("{}\n", l.line)).collect()
}

/// A status change reaches an enrollment's keys row with one probe of the flow index (every
/// one of its columns: account, flow, the status the row had, id), even where the contact and
/// the flow match thousands of rows: one contact enrolled 20,000 times in one flow
/// (allow_duplicate), on a table without statistics. Found through the contact alone,
/// PostgreSQL walked every enrollment of the contact for each changed row (4–6 s a batch).
async fn a_status_change_finds_its_keys_row_by_id() {
    let pg = ScratchPg::new().await;
    let mut pooled = pg.connection().await;
    let c = &mut *pooled;
    diesel::sql_query(
        "INSERT INTO enrollment_keys (id, account_id, contact_id, flow_id, status, client_key, \
         allow_duplicate) \
         SELECT 'en_' || lpad(i::text, 6, '0'), 'a1', 'ann', 'f1', 'active', NULL, TRUE \
         FROM generate_series(1, 20000) i",
    )
    .execute(c)
    .await
    .unwrap();
    let ids: Vec<String> = (19990..=20000).map(|i| format!("en_{i:06}")).collect();
    let statuses = vec!["completed".to_string(); ids.len()];
    let accounts = vec!["a1".to_string(); ids.len()];
    let flows = vec!["f1".to_string(); ids.len()];
    let was = vec!["active".to_string(); ids.len()];
    let bound = |q: diesel::query_builder::SqlQuery| {
        q.bind::<diesel::sql_types::Array<Text>, _>(ids.clone())
            .bind::<diesel::sql_types::Array<Text>, _>(statuses.clone())
            .bind::<diesel::sql_types::Array<Text>, _>(accounts.clone())
            .bind::<diesel::sql_types::Array<Text>, _>(flows.clone())
            .bind::<diesel::sql_types::Array<Text>, _>(was.clone())
    };
    let plan = plan_text(
        bound(diesel::sql_query(format!(
            "EXPLAIN (COSTS OFF) {}",
            nudge::store::pg_batch::KEYS_STATUS_UPDATE
        )))
        .load(c)
        .await
        .unwrap(),
    );
    assert!(
        plan.contains("using enrollment_keys_flow")
            && plan.contains("(id = ")
            && !plan.contains("Seq Scan"),
        "the keys row is found by every column of the flow index:\n{plan}"
    );
    let updated = bound(diesel::sql_query(
        nudge::store::pg_batch::KEYS_STATUS_UPDATE,
    ))
    .execute(c)
    .await
    .unwrap();
    assert_eq!(updated, ids.len());
    #[derive(QueryableByName)]
    struct Count {
        #[diesel(sql_type = BigInt)]
        n: i64,
    }
    let done: Count =
        diesel::sql_query("SELECT count(*) AS n FROM enrollment_keys WHERE status = 'completed'")
            .get_result(c)
            .await
            .unwrap();
    assert_eq!(done.n, ids.len() as i64, "only the named rows changed");
}

/// The plans a signal group keeps for its connection ([`Db::begin_planned`]) find
/// contacts by number through the phone index, and live enrollments and their keys rows
/// through the keys indexes, on tables whose statistics say nothing of what they hold (never
/// analyzed, or analyzed while empty: a new deployment that has just imported its contacts). A
/// kept plan made from such statistics stays until the next `ANALYZE`, and one that scanned a
/// table would scan it for every group.
///
/// [`Db::begin_planned`]: nudge::store::Db::begin_planned
async fn a_kept_plan_finds_rows_by_their_index_on_a_young_table() {
    for analyzed_empty in [false, true] {
        kept_plans_use_the_indexes(analyzed_empty).await;
    }
}

async fn kept_plans_use_the_indexes(analyzed_empty: bool) {
    use diesel_async::SimpleAsyncConnection;
    use nudge::store::pg_batch::{CONTACTS_BY_PHONE, KEYS_STATUS_UPDATE, REACHED_ENROLLMENTS};
    let pg = ScratchPg::new().await;
    let mut pooled = pg.connection().await;
    let c = &mut *pooled;
    // 20,000 contacts, each with an active enrollment and its keys row.
    c.batch_execute(&format!(
        "INSERT INTO accounts (id, name, webhook_secret, created_at) VALUES ('a1', 'A', 's', 0); \
         {} \
         INSERT INTO contacts (id, account_id, email, phone, created_at, updated_at) \
         SELECT 'c' || i, 'a1', 'c' || i || '@example.com', '+1555' || lpad(i::text, 7, '0'), \
         i, i FROM generate_series(1, 20000) i; \
         INSERT INTO enrollments (id, account_id, flow_id, flow_version, contact_id, sender_id, \
         status, state, created_at, updated_at) \
         SELECT 'en_' || lpad(i::text, 6, '0'), 'a1', 'f1', 1, 'c' || i, 's', 'active', '', \
         i, i FROM generate_series(1, 20000) i; \
         INSERT INTO enrollment_keys (id, account_id, contact_id, flow_id, status, client_key, \
         allow_duplicate) SELECT id, account_id, contact_id, flow_id, status, NULL, FALSE \
         FROM enrollments",
        if analyzed_empty { "ANALYZE;" } else { "" }
    ))
    .await
    .unwrap();
    // The plan of `sql` that a transaction set up as a signal group's keeps: `EXPLAIN EXECUTE`
    // of a prepared statement shows the kept (generic) plan under `force_generic_plan`.
    async fn kept_plan(
        c: &mut diesel_async::AsyncPgConnection,
        sql: &str,
        types: &str,
        args: &str,
    ) -> String {
        c.batch_execute(&format!(
            "{}; PREPARE kept({types}) AS {sql}",
            nudge::store::BEGIN_PLANNED
        ))
        .await
        .unwrap();
        let plan = plan_text(
            diesel::sql_query(format!("EXPLAIN (COSTS OFF, VERBOSE) EXECUTE kept({args})"))
                .load(c)
                .await
                .unwrap(),
        );
        c.batch_execute("ROLLBACK; DEALLOCATE kept").await.unwrap();
        plan
    }
    // Each statement, its parameters' types and values, and the index scans its plan must
    // hold; `unnest($1` shows the plan is the kept one, made without the values.
    let cases: [(&str, &str, &str, &[&str], &str); 3] = [
        (
            CONTACTS_BY_PHONE,
            "text[], text[]",
            "'{a1}', '{+15550000042}'",
            &["using contacts_phone"],
            "contacts are found by number through the phone index",
        ),
        (
            REACHED_ENROLLMENTS,
            "text[], text[]",
            "'{a1}', '{c42}'",
            &["using enrollment_keys_contact", "using enrollments_pkey"],
            "live enrollments are found by contact, then by id",
        ),
        (
            KEYS_STATUS_UPDATE,
            "text[], text[], text[], text[], text[]",
            "'{en_000042}', '{completed}', '{a1}', '{f1}', '{active}'",
            &["using enrollment_keys_flow", "k.id = (u.id)"],
            "a keys row is found by every column of the flow index",
        ),
    ];
    for (sql, types, args, holds, what) in cases {
        let plan = kept_plan(c, sql, types, args).await;
        let scans: Vec<&str> = ["Seq Scan", "Bitmap", "Hash", "Merge"]
            .into_iter()
            .filter(|s| plan.contains(s))
            .collect();
        assert!(
            plan.contains("unnest($1")
                && holds.iter().all(|h| plan.contains(h))
                && scans.is_empty(),
            "{what} (analyzed while empty: {analyzed_empty}):\n{plan}"
        );
    }
}

/// Every column that holds an identifier (an `id`, a `…_id`, a key, a status) compares its
/// bytes (collation "C"): a join of two id columns in different collations cannot use the
/// index of either, and an index in the database's locale pays strcoll for every comparison.
/// Text people read (names, emails, zones, bodies) keeps the database's collation.
async fn identifiers_compare_bytewise() {
    #[derive(QueryableByName, Debug)]
    struct Column {
        #[diesel(sql_type = Text)]
        table_name: String,
        #[diesel(sql_type = Text)]
        column_name: String,
        #[diesel(sql_type = diesel::sql_types::Nullable<Text>)]
        collation_name: Option<String>,
    }
    let pg = ScratchPg::new().await;
    let mut pooled = pg.connection().await;
    let columns: Vec<Column> = diesel::sql_query(
        "SELECT c.table_name::text AS table_name, c.column_name::text AS column_name, \
         c.collation_name::text AS collation_name \
         FROM information_schema.columns c \
         JOIN information_schema.tables t USING (table_schema, table_name) \
         WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE' \
         AND c.data_type = 'text' ORDER BY 1, 2",
    )
    .load(&mut *pooled)
    .await
    .unwrap();
    let identifier = |name: &str| {
        name == "id"
            || name.ends_with("_id")
            || [
                "status",
                "client_key",
                "key",
                "idempotency_key",
                "signature",
            ]
            .contains(&name)
    };
    let checked: Vec<&Column> = columns
        .iter()
        .filter(|c| identifier(&c.column_name) && !c.table_name.starts_with("__"))
        .collect();
    assert!(checked.len() > 50, "{checked:?}");
    let locale: Vec<String> = checked
        .iter()
        .filter(|c| c.collation_name.as_deref() != Some("C"))
        .map(|c| format!("{}.{}", c.table_name, c.column_name))
        .collect();
    assert!(
        locale.is_empty(),
        "identifiers in the database's collation: {locale:?}"
    );
    let email = columns
        .iter()
        .find(|c| c.table_name == "contacts" && c.column_name == "email")
        .expect("contacts.email");
    assert_eq!(
        email.collation_name, None,
        "an email keeps the database's collation"
    );
}

mod pg {
    mod postgres {
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        #[ignore = "needs PostgreSQL: set NUDGE_TEST_DATABASE_URL and run with --ignored (bash .ci/run does)"]
        async fn identifiers_compare_bytewise() {
            super::super::identifiers_compare_bytewise().await
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        #[ignore = "needs PostgreSQL: set NUDGE_TEST_DATABASE_URL and run with --ignored (bash .ci/run does)"]
        async fn a_kept_plan_finds_rows_by_their_index_on_a_young_table() {
            super::super::a_kept_plan_finds_rows_by_their_index_on_a_young_table().await
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        #[ignore = "needs PostgreSQL: set NUDGE_TEST_DATABASE_URL and run with --ignored (bash .ci/run does)"]
        async fn a_status_change_finds_its_keys_row_by_id() {
            super::super::a_status_change_finds_its_keys_row_by_id().await
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        #[ignore = "needs PostgreSQL: set NUDGE_TEST_DATABASE_URL and run with --ignored (bash .ci/run does)"]
        async fn reach_matches_account_and_contact_pairs() {
            super::super::reach_matches_account_and_contact_pairs().await
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        #[ignore = "needs PostgreSQL: set NUDGE_TEST_DATABASE_URL and run with --ignored (bash .ci/run does)"]
        async fn bound_arrays_round_trip() {
            super::super::bound_arrays_round_trip().await
        }
    }
}

/// A flow to hang enrollments on.
const ROUND_TRIP_FLOW: &str = r#"{
  "name": "round-trip",
  "start": "w",
  "steps": {
    "w": { "type": "wait", "params": { "duration": "1s" }, "next": { "then": "done" } },
    "done": { "type": "end" }
  }
}"#;

/// A migrated database of one backend with the default account, the round-trip flow and the
/// contact `c1`: what rows written straight through `Tx` refer to.
struct Scratch {
    db: Db,
    flow: nudge::service::flows::Flow,
    _dir: tempfile::TempDir,
    _pg: Option<crate::common::PgDatabase>,
}

impl Scratch {
    /// An active enrollment `id` of the flow's contact `c1`, not due.
    fn enrollment(&self, id: &str) -> nudge::store::EnrollmentRow {
        nudge::store::EnrollmentRow {
            id: id.into(),
            account_id: "default".into(),
            flow_id: self.flow.id.clone(),
            flow_version: 1,
            contact_id: "c1".into(),
            sender_id: "default".into(),
            status: "active".into(),
            client_key: None,
            state: b"{}".to_vec(),
            next_run_at: None,
            journey_seq: 0,
            journey_xid: 0,
            created_at: 1,
            updated_at: 1,
            allow_duplicate: false,
        }
    }

    async fn new(backend: Backend) -> Scratch {
        let (url, _dir, _pg) = fresh_database(backend).await;
        Db::migrate(&url).await.unwrap();
        let db = Db::connect(&url).await.unwrap();
        let now = chrono::DateTime::from_timestamp_millis(1_790_000_000_000).unwrap();
        nudge::store::accounts::ensure_default(&db, 1)
            .await
            .unwrap();
        let core = nudge::runtime::Core::new(
            db.clone(),
            std::sync::Arc::new(nudge::clock::ManualClock::new(now)),
        );
        let (flow, _) = nudge::service::flows::create(&core, "default", ROUND_TRIP_FLOW, now)
            .await
            .unwrap();
        nudge::service::contacts::upsert(
            &core,
            "default",
            nudge::service::contacts::ContactInput {
                id: "c1".into(),
                tz: "UTC".into(),
                ..Default::default()
            },
            now,
        )
        .await
        .unwrap();
        Scratch {
            db,
            flow,
            _dir,
            _pg,
        }
    }
}

/// Runs `$body` with `$c` bound to a pooled connection of `$db`, whichever backend it is.
macro_rules! on_db {
    ($db:expr, $c:ident => $body:expr) => {
        match $db {
            Db::Postgres(pool) => {
                let mut pooled = pool.get().await.unwrap();
                let $c = &mut *pooled;
                $body
            }
            Db::Sqlite(pool) => {
                let mut pooled = pool.get().await.unwrap();
                let $c = &mut *pooled;
                $body
            }
        }
    };
}

/// Every row kind the batch writers store, with a different value in every column, written
/// with `Tx` and read back through the diesel schema: a column list out of step with
/// `schema.rs` (a missing, extra or swapped column) reads back a different row.
async fn batch_writers_round_trip(backend: Backend) {
    use diesel::{QueryDsl, SelectableHelper};
    use nudge::store::enrollments::{DispatchRow, TaskClosure, TaskRow};
    use nudge::store::schema::{
        dispatches, enrollment_keys, enrollments, signal_deliveries, signals, tasks,
    };
    use nudge::store::signals::{DeliveryRow, SignalRow};
    use nudge::store::{EnrollmentRow, JourneyRow, JourneyStep, TaskStatus, Writes};

    let scratch = Scratch::new(backend).await;
    let (db, flow) = (scratch.db.clone(), &scratch.flow);

    let enrollment = EnrollmentRow {
        id: "en_1".into(),
        account_id: "default".into(),
        flow_id: flow.id.clone(),
        flow_version: 1,
        contact_id: "c1".into(),
        sender_id: "default".into(),
        status: "paused".into(),
        client_key: Some("ck-1".into()),
        state: br#"{"s":1}"#.to_vec(),
        next_run_at: Some(11),
        journey_seq: 12,
        journey_xid: 0,
        created_at: 13,
        updated_at: 14,
        allow_duplicate: true,
    };
    let entry = JourneyRow {
        enrollment_id: "en_1".into(),
        seq: 21,
        at: 22,
        kind: "kind_x".into(),
        detail: r#"{"d":24}"#.into(),
    };
    let mut step = JourneyStep::new("en_1", "default", 21, 22);
    step.push("kind_x", r#"{"d":24}"#);
    let dispatch = DispatchRow {
        id: "dp_1".into(),
        account_id: "default".into(),
        enrollment_id: "en_1".into(),
        run: 31,
        step: "step-32".into(),
        idempotency_key: "key-33".into(),
        channel: "email".into(),
        recipient: "r-35@example.com".into(),
        template: "tpl-36".into(),
        input: r#"{"i":37}"#.into(),
        channel_params: Some(r#"{"p":38}"#.into()),
        message_id: Some("<m-39@nudge>".into()),
        status: "pending".into(),
        lease_owner: Some("lease-41".into()),
        lease_until: Some(42),
        attempts: 43,
        provider_message_id: Some("prov-44".into()),
        failure: Some("fail-45".into()),
        created_at: 46,
        due_at: 47,
        hold_code: Some("CODE-48".into()),
        variant: None,
    };
    let task = TaskRow {
        id: "tk_1".into(),
        account_id: "default".into(),
        enrollment_id: "en_1".into(),
        run: 51,
        kind: "call".into(),
        step: "step-53".into(),
        status: "open".into(),
        outcome: None,
        params: r#"{"p":55}"#.into(),
        due_by: Some(56),
        created_at: 57,
        completed_at: None,
    };
    let signal = SignalRow {
        id: "sg_1".into(),
        account_id: "default".into(),
        contact_id: "c1".into(),
        source: "api".into(),
        provider_id: Some("prov-65".into()),
        raises: r#"["reply"]"#.into(),
        payload: r#"{"p":67}"#.into(),
        created_at: 68,
        kind: "reply".into(),
        channel: Some("sms".into()),
        contact_ids: r#"["c1"]"#.into(),
        routed_at: Some(72),
    };
    let delivery = DeliveryRow {
        signal_id: "sg_1".into(),
        enrollment_id: "en_1".into(),
        effect: "woke".into(),
        branch: Some("branch-83".into()),
        at: 84,
    };

    let first = Writes {
        enrollments: vec![enrollment.clone()],
        created: ["en_1".to_string()].into_iter().collect(),
        journey: vec![step],
        dispatches: vec![dispatch.clone()],
        tasks: vec![task.clone()],
        ..Default::default()
    };
    let mut tx = db.begin().await.unwrap();
    tx.write_all(&first).await.unwrap();
    assert_eq!(
        tx.insert_signals(std::slice::from_ref(&signal))
            .await
            .unwrap(),
        vec!["sg_1".to_string()]
    );
    tx.insert_deliveries(std::slice::from_ref(&delivery))
        .await
        .unwrap();
    tx.commit().await.unwrap();

    let j = nudge::store::enrollments::journey(&db, "en_1", 0, 10)
        .await
        .unwrap();
    let (e, d, t, s, dl) = on_db!(&db, c => {
        let e: EnrollmentRow = enrollments::table.select(EnrollmentRow::as_select()).first(c).await.unwrap();
        let d: DispatchRow = dispatches::table.select(DispatchRow::as_select()).first(c).await.unwrap();
        let t: TaskRow = tasks::table.select(TaskRow::as_select()).first(c).await.unwrap();
        let s: SignalRow = signals::table.select(SignalRow::as_select()).first(c).await.unwrap();
        let dl: DeliveryRow = signal_deliveries::table.select(DeliveryRow::as_select()).first(c).await.unwrap();
        (e, d, t, s, dl)
    });
    // PostgreSQL keeps the Watch key of the row's last journey entry (its writer's transaction
    // id); SQLite needs none.
    match &db {
        Db::Postgres(_) => assert!(e.journey_xid > 0, "{e:?}"),
        Db::Sqlite(_) => assert_eq!(e.journey_xid, 0),
    }
    assert_eq!(
        EnrollmentRow {
            journey_xid: enrollment.journey_xid,
            ..e
        },
        enrollment
    );
    // What enrollments are found by (a table beside them on PostgreSQL, a view on SQLite).
    let keys = |db: &Db| {
        let db = db.clone();
        async move {
            on_db!(&db, c => enrollment_keys::table
                .select((
                    enrollment_keys::id,
                    enrollment_keys::account_id,
                    enrollment_keys::contact_id,
                    enrollment_keys::flow_id,
                    enrollment_keys::status,
                    enrollment_keys::client_key,
                    enrollment_keys::allow_duplicate,
                ))
                .load::<(String, String, String, String, String, Option<String>, bool)>(c)
                .await
                .unwrap())
        }
    };
    assert_eq!(
        keys(&db).await,
        vec![(
            "en_1".to_string(),
            "default".to_string(),
            "c1".to_string(),
            flow.id.clone(),
            "paused".to_string(),
            Some("ck-1".to_string()),
            true
        )]
    );
    assert_eq!(j, vec![entry]);
    assert_eq!(d, dispatch);
    assert_eq!(t, task);
    assert_eq!(s, signal);
    assert_eq!(dl, delivery);

    // The update path: the upsert sets exactly the engine's columns, and a closed task its
    // status, outcome and time.
    let updated = EnrollmentRow {
        status: "active".into(),
        state: br#"{"s":2}"#.to_vec(),
        next_run_at: Some(91),
        journey_seq: 92,
        journey_xid: 0,
        updated_at: 93,
        // Not updated by the upsert: the stored ones stay.
        client_key: Some("ignored".into()),
        created_at: 999,
        ..enrollment.clone()
    };
    let second = Writes {
        enrollments: vec![updated.clone()],
        // Its step found it paused: the keys follow the new status.
        status_before: [("en_1".to_string(), nudge::engine::Status::Paused)]
            .into_iter()
            .collect(),
        closed_tasks: vec![TaskClosure {
            enrollment_id: "en_1".into(),
            run: 51,
            status: TaskStatus::Completed,
            outcome: Some("connected".into()),
            at: 94,
        }],
        ..Default::default()
    };
    let mut tx = db.begin().await.unwrap();
    tx.write_all(&second).await.unwrap();
    tx.commit().await.unwrap();
    let (e, t) = on_db!(&db, c => {
        let e: EnrollmentRow = enrollments::table.select(EnrollmentRow::as_select()).first(c).await.unwrap();
        let t: TaskRow = tasks::table.select(TaskRow::as_select()).first(c).await.unwrap();
        (e, t)
    });
    assert_eq!(
        e,
        EnrollmentRow {
            client_key: enrollment.client_key.clone(),
            created_at: enrollment.created_at,
            // Kept by the store (PostgreSQL's Watch key), not by the writer.
            journey_xid: e.journey_xid,
            ..updated.clone()
        }
    );
    assert_eq!(
        t,
        TaskRow {
            status: "completed".into(),
            outcome: Some("connected".into()),
            completed_at: Some(94),
            ..task
        }
    );
    assert_eq!(keys(&db).await[0].4, "active");

    // An update of an enrollment that is not stored is an error, not a write of nothing: a new
    // enrollment must be written as created.
    let stray = Writes {
        enrollments: vec![EnrollmentRow {
            id: "en_missing".into(),
            ..updated.clone()
        }],
        ..Default::default()
    };
    let mut tx = db.begin().await.unwrap();
    let refused = tx.write_all(&stray).await;
    tx.rollback().await.unwrap();
    let message = refused.expect_err("a missing row is refused").to_string();
    assert!(
        message.contains("1 of 1 enrollment rows to update are not stored"),
        "{message}"
    );
}

/// A dispatch's key (`enrollment:run`) is written once: a second new dispatch with it is an
/// error, so the transition that made it is not stored either (the planner writes new
/// dispatches without `ON CONFLICT`, which silently kept the first), while a step held again
/// under `<key>:held` keeps the row of its first hold.
/// A claimed enrollment is updated where the claim found it (PostgreSQL's ctid), which its
/// first write moves: a second write in the same transaction finds it by id, with either
/// claim (sharded, as the planner's concurrent batches claim, or not).
async fn a_claimed_enrollment_written_twice_in_one_transaction_keeps_the_last(backend: Backend) {
    use diesel::{ExpressionMethods, QueryDsl};
    use nudge::store::schema::enrollments;
    use nudge::store::{EnrollmentRow, Writes};

    let scratch = Scratch::new(backend).await;
    let db = &scratch.db;
    let row = |id: &str| EnrollmentRow {
        next_run_at: Some(5),
        allow_duplicate: true,
        ..scratch.enrollment(id)
    };
    let mut tx = db.begin().await.unwrap();
    tx.write_all(&Writes {
        enrollments: vec![row("en_1"), row("en_2")],
        created: ["en_1".to_string(), "en_2".to_string()]
            .into_iter()
            .collect(),
        ..Default::default()
    })
    .await
    .unwrap();
    tx.commit().await.unwrap();

    for (id, shard) in [("en_1", Some((0, 1))), ("en_2", None)] {
        let mut tx = db.begin().await.unwrap();
        let claimed = tx.claim_due(10, 1, shard, None).await.unwrap();
        assert_eq!(claimed.len(), 1);
        assert_eq!(claimed[0].id, id);
        for (updated_at, next) in [(2, Some(20)), (3, None)] {
            let mut stepped = claimed[0].clone();
            stepped.updated_at = updated_at;
            stepped.next_run_at = next;
            stepped.state = format!(r#"{{"write":{updated_at}}}"#).into_bytes();
            tx.write_all(&Writes {
                enrollments: vec![stepped],
                ..Default::default()
            })
            .await
            .unwrap_or_else(|e| panic!("{id}, write {updated_at}: {e}"));
        }
        tx.commit().await.unwrap();
        let (updated_at, next, state): (i64, Option<i64>, Vec<u8>) =
            on_db!(db, c => enrollments::table
            .filter(enrollments::id.eq(id))
            .select((enrollments::updated_at, enrollments::next_run_at, enrollments::state))
            .first(c)
            .await)
            .unwrap();
        assert_eq!((updated_at, next), (3, None), "{id}");
        assert_eq!(state, br#"{"write":3}"#, "{id}");
    }
}

async fn a_dispatch_key_is_written_once(backend: Backend) {
    use diesel::QueryDsl;
    use nudge::store::enrollments::DispatchRow;
    use nudge::store::schema::dispatches;
    use nudge::store::Writes;

    let scratch = Scratch::new(backend).await;
    let db = &scratch.db;
    let dispatch = |id: &str, key: &str, status: &str| DispatchRow {
        id: id.into(),
        account_id: "default".into(),
        enrollment_id: "en_1".into(),
        run: 1,
        step: "send".into(),
        idempotency_key: key.into(),
        channel: "email".into(),
        recipient: "ada@example.com".into(),
        template: "welcome".into(),
        input: "{}".into(),
        channel_params: None,
        message_id: None,
        status: status.to_string().into(),
        lease_owner: None,
        lease_until: None,
        attempts: 0,
        provider_message_id: None,
        failure: None,
        created_at: 1,
        due_at: 1,
        hold_code: (status == "held").then(|| "ZONE_UNKNOWN".into()),
        variant: None,
    };
    let write = |w: Writes| async move {
        let mut tx = db.begin().await.unwrap();
        let written = tx.write_all(&w).await;
        match &written {
            Ok(()) => tx.commit().await.unwrap(),
            Err(_) => tx.rollback().await.unwrap(),
        }
        written
    };
    write(Writes {
        enrollments: vec![scratch.enrollment("en_1")],
        created: ["en_1".to_string()].into_iter().collect(),
        dispatches: vec![
            dispatch("dp_1", "en_1:1", "pending"),
            dispatch("dp_2", "en_1:2:held", "held"),
        ],
        ..Default::default()
    })
    .await
    .unwrap();

    // Held again: the first hold's row stays, and the write goes through.
    write(Writes {
        dispatches: vec![dispatch("dp_3", "en_1:2:held", "held")],
        ..Default::default()
    })
    .await
    .unwrap();
    // Made again: refused, nothing of that write stored.
    let refused = write(Writes {
        dispatches: vec![
            dispatch("dp_4", "en_1:3", "pending"),
            dispatch("dp_5", "en_1:1", "pending"),
        ],
        ..Default::default()
    })
    .await
    .expect_err("a second dispatch with a stored key is refused")
    .to_string();
    assert!(refused.contains("idempotency_key"), "{refused}");

    let stored: Vec<(String, String)> = on_db!(db, c => dispatches::table
        .select((dispatches::id, dispatches::idempotency_key))
        .order(dispatches::id)
        .load(c)
        .await
        .unwrap());
    assert_eq!(
        stored,
        vec![
            ("dp_1".to_string(), "en_1:1".to_string()),
            ("dp_2".to_string(), "en_1:2:held".to_string()),
        ]
    );
}
