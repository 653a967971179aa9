//! One signal, many enrollments: it reaches every enrollment of its contact, a provider id seen
//! before changes nothing, a fan-out the server stopped in the middle of is finished by the
//! provider's retry or at the next start, and one reaching more than a chunk is applied in
//! chunks with a summarized receipt (docs/service.md, "Errors").

use super::support::*;
use crate::common::{spawn_app, Backend};
use nudge::proto::v1::*;
use tonic::Code;

backend_tests!(
    one_signal_reaches_every_enrollment_of_the_contact,
    a_duplicate_provider_id_changes_nothing,
    an_interrupted_fan_out_is_finished_by_the_retry,
    a_signal_to_many_enrollments_is_applied_in_chunks_with_a_summary,
    a_fan_out_cut_short_is_finished_at_start,
    a_failed_chunk_keeps_the_chunks_before_it_and_resumes,
);

async fn one_signal_reaches_every_enrollment_of_the_contact(backend: Backend) {
    let app = spawn_app(backend).await;
    let routing = create_flow(&app, ROUTING_FLOW).await;
    let two = create_flow(&app, TWO_WAITS_FLOW).await;
    contact(&app, "ann", "Ann@Example.com", "").await;
    contact(&app, "bob", "bob@example.com", "").await;
    let a1 = enroll(&app, "ann", &routing).await;
    let a2 = enroll(&app, "ann", &two).await;
    let b1 = enroll(&app, "bob", &routing).await;
    // The email is matched in any case.
    let receipt = report(&app, "ann@example.COM", "reply", "email", "").await;
    let mut reached: Vec<(String, String)> = receipt
        .deliveries
        .iter()
        .map(|d| (d.enrollment_id.clone(), d.effect.clone()))
        .collect();
    reached.sort();
    let mut want = vec![
        (a1.clone(), "woke".to_string()),
        (a2.clone(), "buffered".to_string()),
    ];
    want.sort();
    assert_eq!(reached, want);
    assert_eq!(enrollment(&app, &a1).await.status, "completed");
    assert_eq!(
        enrollment(&app, &b1).await.status,
        "active",
        "bob is not reached"
    );
    assert!(signal_effects(&app, &b1, &receipt.signal_id)
        .await
        .is_empty());

    // A finished enrollment is not reached again.
    let again = report(&app, "ann", "reply", "sms", "").await;
    assert_eq!(again.deliveries.len(), 1);
    assert_eq!(again.deliveries[0].enrollment_id, a2);

    // An unknown contact is NOT_FOUND and stores nothing.
    let e = app
        .signals()
        .await
        .report_signal(app.authed(ReportSignalRequest {
            contact: "nobody@example.com".into(),
            kind: "reply".into(),
            channel: "email".into(),
            provider_id: String::new(),
            ..Default::default()
        }))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::NotFound, "{e:?}");
    // Bad kinds and channels are refused with a hint.
    for (kind, channel, hint) in [
        ("reply", "fax", "`email`, `sms` or `linkedin`"),
        ("reply", "", "`email`, `sms` or `linkedin`"),
        ("replied", "", "reply"),
        ("opt_out", "", "`email`, `sms`, `call`"),
    ] {
        let e = app
            .signals()
            .await
            .report_signal(app.authed(ReportSignalRequest {
                contact: "ann".into(),
                kind: kind.into(),
                channel: channel.into(),
                provider_id: String::new(),
                ..Default::default()
            }))
            .await
            .unwrap_err();
        assert_eq!(e.code(), Code::InvalidArgument, "{kind}/{channel}");
        assert!(
            e.message().contains(hint),
            "{kind}/{channel}: {}",
            e.message()
        );
    }
    app.stop().await;
}

async fn a_duplicate_provider_id_changes_nothing(backend: Backend) {
    let app = spawn_app(backend).await;
    let flow = create_flow(&app, TWO_WAITS_FLOW).await;
    contact(&app, "ann", "ann@example.com", "").await;
    let id = enroll(&app, "ann", &flow).await;
    let first = report(&app, "ann", "reply", "email", "msg-1").await;
    assert!(!first.duplicate);
    let before = journey(&app, &id).await;
    let second = report(&app, "ann", "reply", "email", "msg-1").await;
    assert!(second.duplicate);
    assert_eq!(second.signal_id, first.signal_id);
    assert_eq!(second.deliveries, first.deliveries);
    assert_eq!(journey(&app, &id).await, before, "nothing changed");
    // Another id is another signal.
    let third = report(&app, "ann", "reply", "email", "msg-2").await;
    assert!(!third.duplicate);
    assert_ne!(third.signal_id, first.signal_id);
    app.stop().await;
}

