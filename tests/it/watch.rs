//! `EnrollmentService.Watch` (docs/operations.md): the account's journey in commit order, filters,
//! resuming from a cursor, the refusals, and two replicas of one PostgreSQL serving one order.

use crate::common::{fresh_database, spawn_app, spawn_app_on, with_token, Backend, TestApp};
use nudge::auth::Scope;
use nudge::proto::v1::enrollment_service_client::EnrollmentServiceClient;
use nudge::proto::v1::signal_service_client::SignalServiceClient;
use nudge::proto::v1::*;
use std::collections::HashMap;
use std::time::Duration;
use tonic::Code;

backend_tests!(
    a_cursor_handed_out_before_keys_resumes_where_it_was,
    watch_streams_in_commit_order_filters_and_resumes,
    a_slow_reader_holds_a_bounded_buffer,
    watch_refuses_bad_cursors_kinds_and_scoped_tokens,
);

const CONTACTS: [&str; 4] = ["w1", "w2", "w3", "w4"];

/// The SMS flow of `explain_api` and four more enrolled contacts.
async fn setup(app: &TestApp) {
    crate::explain_api::sms_flow(app).await;
    let mut e = EnrollmentServiceClient::new(app.channel().await);
    for c in CONTACTS {
        enroll(app, &mut e, c).await;
    }
}

async fn enroll(
    app: &TestApp,
    e: &mut EnrollmentServiceClient<tonic::transport::Channel>,
    c: &str,
) {
    app.contacts()
        .await
        .upsert_contact(app.authed(UpsertContactRequest {
            contact: Some(Contact {
                id: c.into(),
                phone: "+13035550100".into(),
                tz: "America/Denver".into(),
                ..Default::default()
            }),
        }))
        .await
        .unwrap();
    e.enroll(app.authed(EnrollRequest {
        contact_id: c.into(),
        flow_id: "explain-sms".into(),
        ..Default::default()
    }))
    .await
    .unwrap();
}

/// Opens a Watch and reads `n` entries (each within 20 s).
pub(crate) async fn read(app: &TestApp, req: WatchRequest, n: usize) -> Vec<WatchResponse> {
    let mut c = EnrollmentServiceClient::new(app.channel().await);
    let mut stream = c.watch(app.authed(req)).await.unwrap().into_inner();
    let mut out = Vec::new();
    while out.len() < n {
        let next = tokio::time::timeout(Duration::from_secs(20), stream.message())
            .await
            .unwrap_or_else(|_| panic!("Watch gave {} of {n} entries", out.len()))
            .unwrap()
            .expect("the stream stays open");
        out.push(next);
    }
    out
}

