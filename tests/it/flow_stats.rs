//! `GetFlowStats` end to end: the funnel counted as steps, acks and signals commit, a step
//! experiment's exposures (a variant's message acknowledged as sent) and conversions (a person's
//! reply before the enrollment's next outreach message, once per exposure, never a meeting when
//! the goal is a reply), and the figures withheld while the data cannot back them.

use crate::common::{spawn_app, Backend, TestApp};
use nudge::clock::Clock;
use nudge::experiment::{assign, seed};
use nudge::proto::v1::dispatch_service_client::DispatchServiceClient;
use nudge::proto::v1::enrollment_service_client::EnrollmentServiceClient;
use nudge::proto::v1::signal_service_client::SignalServiceClient;
use nudge::proto::v1::test_clock_service_client::TestClockServiceClient;
use nudge::proto::v1::*;
use std::collections::BTreeMap;

backend_tests!(the_funnel_and_the_experiment_count_what_happened);

const CONTACTS: usize = 40;

async fn claim_and_send(app: &TestApp) -> Vec<Dispatch> {
    let mut d = DispatchServiceClient::new(app.channel().await);
    let claimed = d
        .claim_dispatches(app.authed(ClaimDispatchesRequest {
            lease_ms: 600_000,
            max_count: 500,
            channels: vec!["email".into()],
        }))
        .await
        .unwrap()
        .into_inner()
        .dispatches;
    for x in &claimed {
        d.ack_dispatch(app.authed(AckDispatchRequest {
            id: x.id.clone(),
            lease_token: x.lease_token.clone(),
            provider_message_id: format!("m-{}", x.id),
            ..Default::default()
        }))
        .await
        .unwrap();
    }
    claimed
}

async fn signal(app: &TestApp, contact: usize, kind: &str) {
    SignalServiceClient::new(app.channel().await)
        .report_signal(app.authed(ReportSignalRequest {
            contact: format!("prospect-{contact}"),
            kind: kind.into(),
            channel: if kind == "reply" {
                "email".into()
            } else {
                String::new()
            },
            intent: if kind == "reply" {
                "interested".into()
            } else {
                String::new()
            },
            r#type: if kind == "bounce" {
                "soft".into()
            } else {
                String::new()
            },
            ..Default::default()
        }))
        .await
        .unwrap();
}

async fn stats(
    app: &TestApp,
    version: i32,
    since: Option<prost_types::Timestamp>,
) -> GetFlowStatsResponse {
    app.flows()
        .await
        .get_flow_stats(app.authed(GetFlowStatsRequest {
            flow_id: "reply-test".into(),
            version,
            since,
        }))
        .await
        .unwrap()
        .into_inner()
}

fn step<'a>(s: &'a GetFlowStatsResponse, id: &str) -> &'a StepStats {
    s.steps
        .iter()
        .find(|x| x.step == id)
        .unwrap_or_else(|| panic!("{id} in {s:?}"))
}

