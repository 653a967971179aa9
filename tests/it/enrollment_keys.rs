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
    a_store_written_before_first_steps_moved_to_the_keys_reads_back_the_same,
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

/// The migration that keeps a new enrollment's first journey step on its keys row (on
/// SQLite, where every step stays in `journey_steps`, it changes nothing), and its undoing.
const FIRST_JOURNEY_STEP: (&str, &str) = (
    "20261218100000",
    include_str!("../../migrations/postgres/2026-12-18-100000_first_journey_step/down.sql"),
);

/// PostgreSQL: how many first journey steps are on keys rows, and how many in `journey_steps`.
async fn first_steps(db: &Db) -> Option<(i64, i64)> {
    #[derive(diesel::QueryableByName)]
    struct N {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        n: i64,
    }
    let Db::Postgres(pool) = db else { return None };
    let c = &mut *pool.get().await.unwrap();
    // Before the migration the columns are not there: none on keys rows.
    let on_keys: N = diesel::sql_query(
        "SELECT (xpath('/row/n/text()', query_to_xml(CASE WHEN EXISTS (SELECT 1 FROM \
         information_schema.columns WHERE table_name = 'enrollment_keys' AND column_name = \
         'first_xid') THEN 'SELECT COUNT(*) AS n FROM enrollment_keys WHERE first_xid IS NOT \
         NULL' ELSE 'SELECT 0 AS n' END, false, true, '')))[1]::text::int8 AS n",
    )
    .get_result(c)
    .await
    .unwrap();
    let own_rows: N = diesel::sql_query("SELECT COUNT(*) AS n FROM journey_steps WHERE seq = 1")
        .get_result(c)
        .await
        .unwrap();
    Some((on_keys.n, own_rows.n))
}

/// Everything the journey is read by: each enrollment's `GetJourney` (whole, and from after
/// each entry), the contact's journey (whole and a page at a time) and Watch (whole, and
/// resumed after each entry).
async fn read_journeys(app: &TestApp, ids: &[String]) -> Vec<String> {
    use nudge::store::enrollments::{contact_journey, journey, ContactJourneyKey};
    use nudge::store::watch::{page, WatchKey};
    let db = &app.state.core.db;
    let account = nudge::store::accounts::DEFAULT_ACCOUNT_ID;
    let mut out = journeys(app, ids).await;
    for id in ids {
        let whole = journey(db, id, 0, 1_000).await.unwrap();
        for (i, row) in whole.iter().enumerate() {
            let rest = journey(db, id, row.seq, 1_000).await.unwrap();
            assert_eq!(rest, whole[i + 1..], "{id} after seq {}", row.seq);
        }
        assert_eq!(journey(db, id, 0, 1).await.unwrap(), whole[..1]);
    }
    let contact = contact_journey(db, account, "c", None, None, 1_000)
        .await
        .unwrap();
    let mut paged = Vec::new();
    let mut after: Option<ContactJourneyKey> = None;
    loop {
        let page = contact_journey(db, account, "c", None, after.as_ref(), 2)
            .await
            .unwrap();
        let Some(last) = page.last() else { break };
        after = Some(ContactJourneyKey {
            at: last.at,
            enrollment_id: last.enrollment_id.clone(),
            seq: last.seq,
        });
        paged.extend(page);
    }
    assert_eq!(paged, contact, "the contact's journey a page at a time");
    out.push(format!("{contact:?}"));
    // Watch holds back what lies above the oldest transaction still running (the planner's
    // may be): the Watch stream waits until every entry of the account's one contact is below
    // that horizon, and the horizon only rises.
    crate::watch::read(app, WatchRequest::default(), contact.len()).await;
    let watched = page(db, account, &WatchKey::start(), None, None, 1_000)
        .await
        .unwrap();
    assert_eq!(watched.len(), contact.len(), "Watch gives every entry");
    let flow = watched[0].flow_id.clone();
    for (i, row) in watched.iter().enumerate() {
        let rest = page(db, account, &row.key, None, None, 1_000)
            .await
            .unwrap();
        assert_eq!(rest, watched[i + 1..], "Watch after {:?}", row.key);
        let of_flow = page(db, account, &row.key, Some(&flow), Some("c"), 1)
            .await
            .unwrap();
        assert_eq!(of_flow, watched[i + 1..(i + 2).min(watched.len())]);
    }
    // A first step keeps its transaction id in either form: the keys are the same too.
    let entries: Vec<_> = watched
        .iter()
        .map(|w| (&w.key, w.at, &w.kind, &w.detail))
        .collect();
    out.push(format!("{entries:?}"));
    out
}

/// A new enrollment's first journey step is kept on its keys row (PostgreSQL): two rows an
/// enrollment, not three. A store written before (every first step its own `journey_steps`
/// row, as the migration's `down.sql` puts them back) reads back the same through GetJourney,
/// a contact's journey and Watch, from every place each resumes; and after it, first steps on
/// keys rows and in `journey_steps` read together, across a status change of the keys row.
async fn a_store_written_before_first_steps_moved_to_the_keys_reads_back_the_same(
    backend: Backend,
) {
    let app = spawn_app(backend).await;
    let db = &app.state.core.db;
    let [done, live, beside] = three_enrollments(&app).await;
    if let Some(steps) = first_steps(db).await {
        assert_eq!(steps, (3, 0), "on the keys rows, one completed since");
    }
    let ids = [done.clone(), live.clone(), beside.clone()];
    let before = read_journeys(&app, &ids).await;

    write_as_before(db, FIRST_JOURNEY_STEP).await;
    if let Some(steps) = first_steps(db).await {
        assert_eq!(steps, (0, 3), "each its own row, as before");
    }
    assert_eq!(Db::migrate(&app.database_url).await.unwrap(), 1);
    assert_eq!(
        read_journeys(&app, &ids).await,
        before,
        "read back the same"
    );

    // Both forms together: the live two complete (their keys rows change status), a new one
    // starts with its first step on its keys row.
    advance(&app, 3_600_000 + 1_000).await;
    let (again, created) = enroll(&app, "k4", false).await.unwrap();
    assert!(created);
    if let Some(steps) = first_steps(db).await {
        assert_eq!(steps, (1, 3));
    }
    let all = [done, live, beside, again];
    read_journeys(&app, &all).await;
    advance(&app, 3_600_000 + 1_000).await;
    let kinds: Vec<String> = nudge::store::enrollments::journey(db, &all[3], 0, 100)
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.kind)
        .collect();
    assert_eq!(
        kinds.first().map(String::as_str),
        Some("enrolled"),
        "{kinds:?}"
    );
    assert_eq!(
        kinds.last().map(String::as_str),
        Some("completed"),
        "{kinds:?}"
    );
    read_journeys(&app, &all).await;
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