/// Every journey entry of the account, `(enrollment, seq)`, by GetJourney.
async fn journeys(app: &TestApp) -> HashMap<String, usize> {
    let mut c = EnrollmentServiceClient::new(app.channel().await);
    let list = c
        .list_enrollments(app.authed(ListEnrollmentsRequest {
            page: Some(PageRequest {
                page_size: 500,
                ..Default::default()
            }),
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner()
        .enrollments;
    let mut out = HashMap::new();
    for e in list {
        let j = c
            .get_journey(app.authed(GetJourneyRequest {
                enrollment_id: e.id.clone(),
                page: Some(PageRequest {
                    page_size: 500,
                    ..Default::default()
                }),
            }))
            .await
            .unwrap()
            .into_inner();
        out.insert(e.id, j.entries.len());
    }
    out
}

fn key(e: &WatchResponse) -> (String, i64) {
    (e.enrollment_id.clone(), e.entry.as_ref().unwrap().seq)
}

/// Each enrollment's entries come in seq order from 1, with none missing.
fn assert_each_in_order(entries: &[WatchResponse], expected: &HashMap<String, usize>) {
    let mut next: HashMap<&str, i64> = HashMap::new();
    for e in entries {
        let seq = next.entry(e.enrollment_id.as_str()).or_insert(1);
        assert_eq!(e.entry.as_ref().unwrap().seq, *seq, "{}", e.enrollment_id);
        *seq += 1;
    }
    for (id, n) in expected {
        assert_eq!(next.get(id.as_str()).copied(), Some(*n as i64 + 1), "{id}");
    }
}

async fn watch_streams_in_commit_order_filters_and_resumes(backend: Backend) {
    let app = spawn_app(backend).await;
    setup(&app).await;
    let expected = journeys(&app).await;
    let total: usize = expected.values().sum();
    let all = read(&app, WatchRequest::default(), total).await;
    assert_each_in_order(&all, &expected);
    assert!(all
        .iter()
        .all(|e| !e.flow_id.is_empty() && e.flow_version == 1));
    let mut cursors: Vec<&str> = all.iter().map(|e| e.cursor.as_str()).collect();
    cursors.dedup();
    assert_eq!(cursors.len(), total, "one cursor per entry");

    // Resuming from the 7th entry's cursor gives exactly what followed it.
    let rest = read(
        &app,
        WatchRequest {
            cursor: all[6].cursor.clone(),
            ..Default::default()
        },
        total - 7,
    )
    .await;
    assert_eq!(
        rest.iter().map(key).collect::<Vec<_>>(),
        all[7..].iter().map(key).collect::<Vec<_>>()
    );

    // Filters: one contact, one kind.
    let dee = all.iter().filter(|e| e.contact_id == "dee").count();
    let only_dee = read(
        &app,
        WatchRequest {
            contact_id: "dee".into(),
            ..Default::default()
        },
        dee,
    )
    .await;
    assert!(only_dee.iter().all(|e| e.contact_id == "dee"));
    let opened = all
        .iter()
        .filter(|e| e.entry.as_ref().unwrap().kind == "run_opened")
        .count();
    let by_kind = read(
        &app,
        WatchRequest {
            kinds: vec!["run_opened".into()],
            flow_id: "explain-sms".into(),
            ..Default::default()
        },
        opened,
    )
    .await;
    assert!(by_kind
        .iter()
        .all(|e| e.entry.as_ref().unwrap().kind == "run_opened"));

    // Later: a Watch from the last cursor gets what was committed after it (the reply's
    // entries, in order), and nothing before.
    let before = all.iter().filter(|e| e.contact_id == "dee").count();
    SignalServiceClient::new(app.channel().await)
        .report_signal(app.authed(ReportSignalRequest {
            contact: "dee".into(),
            kind: "reply".into(),
            channel: "sms".into(),
            ..Default::default()
        }))
        .await
        .unwrap();
    let after = journeys(&app).await;
    let dee_id = only_dee[0].enrollment_id.clone();
    let new = after[&dee_id] - before;
    assert!(new >= 3, "the reply wrote {new} entries");
    let live = read(
        &app,
        WatchRequest {
            cursor: all.last().unwrap().cursor.clone(),
            contact_id: "dee".into(),
            ..Default::default()
        },
        new,
    )
    .await;
    let kinds: Vec<String> = live
        .iter()
        .map(|e| e.entry.as_ref().unwrap().kind.clone())
        .collect();
    assert_eq!(
        kinds.first().map(String::as_str),
        Some("signal"),
        "{kinds:?}"
    );
    assert_eq!(
        kinds.last().map(String::as_str),
        Some("completed"),
        "{kinds:?}"
    );
    assert_eq!(
        live[0].entry.as_ref().unwrap().seq,
        before as i64 + 1,
        "it goes on right after the cursor"
    );
    app.stop().await;
}

/// A reader that does not read: the Watch fills its buffer ([`WATCH_BUFFER`] entries) and its
/// reader waits there; read later, every entry still comes, in order.
async fn a_slow_reader_holds_a_bounded_buffer(backend: Backend) {
    use nudge::service::enrollments::{watch, WatchFilter, WATCH_BUFFER};
    let app = spawn_app(backend).await;
    crate::explain_api::sms_flow(&app).await;
    let mut e = EnrollmentServiceClient::new(app.channel().await);
    for n in 0..40 {
        enroll(&app, &mut e, &format!("slow{n}")).await;
    }
    let expected = journeys(&app).await;
    let total: usize = expected.values().sum();
    assert!(
        total > 2 * WATCH_BUFFER,
        "{total} entries: more than the buffer holds"
    );
    let who = nudge::auth::Principal {
        account_id: nudge::store::accounts::DEFAULT_ACCOUNT_ID.into(),
        token_id: "test".into(),
        scope: Scope::Full,
    };
    let mut rx = watch(&app.state.core, &who, WatchFilter::default())
        .await
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while rx.len() < WATCH_BUFFER {
        assert!(
            std::time::Instant::now() < deadline,
            "the buffer never filled"
        );
        tokio::task::yield_now().await;
    }
    assert_eq!(rx.max_capacity(), WATCH_BUFFER);
    assert_eq!(
        rx.len(),
        WATCH_BUFFER,
        "held at the bound, not the {total} available"
    );
    let mut got = Vec::new();
    while got.len() < total {
        let item = tokio::time::timeout(Duration::from_secs(20), rx.recv())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        got.push((item.enrollment_id, item.entry.seq));
    }
    let mut next: HashMap<String, i64> = HashMap::new();
    for (id, seq) in &got {
        let want = next.entry(id.clone()).or_insert(1);
        assert_eq!(seq, want, "{id}");
        *want += 1;
    }
    app.stop().await;
}

async fn watch_refuses_bad_cursors_kinds_and_scoped_tokens(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut c = EnrollmentServiceClient::new(app.channel().await);
    let refuse = |req: WatchRequest| {
        let mut c = c.clone();
        let r = app.authed(req);
        async move { c.watch(r).await.map(|_| ()).unwrap_err() }
    };
    let garbage = refuse(WatchRequest {
        cursor: "not a cursor!".into(),
        ..Default::default()
    })
    .await;
    assert_eq!(garbage.code(), Code::InvalidArgument, "{garbage:?}");
    assert!(garbage.message().contains("cursor"), "{garbage:?}");
    let foreign = refuse(WatchRequest {
        cursor: nudge::service::enrollments::cursor(
            "another-account",
            &nudge::store::watch::WatchKey::start(),
        ),
        ..Default::default()
    })
    .await;
    assert_eq!(foreign.code(), Code::InvalidArgument, "{foreign:?}");
    assert!(foreign.message().contains("another account"), "{foreign:?}");
    let kind = refuse(WatchRequest {
        kinds: vec!["run_opened".into(), "nonsense".into()],
        ..Default::default()
    })
    .await;
    assert_eq!(kind.code(), Code::InvalidArgument, "{kind:?}");
    assert!(format!("{kind:?}").contains("kinds[1]"), "{kind:?}");
    let scoped = app.token(Scope::Enrollment("en_x".into())).await;
    let denied = c
        .watch(with_token(WatchRequest::default(), &scoped))
        .await
        .map(|_| ())
        .unwrap_err();
    assert_eq!(denied.code(), Code::PermissionDenied, "{denied:?}");
    app.stop().await;
}

/// Two replicas on one PostgreSQL, enrolling concurrently: both Watch streams give the same
/// entries in the same order, and a cursor from one resumes on the other.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "needs PostgreSQL: set NUDGE_TEST_DATABASE_URL and run with --ignored (bash .ci/run does)"]
async fn two_replicas_serve_one_order() {
    let (url, dir, pg) = fresh_database(Backend::Postgres).await;
    let a = spawn_app_on(url.clone(), dir, pg).await;
    let b = spawn_app_on(url, tempfile::tempdir().unwrap(), None).await;
    crate::explain_api::sms_flow(&a).await;
    // Forty enrollments, half through each replica, all at once.
    let mut joins = Vec::new();
    for (i, app) in [&a, &b].into_iter().enumerate() {
        let token = app.token.clone();
        let addr = app.addr;
        joins.push(tokio::spawn(async move {
            let ch = tonic::transport::Channel::from_shared(format!("http://{addr}"))
                .unwrap()
                .connect()
                .await
                .unwrap();
            let mut contacts =
                nudge::proto::v1::contact_service_client::ContactServiceClient::new(ch.clone());
            let mut e = EnrollmentServiceClient::new(ch);
            let mut calls = Vec::new();
            for n in 0..20 {
                let id = format!("r{i}-{n}");
                contacts
                    .upsert_contact(with_token(
                        UpsertContactRequest {
                            contact: Some(Contact {
                                id: id.clone(),
                                phone: "+13035550101".into(),
                                tz: "America/Denver".into(),
                                ..Default::default()
                            }),
                        },
                        &token,
                    ))
                    .await
                    .unwrap();
                let mut e = e.clone();
                let token = token.clone();
                calls.push(tokio::spawn(async move {
                    e.enroll(with_token(
                        EnrollRequest {
                            contact_id: id,
                            flow_id: "explain-sms".into(),
                            ..Default::default()
                        },
                        &token,
                    ))
                    .await
                    .unwrap();
                }));
            }
            for c in calls {
                c.await.unwrap();
            }
            let _ = &mut e;
        }));
    }
    for j in joins {
        j.await.unwrap();
    }
    let expected = journeys(&a).await;
    let total: usize = expected.values().sum();
    let from_a = read(&a, WatchRequest::default(), total).await;
    let from_b = read(&b, WatchRequest::default(), total).await;
    assert_each_in_order(&from_a, &expected);
    assert_eq!(
        from_a
            .iter()
            .map(|e| (key(e), e.cursor.clone()))
            .collect::<Vec<_>>(),
        from_b
            .iter()
            .map(|e| (key(e), e.cursor.clone()))
            .collect::<Vec<_>>(),
        "both replicas serve one order"
    );
    let half = total / 2;
    let resumed = read(
        &b,
        WatchRequest {
            cursor: from_a[half - 1].cursor.clone(),
            ..Default::default()
        },
        total - half,
    )
    .await;
    assert_eq!(
        resumed.iter().map(key).collect::<Vec<_>>(),
        from_a[half..].iter().map(key).collect::<Vec<_>>()
    );
    b.stop().await;
    a.stop().await;
}

/// PostgreSQL: the address of the app's database.
fn pg_url(app: &TestApp) -> String {
    let nudge::config::DatabaseUrl::Postgres(url) = app.database_url.clone() else {
        unreachable!("a PostgreSQL test")
    };
    url
}

/// The enrollment with the lowest id, and how many journey entries it has.
fn lowest(expected: &HashMap<String, usize>) -> (String, i64) {
    expected
        .iter()
        .map(|(id, n)| (id.clone(), *n as i64))
        .min()
        .unwrap()
}

/// A journey step of one entry (a pause) for enrollment `id` at `seq`.
fn paused(id: &str, seq: i64) -> nudge::store::JourneyStep {
    let mut s =
        nudge::store::JourneyStep::new(id, nudge::store::accounts::DEFAULT_ACCOUNT_ID, seq, 0);
    s.push("paused", r#"{"by":"test"}"#);
    s
}

/// A connection inside a transaction that has taken its transaction id already.
async fn holding_a_transaction_id(url: &str) -> diesel_async::AsyncPgConnection {
    use diesel_async::{AsyncConnection, SimpleAsyncConnection};
    let mut c = diesel_async::AsyncPgConnection::establish(url)
        .await
        .unwrap();
    c.batch_execute("BEGIN; SELECT pg_current_xact_id()")
        .await
        .unwrap();
    c
}

/// PostgreSQL: a writer that got its transaction id before another writer of the same
/// enrollment (as one does that waits for the enrollment's lock after its first write) still
/// has its entry come after the other's in Watch: an enrollment's keys never go down along its
/// seq. (Keyed by the transaction id alone, the later entry came first.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL: set NUDGE_TEST_DATABASE_URL and run with --ignored (bash .ci/run does)"]
async fn an_older_transaction_id_keeps_an_enrollments_order() {
    use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl, SimpleAsyncConnection};
    use nudge::store::pg_batch::journey_statement;
    let app = spawn_app(Backend::Postgres).await;
    setup(&app).await;
    let mut expected = journeys(&app).await;
    let (id, n) = lowest(&expected);
    let url = pg_url(&app);
    let step = |seq: i64| paused(&id, seq);
    // `early` takes its transaction id first; `late` writes the next entry and commits; then
    // `early` writes the one after.
    let mut early = holding_a_transaction_id(&url).await;
    let mut late = AsyncPgConnection::establish(&url).await.unwrap();
    late.batch_execute("BEGIN").await.unwrap();
    let next = [step(n + 1)];
    journey_statement(&next, &[None])
        .execute(&mut late)
        .await
        .unwrap();
    late.batch_execute("COMMIT").await.unwrap();
    let after = [step(n + 2)];
    journey_statement(&after, &[None])
        .execute(&mut early)
        .await
        .unwrap();
    early.batch_execute("COMMIT").await.unwrap();
    // The same again through the key the enrollment row carries, as nudge's writers pass it:
    // each keeps `journey_xid` as the planner's update does and reads it under the row's lock.
    #[derive(diesel::QueryableByName)]
    struct Key {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        journey_xid: i64,
    }
    let keep = format!(
        "UPDATE enrollments SET journey_xid = GREATEST(journey_xid, pg_current_xact_id()::text::int8) WHERE id = '{id}'"
    );
    let held = format!("SELECT journey_xid FROM enrollments WHERE id = '{id}' FOR UPDATE");
    early
        .batch_execute("BEGIN; SELECT pg_current_xact_id()")
        .await
        .unwrap();
    late.batch_execute("BEGIN").await.unwrap();
    let k: Key = diesel::sql_query(&held)
        .get_result(&mut late)
        .await
        .unwrap();
    let third = [step(n + 3)];
    journey_statement(&third, &[Some(k.journey_xid)])
        .execute(&mut late)
        .await
        .unwrap();
    late.batch_execute(&keep).await.unwrap();
    late.batch_execute("COMMIT").await.unwrap();
    let k: Key = diesel::sql_query(&held)
        .get_result(&mut early)
        .await
        .unwrap();
    let fourth = [step(n + 4)];
    journey_statement(&fourth, &[Some(k.journey_xid)])
        .execute(&mut early)
        .await
        .unwrap();
    early.batch_execute(&keep).await.unwrap();
    early.batch_execute("COMMIT").await.unwrap();
    *expected.get_mut(&id).unwrap() += 4;
    let total: usize = expected.values().sum();
    let entries = read(&app, WatchRequest::default(), total).await;
    assert_each_in_order(&entries, &expected);
    app.stop().await;
}

/// PostgreSQL: the same when the enrollment's only earlier step is its first, which is kept on
/// its keys row, not in `journey_steps`: a writer that passes no previous key (as a dispatch's
/// ack does) and got its transaction id before the enrollment was made still has its entry
/// come after the enrollment's first ones. (Looking only in `journey_steps`, it found no
/// earlier row and keyed the entry below them.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL: set NUDGE_TEST_DATABASE_URL and run with --ignored (bash .ci/run does)"]
async fn an_older_transaction_id_keeps_a_new_enrollments_order() {
    use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl, SimpleAsyncConnection};
    use nudge::store::pg_batch::journey_statement;
    let app = spawn_app(Backend::Postgres).await;
    let url = pg_url(&app);
    // `early` holds a transaction id older than every enrollment's.
    let mut early = holding_a_transaction_id(&url).await;
    setup(&app).await;
    let mut expected = journeys(&app).await;
    let (id, n) = lowest(&expected);
    #[derive(diesel::QueryableByName)]
    struct Rows {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        n: i64,
    }
    let mut look = AsyncPgConnection::establish(&url).await.unwrap();
    let own: Rows = diesel::sql_query(format!(
        "SELECT COUNT(*) AS n FROM journey_steps WHERE enrollment_id = '{id}'"
    ))
    .get_result(&mut look)
    .await
    .unwrap();
    assert_eq!(own.n, 0, "its one step so far is on its keys row");
    journey_statement(&[paused(&id, n + 1)], &[None])
        .execute(&mut early)
        .await
        .unwrap();
    early.batch_execute("COMMIT").await.unwrap();
    *expected.get_mut(&id).unwrap() += 1;
    let total: usize = expected.values().sum();
    let entries = read(&app, WatchRequest::default(), total).await;
    assert_each_in_order(&entries, &expected);
    app.stop().await;
}

/// PostgreSQL: an entry whose transaction commits after a later one's is not skipped. A reader
/// that read the later transaction's entry while the earlier was still open would have its
/// cursor past the earlier's key; Watch returns only what lies below the oldest running
/// transaction, so it holds the later entry back until the earlier commits, and a reader
/// resuming from its cursor gets both. (Without that horizon the earlier entry was lost.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL: set NUDGE_TEST_DATABASE_URL and run with --ignored (bash .ci/run does)"]
async fn an_entry_committed_late_is_not_skipped() {
    use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl, SimpleAsyncConnection};
    use nudge::store::pg_batch::journey_statement;
    let app = spawn_app(Backend::Postgres).await;
    setup(&app).await;
    let mut expected = journeys(&app).await;
    let before: usize = expected.values().sum();
    let mut ids: Vec<(String, i64)> = expected
        .iter()
        .map(|(id, n)| (id.clone(), *n as i64))
        .collect();
    ids.sort();
    let url = pg_url(&app);
    let step = |(id, n): &(String, i64)| [paused(id, n + 1)];
    let mut slow = AsyncPgConnection::establish(&url).await.unwrap();
    let mut quick = AsyncPgConnection::establish(&url).await.unwrap();
    slow.batch_execute("BEGIN").await.unwrap();
    let first = step(&ids[0]);
    journey_statement(&first, &[None])
        .execute(&mut slow)
        .await
        .unwrap();
    quick.batch_execute("BEGIN").await.unwrap();
    let second = step(&ids[1]);
    journey_statement(&second, &[None])
        .execute(&mut quick)
        .await
        .unwrap();
    quick.batch_execute("COMMIT").await.unwrap();
    // Everything committed before, and not the quick entry while the slow one is open.
    let mut c = EnrollmentServiceClient::new(app.channel().await);
    let mut stream = c
        .watch(app.authed(WatchRequest::default()))
        .await
        .unwrap()
        .into_inner();
    let mut seen = Vec::new();
    while let Ok(next) = tokio::time::timeout(Duration::from_millis(800), stream.message()).await {
        seen.push(next.unwrap().expect("the stream stays open"));
    }
    assert_eq!(seen.len(), before, "held back behind the open transaction");
    drop(stream);
    slow.batch_execute("COMMIT").await.unwrap();
    let rest = read(
        &app,
        WatchRequest {
            cursor: seen.last().unwrap().cursor.clone(),
            ..Default::default()
        },
        2,
    )
    .await;
    seen.extend(rest);
    *expected.get_mut(&ids[0].0).unwrap() += 1;
    *expected.get_mut(&ids[1].0).unwrap() += 1;
    assert_each_in_order(&seen, &expected);
    app.stop().await;
}

/// PostgreSQL, two replicas: BatchEnroll on both, both planners stepping, replies reaching
/// enrollments on both, all at once, while readers drop their Watch and resume on either
/// replica — from the last cursor they had or from a random earlier one. Every entry comes
/// exactly once, an enrollment's in seq order, and a resumed read repeats the order it gave
/// before.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "needs PostgreSQL: set NUDGE_TEST_DATABASE_URL and run with --ignored (bash .ci/run does)"]
async fn concurrent_writers_and_resuming_readers_see_every_entry_once() {
    use crate::signals::support::{contact, create_flow, TIMED_FLOW};
    use nudge::proto::v1::test_clock_service_client::TestClockServiceClient;
    use rand::{Rng, SeedableRng};
    const CONTACTS: usize = 120;
    let (url, dir, pg) = fresh_database(Backend::Postgres).await;
    let a = spawn_app_on(url.clone(), dir, pg).await;
    let b = spawn_app_on(url, tempfile::tempdir().unwrap(), None).await;
    let flow = create_flow(&a, TIMED_FLOW).await;
    for i in 0..CONTACTS {
        contact(&a, &format!("c{i}"), &format!("c{i}@example.com"), "").await;
    }
    let channels = [a.channel().await, b.channel().await];
    let tokens = [a.token.clone(), b.token.clone()];
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));

    // Readers, each with its own seed, reading while the writers write.
    let mut readers = Vec::new();
    for r in 0..3u64 {
        let (channels, tokens, done) = (channels.clone(), tokens.clone(), done.clone());
        readers.push(tokio::spawn(async move {
            let seed = 41 + r;
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
            let mut seen: Vec<WatchResponse> = Vec::new();
            let mut quiet = 0;
            loop {
                let replica = rng.gen_range(0..2);
                // From the last cursor, or now and then from an earlier one (or the start).
                let from = if seen.is_empty() || rng.gen_bool(0.7) {
                    seen.len()
                } else {
                    rng.gen_range(0..seen.len())
                };
                let cursor = if from == 0 {
                    String::new()
                } else {
                    seen[from - 1].cursor.clone()
                };
                let mut c = EnrollmentServiceClient::new(channels[replica].clone());
                let mut stream = c
                    .watch(with_token(
                        WatchRequest {
                            cursor,
                            ..Default::default()
                        },
                        &tokens[replica],
                    ))
                    .await
                    .unwrap()
                    .into_inner();
                let want = rng.gen_range(1..80);
                let mut got = 0;
                let finished = done.load(std::sync::atomic::Ordering::SeqCst);
                while got < want {
                    match tokio::time::timeout(Duration::from_millis(600), stream.message()).await {
                        Ok(next) => {
                            let entry = next.unwrap().expect("the stream stays open");
                            let at = from + got;
                            if at < seen.len() {
                                assert_eq!(
                                    (key(&entry), &entry.cursor),
                                    (key(&seen[at]), &seen[at].cursor),
                                    "seed {seed}: a resumed read gives the order it gave before"
                                );
                            } else {
                                seen.push(entry);
                            }
                            got += 1;
                        }
                        Err(_) => break,
                    }
                }
                // Done once the writers have finished and a whole read found nothing new.
                if finished && got == 0 && from == seen.len() {
                    quiet += 1;
                    if quiet == 2 {
                        return seen;
                    }
                } else {
                    quiet = 0;
                }
            }
        }));
    }

    // The writers.
    let mut writers = Vec::new();
    // BatchEnroll on both replicas: contacts split in batches of 10. Each batch that lands lets
    // its replica's planner take a step (below), so the two interleave without a timer.
    let mut landed = Vec::new();
    for (i, ch) in channels.iter().enumerate() {
        let (ch, token, flow) = (ch.clone(), tokens[i].clone(), flow.clone());
        let (tell, heard) = tokio::sync::mpsc::unbounded_channel::<()>();
        landed.push(heard);
        writers.push(tokio::spawn(async move {
            let mut e = EnrollmentServiceClient::new(ch);
            for batch in (i * CONTACTS / 2..(i + 1) * CONTACTS / 2)
                .collect::<Vec<_>>()
                .chunks(10)
            {
                let items = batch
                    .iter()
                    .map(|n| EnrollRequest {
                        contact_id: format!("c{n}"),
                        flow_id: flow.clone(),
                        ..Default::default()
                    })
                    .collect();
                e.batch_enroll(with_token(BatchEnrollRequest { items }, &token))
                    .await
                    .unwrap();
                tell.send(()).unwrap();
            }
        }));
    }
    // Both planners: after each batch its replica enrolled, that replica's clock moves an hour
    // (six batches: six hours, past the 2 h pause).
    for ((i, ch), mut heard) in channels.iter().enumerate().zip(landed) {
        let (ch, token) = (ch.clone(), tokens[i].clone());
        writers.push(tokio::spawn(async move {
            let mut clock = TestClockServiceClient::new(ch);
            while heard.recv().await.is_some() {
                clock
                    .advance(with_token(
                        AdvanceRequest {
                            target: Some(advance_request::Target::ByMs(3_600_000)),
                        },
                        &token,
                    ))
                    .await
                    .unwrap();
            }
        }));
    }
    // Replies to every third contact, through both replicas.
    for (i, ch) in channels.iter().enumerate() {
        let (ch, token) = (ch.clone(), tokens[i].clone());
        writers.push(tokio::spawn(async move {
            let mut s = SignalServiceClient::new(ch);
            for n in (i..CONTACTS).step_by(6) {
                s.report_signal(with_token(
                    ReportSignalRequest {
                        contact: format!("c{n}"),
                        kind: "reply".into(),
                        channel: "email".into(),
                        provider_id: format!("reply-{n}"),
                        ..Default::default()
                    },
                    &token,
                ))
                .await
                .unwrap();
            }
        }));
    }
    for w in writers {
        w.await.unwrap();
    }
    done.store(true, std::sync::atomic::Ordering::SeqCst);

    let expected = journeys(&a).await;
    let total: usize = expected.values().sum();
    assert_eq!(expected.len(), CONTACTS, "every contact enrolled");
    for r in readers {
        let seen = r.await.unwrap();
        assert_eq!(seen.len(), total, "every entry, once");
        let distinct: std::collections::HashSet<_> = seen.iter().map(key).collect();
        assert_eq!(distinct.len(), total, "no entry twice");
        assert_each_in_order(&seen, &expected);
    }
    b.stop().await;
    a.stop().await;
}