async fn the_funnel_and_the_experiment_count_what_happened(backend: Backend) {
    let app = spawn_app(backend).await;
    let flow = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/flows/reply-test.json"
    ))
    .unwrap();
    app.flows()
        .await
        .create_flow(app.authed(CreateFlowRequest { definition: flow }))
        .await
        .unwrap();
    let mut e = EnrollmentServiceClient::new(app.channel().await);
    for i in 0..CONTACTS {
        app.contacts()
            .await
            .upsert_contact(app.authed(UpsertContactRequest {
                contact: Some(Contact {
                    id: format!("prospect-{i}"),
                    email: format!("p{i}@example.com"),
                    tz: "America/Denver".into(),
                    ..Default::default()
                }),
            }))
            .await
            .unwrap();
        e.enroll(app.authed(EnrollRequest {
            contact_id: format!("prospect-{i}"),
            flow_id: "reply-test".into(),
            ..Default::default()
        }))
        .await
        .unwrap();
    }
    let variant_of = |i: usize| {
        ["short", "long"][assign(
            &seed("reply-test", "email_1", None),
            &format!("prospect-{i}"),
            &[1.0, 1.0],
            &[false, false],
        )
        .index]
    };

    // Nothing sent yet: entered and dispatched, nobody exposed.
    let before = stats(&app, 0, None).await;
    assert_eq!(step(&before, "email_1").entered, CONTACTS as i64);
    assert_eq!(step(&before, "email_1").dispatched, CONTACTS as i64);
    assert_eq!(step(&before, "email_1").sent, 0);
    let exp = step(&before, "email_1")
        .experiment
        .as_ref()
        .expect("an experiment");
    assert!(exp.variants.iter().all(|v| v.exposed == 0));

    // Every first email sent: each contact exposed to its variant.
    assert_eq!(claim_and_send(&app).await.len(), CONTACTS);
    // Ten reply (the first one twice: one conversion), four book a meeting (not the goal),
    // one soft bounce.
    for i in 0..10 {
        signal(&app, i, "reply").await;
    }
    signal(&app, 0, "reply").await;
    for i in 10..14 {
        signal(&app, i, "meeting_booked").await;
    }
    signal(&app, 14, "bounce").await;

    // Three days on, the others get the second email: their first email's window closes, so
    // a reply now counts as a reply but converts nothing.
    TestClockServiceClient::new(app.channel().await)
        .advance(app.authed(AdvanceRequest {
            target: Some(advance_request::Target::ByMs(4 * 86_400_000)),
        }))
        .await
        .unwrap();
    let second = claim_and_send(&app).await;
    assert!(second.iter().all(|d| d.step == "email_2"), "{second:?}");
    assert_eq!(second.len(), CONTACTS - 4);
    for i in 20..25 {
        signal(&app, i, "reply").await;
    }

    let s = stats(&app, 0, None).await;
    assert_eq!(s.name, "reply-test");
    let names: Vec<&str> = s.steps.iter().map(|x| x.step.as_str()).collect();
    assert_eq!(
        names,
        ["email_1", "listen_1", "done", "email_2", "listen_2"]
    );
    let e1 = step(&s, "email_1");
    assert_eq!(
        (e1.entered, e1.dispatched, e1.sent, e1.failed),
        (40, 40, 40, 0)
    );
    let l1 = step(&s, "listen_1");
    assert_eq!(l1.entered, 40);
    assert_eq!(l1.replies, 11, "every reply counts, the repeated one too");
    assert_eq!(l1.intents["interested"], 11);
    assert_eq!(l1.intents["not_now"], 0);
    assert_eq!(l1.meetings_booked, 4);
    assert_eq!(l1.bounced, 1);
    let e2 = step(&s, "email_2");
    assert_eq!((e2.entered, e2.sent), (36, 36));
    assert!(e2.experiment.is_none());
    assert_eq!(step(&s, "listen_2").replies, 5);

    let exp = e1.experiment.as_ref().unwrap();
    assert_eq!(exp.name, "reply-test/email_1");
    assert_eq!(exp.goal, "reply");
    let mut exposed: BTreeMap<&str, i64> = BTreeMap::new();
    let mut converted: BTreeMap<&str, i64> = BTreeMap::new();
    for i in 0..CONTACTS {
        *exposed.entry(variant_of(i)).or_default() += 1;
        if i < 10 {
            *converted.entry(variant_of(i)).or_default() += 1;
        }
    }
    for v in &exp.variants {
        assert_eq!(v.exposed, exposed[v.name.as_str()], "{v:?}");
        assert_eq!(
            v.converted,
            converted.get(v.name.as_str()).copied().unwrap_or(0),
            "{v:?}"
        );
        assert_eq!(v.state, VariantState::Running as i32);
        assert!((v.rate - v.converted as f64 / v.exposed as f64).abs() < 1e-12);
    }
    // Forty contacts cannot back a difference: said as such, no number shown.
    let challenger = &exp.variants[1];
    assert!(challenger.difference.is_none() && challenger.p_value.is_none());
    assert!(
        challenger.note.starts_with("not enough data yet"),
        "{challenger:?}"
    );
    assert!(
        exp.variants[0].note.is_empty(),
        "the control is not compared"
    );
    assert!(!exp.sample_ratio_warning, "{exp:?}");

    // One version, the same; `since` after everything: nothing.
    assert_eq!(stats(&app, 1, None).await.steps, s.steps);
    let later = app.clock.now() + chrono::Duration::hours(2);
    let empty = stats(
        &app,
        0,
        Some(prost_types::Timestamp {
            seconds: later.timestamp(),
            nanos: 0,
        }),
    )
    .await;
    assert!(empty.steps.iter().all(|x| x.entered == 0 && x.replies == 0));

    // Folding the rows leaves one a key and keeps every figure (a read past a few hundred rows
    // folds by itself, so some may be folded already).
    let db = &app.state.core.db;
    nudge::store::flow_stats::fold(db, "default", &s.flow_id)
        .await
        .unwrap();
    let (keys, rows) = nudge::store::flow_stats::read(db, "default", &s.flow_id, i64::MIN)
        .await
        .unwrap();
    assert_eq!(rows, keys.len(), "one row a key after a fold");
    assert_eq!(stats(&app, 0, None).await, s);

    // An unknown flow is NOT_FOUND, as GetFlow answers.
    let missing = app
        .flows()
        .await
        .get_flow_stats(app.authed(GetFlowStatsRequest {
            flow_id: "no-such-flow".into(),
            ..Default::default()
        }))
        .await
        .unwrap_err();
    assert_eq!(missing.code(), tonic::Code::NotFound);
    app.stop().await;
}