/// The server stopped after storing a signal and before reaching its enrollments: the
/// provider's retry (same provider id) reaches them, once. The stored signal was addressed to
/// `ann` and `bob` (a shared address) and the retry names only `ann`: the stored contacts are
/// the truth, so `bob`'s enrollment is reached too (a group reads it in a second query).
async fn an_interrupted_fan_out_is_finished_by_the_retry(backend: Backend) {
    use nudge::store::signals::{insert, Inserted};
    let app = spawn_app(backend).await;
    let routing = create_flow(&app, ROUTING_FLOW).await;
    let two = create_flow(&app, TWO_WAITS_FLOW).await;
    contact(&app, "ann", "ann@example.com", "").await;
    contact(&app, "bob", "bob@example.com", "").await;
    let a1 = enroll(&app, "ann", &routing).await;
    let a2 = enroll(&app, "ann", &two).await;
    let b1 = enroll(&app, "bob", &routing).await;
    let row = stored_reply(&app, "sg_interrupted", "p-crash", r#"["ann","bob"]"#);
    let Inserted::New { reach, .. } = insert(&app.state.core.db, &row, None).await.unwrap() else {
        panic!("a new signal")
    };
    assert_eq!(reach.len(), 3);
    // Nothing was routed yet.
    assert!(signal_effects(&app, &a1, "sg_interrupted").await.is_empty());

    let retry = report(&app, "ann", "reply", "email", "p-crash").await;
    assert!(retry.duplicate);
    assert_eq!(retry.signal_id, "sg_interrupted");
    let mut effects: Vec<(String, String)> = retry
        .deliveries
        .iter()
        .map(|d| (d.enrollment_id.clone(), d.effect.clone()))
        .collect();
    effects.sort();
    let mut want = vec![
        (a1.clone(), "woke".to_string()),
        (a2.clone(), "buffered".to_string()),
        (b1.clone(), "woke".to_string()),
    ];
    want.sort();
    assert_eq!(effects, want);
    let before = journey(&app, &a2).await;
    let again = report(&app, "ann", "reply", "email", "p-crash").await;
    assert_eq!(again.deliveries, retry.deliveries);
    assert_eq!(journey(&app, &a2).await, before, "reached once");
    assert_eq!(
        signal_effects(&app, &a2, "sg_interrupted").await,
        ["buffered"]
    );
    assert_eq!(signal_effects(&app, &b1, "sg_interrupted").await, ["woke"]);
    app.stop().await;
}

/// More than two chunks of enrollments of one contact: every one is reached once, and the
/// receipt counts them all but lists only the first 100 (it used to list every one, and apply
/// them all in one transaction).
async fn a_signal_to_many_enrollments_is_applied_in_chunks_with_a_summary(backend: Backend) {
    use nudge::service::signals::{FANOUT_CHUNK, MAX_RECEIPT_DELIVERIES};
    let app = spawn_app(backend).await;
    let routing = create_flow(&app, ROUTING_FLOW).await;
    contact(&app, "ann", "ann@example.com", "").await;
    let n = 2 * FANOUT_CHUNK + 7;
    let items: Vec<EnrollRequest> = (0..n)
        .map(|_| EnrollRequest {
            contact_id: "ann".into(),
            flow_id: routing.clone(),
            allow_duplicate: true,
            ..Default::default()
        })
        .collect();
    let enrolled = app
        .enrollments()
        .await
        .batch_enroll(app.authed(BatchEnrollRequest { items }))
        .await
        .unwrap()
        .into_inner();
    let ids: Vec<String> = enrolled
        .results
        .iter()
        .map(|r| r.enrollment.as_ref().expect("enrolled").id.clone())
        .collect();
    assert_eq!(ids.len(), n);

    let receipt = report(&app, "ann", "reply", "email", "many-1").await;
    assert_eq!(receipt.reached, n as i64);
    let counts = receipt.counts.unwrap();
    assert_eq!(counts.woke, n as i64, "{counts:?}");
    assert!(receipt.truncated);
    assert_eq!(receipt.deliveries.len(), MAX_RECEIPT_DELIVERIES);
    let mut sorted = ids.clone();
    sorted.sort();
    let listed: Vec<String> = receipt
        .deliveries
        .iter()
        .map(|d| d.enrollment_id.clone())
        .collect();
    assert_eq!(listed, sorted[..MAX_RECEIPT_DELIVERIES], "the first by id");
    let stored = nudge::store::signals::deliveries(&app.state.core.db, &receipt.signal_id)
        .await
        .unwrap();
    assert_eq!(stored.len(), n, "one delivery per enrollment");
    for id in [&ids[0], &ids[FANOUT_CHUNK], &ids[n - 1]] {
        assert_eq!(enrollment(&app, id).await.status, "completed");
        assert_eq!(signal_effects(&app, id, &receipt.signal_id).await, ["woke"]);
    }

    // The provider's retry answers the same summary and changes nothing.
    let again = report(&app, "ann", "reply", "email", "many-1").await;
    assert!(again.duplicate);
    assert_eq!(again.reached, receipt.reached);
    assert_eq!(again.counts, receipt.counts);
    assert_eq!(again.deliveries, receipt.deliveries);
    app.stop().await;
}

/// A signal stored but never routed (the server died right after storing it) is finished when
/// a server starts, without waiting for the provider to retry; each enrollment once.
async fn a_fan_out_cut_short_is_finished_at_start(backend: Backend) {
    use nudge::store::signals::{insert, Inserted};
    let app = spawn_app(backend).await;
    let routing = create_flow(&app, ROUTING_FLOW).await;
    contact(&app, "ann", "ann@example.com", "").await;
    let a1 = enroll(&app, "ann", &routing).await;
    let row = stored_reply(&app, "sg_cut", "p-cut", r#"["ann"]"#);
    let Inserted::New { .. } = insert(&app.state.core.db, &row, None).await.unwrap() else {
        panic!("a new signal")
    };
    assert!(signal_effects(&app, &a1, "sg_cut").await.is_empty());

    // What `App::run` does at start.
    let core = &app.state.core;
    assert_eq!(
        nudge::service::signals::resume_unrouted(core)
            .await
            .unwrap(),
        1
    );
    assert_eq!(signal_effects(&app, &a1, "sg_cut").await, ["woke"]);
    assert_eq!(enrollment(&app, &a1).await.status, "completed");
    let stored = nudge::store::signals::by_provider_id(&core.db, "default", "p-cut")
        .await
        .unwrap()
        .unwrap();
    assert!(stored.routed_at.is_some(), "marked routed");
    assert_eq!(
        nudge::service::signals::resume_unrouted(core)
            .await
            .unwrap(),
        0
    );
    app.stop().await;
}

/// Runs one SQL statement on the app's database (either backend).
async fn exec(db: &nudge::store::Db, sql: &str) {
    use diesel_async::RunQueryDsl;
    match db {
        nudge::store::Db::Postgres(pool) => {
            let mut c = pool.get().await.unwrap();
            diesel::sql_query(sql).execute(&mut *c).await.unwrap();
        }
        nudge::store::Db::Sqlite(pool) => {
            let mut c = pool.get().await.unwrap();
            diesel::sql_query(sql).execute(&mut *c).await.unwrap();
        }
    }
}

/// Each chunk is its own transaction: when one fails (here an enrollment of the second chunk
/// whose stored state is unreadable), the chunk before it stays applied, the signal stays
/// unfinished, and finishing it later reaches only the rest.
async fn a_failed_chunk_keeps_the_chunks_before_it_and_resumes(backend: Backend) {
    use nudge::service::signals::FANOUT_CHUNK;
    let app = spawn_app(backend).await;
    let routing = create_flow(&app, ROUTING_FLOW).await;
    contact(&app, "ann", "ann@example.com", "").await;
    let n = FANOUT_CHUNK + 5;
    let items: Vec<EnrollRequest> = (0..n)
        .map(|_| EnrollRequest {
            contact_id: "ann".into(),
            flow_id: routing.clone(),
            allow_duplicate: true,
            ..Default::default()
        })
        .collect();
    let mut ids: Vec<String> = app
        .enrollments()
        .await
        .batch_enroll(app.authed(BatchEnrollRequest { items }))
        .await
        .unwrap()
        .into_inner()
        .results
        .iter()
        .map(|r| r.enrollment.as_ref().expect("enrolled").id.clone())
        .collect();
    ids.sort();
    let broken = &ids[FANOUT_CHUNK + 2];
    let db = &app.state.core.db;
    let state = stored_state(db, broken).await;
    exec(
        db,
        &format!("UPDATE enrollments SET state = 'not json' WHERE id = '{broken}'"),
    )
    .await;

    let failed = app
        .signals()
        .await
        .report_signal(app.authed(ReportSignalRequest {
            contact: "ann".into(),
            kind: "reply".into(),
            channel: "email".into(),
            provider_id: "chunky".into(),
            ..Default::default()
        }))
        .await
        .unwrap_err();
    assert_eq!(failed.code(), Code::Internal, "{failed:?}");
    let signal = nudge::store::signals::by_provider_id(db, "default", "chunky")
        .await
        .unwrap()
        .expect("stored before its fan-out");
    assert!(signal.routed_at.is_none());
    let applied = nudge::store::signals::deliveries(db, &signal.id)
        .await
        .unwrap();
    assert_eq!(
        applied.len(),
        FANOUT_CHUNK,
        "the first chunk committed, the second not"
    );
    assert!(applied
        .iter()
        .all(|d| ids[..FANOUT_CHUNK].contains(&d.enrollment_id)));

    // Repaired (its state put back), the fan-out finishes.
    set_state(db, broken, &state).await;
    let core = &app.state.core;
    let reached = nudge::service::signals::resume_unrouted(core)
        .await
        .unwrap();
    assert_eq!(reached, 5);
    let applied = nudge::store::signals::deliveries(db, &signal.id)
        .await
        .unwrap();
    assert_eq!(applied.len(), n, "each enrollment once");
    app.stop().await;
}

/// An enrollment's stored state.
async fn stored_state(db: &nudge::store::Db, id: &str) -> Vec<u8> {
    use diesel::prelude::*;
    use diesel_async::RunQueryDsl;
    use nudge::store::schema::enrollments;
    let query = enrollments::table.find(id).select(enrollments::state);
    match db {
        nudge::store::Db::Postgres(pool) => {
            let mut c = pool.get().await.unwrap();
            query.first::<Vec<u8>>(&mut *c).await.unwrap()
        }
        nudge::store::Db::Sqlite(pool) => {
            let mut c = pool.get().await.unwrap();
            query.first::<Vec<u8>>(&mut *c).await.unwrap()
        }
    }
}

/// Puts an enrollment's stored state back.
async fn set_state(db: &nudge::store::Db, id: &str, state: &[u8]) {
    use diesel::prelude::*;
    use diesel_async::RunQueryDsl;
    use nudge::store::schema::enrollments;
    let update = diesel::update(enrollments::table.find(id)).set(enrollments::state.eq(state));
    match db {
        nudge::store::Db::Postgres(pool) => {
            let mut c = pool.get().await.unwrap();
            update.execute(&mut *c).await.unwrap();
        }
        nudge::store::Db::Sqlite(pool) => {
            let mut c = pool.get().await.unwrap();
            update.execute(&mut *c).await.unwrap();
        }
    }
}

/// An email reply from `ann` as the store holds it before its fan-out (`routed_at` unset),
/// addressed to `contact_ids` (JSON): what a crash right after storing it leaves.
fn stored_reply(
    app: &crate::common::TestApp,
    id: &str,
    provider_id: &str,
    contact_ids: &str,
) -> nudge::store::signals::SignalRow {
    nudge::store::signals::SignalRow {
        id: id.into(),
        account_id: "default".into(),
        contact_id: "ann".into(),
        source: "api".into(),
        provider_id: Some(provider_id.into()),
        raises: r#"["reply","reply:email"]"#.into(),
        payload: "{}".into(),
        created_at: app.clock_now().timestamp_millis(),
        kind: "reply".into(),
        channel: Some("email".into()),
        contact_ids: contact_ids.into(),
        routed_at: None,
    }
}