/// The migration that keyed Watch by transaction id, as diesel records it.
const KEYS_VERSION: &str = "20261210100000";

/// The migration that moved new enrollments' first journey steps onto their keys rows.
const FIRST_STEP_VERSION: &str = "20261218100000";

/// A store written when Watch numbered entries by position: the migration's own `down.sql`
/// numbers them (in the order Watch gives them now) and the migration is forgotten. Migrated
/// again, every position a cursor of then could hold resumes after the very entry it named,
/// and what is written since comes after.
async fn a_cursor_handed_out_before_keys_resumes_where_it_was(backend: Backend) {
    use diesel_async::SimpleAsyncConnection;
    use nudge::store::Db;
    let app = spawn_app(backend).await;
    setup(&app).await;
    let expected = journeys(&app).await;
    let total: usize = expected.values().sum();
    let before: Vec<_> = read(&app, WatchRequest::default(), total)
        .await
        .iter()
        .map(key)
        .collect();
    // First steps kept on keys rows go back to `journey_steps` first, where the store of then
    // had them (that later migration is undone too, and runs again below).
    let forget = format!(
        "DELETE FROM __diesel_schema_migrations WHERE version IN ('{KEYS_VERSION}', \
         '{FIRST_STEP_VERSION}')"
    );
    match &app.state.core.db {
        Db::Postgres(pool) => {
            let c = &mut *pool.get().await.unwrap();
            c.batch_execute(include_str!(
                "../../migrations/postgres/2026-12-18-100000_first_journey_step/down.sql"
            ))
            .await
            .unwrap();
            c.batch_execute(include_str!(
                "../../migrations/postgres/2026-12-10-100000_watch_horizon/down.sql"
            ))
            .await
            .unwrap();
            c.batch_execute(&forget).await.unwrap();
        }
        Db::Sqlite(pool) => {
            let c = &mut *pool.get().await.unwrap();
            c.batch_execute(include_str!(
                "../../migrations/sqlite/2026-12-18-100000_first_journey_step/down.sql"
            ))
            .await
            .unwrap();
            c.batch_execute(include_str!(
                "../../migrations/sqlite/2026-12-10-100000_watch_horizon/down.sql"
            ))
            .await
            .unwrap();
            c.batch_execute(&forget).await.unwrap();
        }
    }
    assert_eq!(Db::migrate(&app.database_url).await.unwrap(), 2);
    let old_cursor = |pos: usize| {
        use base64::Engine;
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!(
            "w1:{}:{pos}",
            nudge::store::accounts::DEFAULT_ACCOUNT_ID
        ))
    };
    for pos in [0, 1, total / 2, total - 1] {
        let resumed: Vec<_> = read(
            &app,
            WatchRequest {
                cursor: old_cursor(pos),
                ..Default::default()
            },
            total - pos,
        )
        .await
        .iter()
        .map(key)
        .collect();
        assert_eq!(resumed, before[pos..], "resumed after position {pos}");
    }
    // A position past the log names no entry: refused, with the fix.
    let mut c = EnrollmentServiceClient::new(app.channel().await);
    let refused = c
        .watch(app.authed(WatchRequest {
            cursor: old_cursor(total + 5),
            ..Default::default()
        }))
        .await
        .map(|_| ())
        .unwrap_err();
    assert_eq!(refused.code(), Code::InvalidArgument, "{refused:?}");
    assert!(refused.message().contains("names no entry"), "{refused:?}");
    // What is written since comes after the old entries, from an old cursor too.
    let mut e = EnrollmentServiceClient::new(app.channel().await);
    enroll(&app, &mut e, "w5").await;
    let grown: usize = journeys(&app).await.values().sum();
    assert!(grown > total);
    let from_last = read(
        &app,
        WatchRequest {
            cursor: old_cursor(total),
            ..Default::default()
        },
        grown - total,
    )
    .await;
    assert!(
        from_last.iter().all(|e| !before.contains(&key(e))),
        "only what was written since"
    );
    app.stop().await;
}
