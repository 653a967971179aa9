//! `EnrollmentService.Watch` (SPEC §12): the account's journey in commit order, filters,
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
async fn read(app: &TestApp, req: WatchRequest, n: usize) -> Vec<WatchEntry> {
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
        .list_enrollments(app.authed(ListEnrollmentsRequest::default()))
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

fn key(e: &WatchEntry) -> (String, i64) {
    (e.enrollment_id.clone(), e.entry.as_ref().unwrap().seq)
}

/// Each enrollment's entries come in seq order from 1, with none missing.
fn assert_each_in_order(entries: &[WatchEntry], expected: &HashMap<String, usize>) {
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
        cursor: nudge::service::enrollments::cursor("another-account", 3),
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
