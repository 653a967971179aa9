//! One signal, many enrollments: it reaches every enrollment of its contact, a provider id seen
//! before changes nothing, and a fan-out the server stopped in the middle of is finished by the
//! provider's retry.

use super::support::*;
use crate::common::{spawn_app, Backend};
use nudge::proto::v1::*;
use tonic::Code;

backend_tests!(
    one_signal_reaches_every_enrollment_of_the_contact,
    a_duplicate_provider_id_changes_nothing,
    an_interrupted_fan_out_is_finished_by_the_retry,
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
    use nudge::store::signals::{insert, Inserted, SignalRow};
    let app = spawn_app(backend).await;
    let routing = create_flow(&app, ROUTING_FLOW).await;
    let two = create_flow(&app, TWO_WAITS_FLOW).await;
    contact(&app, "ann", "ann@example.com", "").await;
    contact(&app, "bob", "bob@example.com", "").await;
    let a1 = enroll(&app, "ann", &routing).await;
    let a2 = enroll(&app, "ann", &two).await;
    let b1 = enroll(&app, "bob", &routing).await;
    let row = SignalRow {
        id: "sg_interrupted".into(),
        account_id: "default".into(),
        contact_id: "ann".into(),
        source: "api".into(),
        provider_id: Some("p-crash".into()),
        raises: r#"["reply","reply:email"]"#.into(),
        payload: "{}".into(),
        created_at: app.clock_now().timestamp_millis(),
        kind: "reply".into(),
        channel: Some("email".into()),
        contact_ids: r#"["ann","bob"]"#.into(),
        routed_at: None,
    };
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
