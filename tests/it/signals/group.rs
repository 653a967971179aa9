//! Group commit (docs/signals.md, Throughput): many signals at once reach each enrollment once, a
//! group answers like its signals one at a time, and a signal that fails the group's transaction
//! fails alone.

use super::support::*;
use crate::common::{spawn_app, Backend, TestApp};
use nudge::proto::v1::*;
use serde_json::json;

backend_tests!(
    concurrent_signals_reach_each_enrollment_once,
    a_group_answers_like_signals_one_at_a_time,
    a_failing_group_routes_each_signal_alone,
    a_reply_that_leads_to_an_approval_hands_out_its_link,
);

/// What a receipt says, sorted: (enrollment, effect).
fn effects_of(deliveries: &[SignalDelivery]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = deliveries
        .iter()
        .map(|d| (d.enrollment_id.clone(), d.effect.clone()))
        .collect();
    out.sort();
    out
}

/// The journey's signal entries: (signal id, effect), in journey order.
async fn signal_entries(app: &TestApp, enrollment_id: &str) -> Vec<(String, String)> {
    journey(app, enrollment_id)
        .await
        .into_iter()
        .filter(|(kind, _)| kind == "signal")
        .map(|(_, d)| {
            (
                d["signal"].as_str().unwrap_or_default().to_string(),
                d["effect"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// Many signals at once, by gRPC and by the Twilio webhook, to one enrollment and to many: each
/// reaches each enrollment exactly once, the journey and `signal_deliveries` agree, a provider id
/// sent twice at once is one signal, and an unknown number is refused without disturbing the rest.
async fn concurrent_signals_reach_each_enrollment_once(backend: Backend) {
    use futures_util::future::join_all;
    let app = spawn_app(backend).await;
    set_twilio_token(&app).await;
    let routing = create_flow(&app, ROUTING_FLOW).await;
    let two = create_flow(&app, TWO_WAITS_FLOW).await;
    // Ann waits for a payment: every reply is buffered. Bob's first reply ends his wait.
    contact(&app, "ann", "ann@example.com", "").await;
    contact(&app, "bob", "bob@example.com", "").await;
    let ann = enroll(&app, "ann", &two).await;
    let bob = enroll(&app, "bob", &routing).await;
    let mut others = Vec::new();
    for i in 0..16 {
        let phone = format!("+1212555{:04}", 101 + i);
        contact(&app, &format!("c{i}"), "", &phone).await;
        others.push((phone, enroll(&app, &format!("c{i}"), &routing).await));
    }

    const N: usize = 12;
    let reports = (0..N).flat_map(|i| {
        let app = &app;
        // Each of Ann's provider ids is sent twice at once.
        [
            ("ann", format!("ann-{i}")),
            ("ann", format!("ann-{i}")),
            ("bob", format!("bob-{i}")),
        ]
        .map(|(who, id)| async move {
            (
                who,
                id.clone(),
                report(app, who, "reply", "email", &id).await,
            )
        })
    });
    let texts = others
        .iter()
        .enumerate()
        .map(|(i, (phone, _))| (phone.clone(), format!("SMc{i}")))
        .chain([("+12125550199".to_string(), "SMnobody".to_string())])
        .map(|(phone, sid)| {
            let app = &app;
            async move { (phone.clone(), sms(app, &phone, "yes", &sid).await) }
        });
    let (receipts, texts) = tokio::join!(join_all(reports), join_all(texts));

    // Ann: N signals, each buffered once, whichever arrival of a provider id stored it.
    let mut firsts = std::collections::HashMap::new();
    for (who, id, receipt) in receipts.iter().filter(|(who, _, _)| *who == "ann") {
        assert_eq!(
            effects_of(&receipt.deliveries),
            [(ann.clone(), "buffered".to_string())],
            "{who} {id}"
        );
        let (signal, count) = firsts
            .entry(id.clone())
            .or_insert((receipt.signal_id.clone(), 0));
        assert_eq!(*signal, receipt.signal_id, "{id}: one signal");
        if !receipt.duplicate {
            *count += 1;
        }
    }
    assert_eq!(firsts.len(), N);
    assert!(
        firsts.values().all(|(_, firsts)| *firsts == 1),
        "{firsts:?}"
    );
    let entries = signal_entries(&app, &ann).await;
    assert_eq!(entries.len(), N, "{entries:?}");
    for (signal, _) in firsts.values() {
        assert_eq!(
            entries.iter().filter(|(s, _)| s == signal).count(),
            1,
            "{signal}"
        );
        let stored = nudge::store::signals::deliveries(&app.state.core.db, signal)
            .await
            .unwrap();
        assert_eq!(stored.len(), 1, "{signal}");
        assert_eq!(
            (stored[0].enrollment_id.as_str(), stored[0].effect.as_str()),
            (ann.as_str(), "buffered")
        );
    }

    // Bob: exactly one reply woke him; the rest found him completed and reached nothing.
    let bobs: Vec<&ReportSignalResponse> = receipts
        .iter()
        .filter(|(who, _, _)| *who == "bob")
        .map(|(_, _, r)| r)
        .collect();
    let woke: Vec<&&ReportSignalResponse> =
        bobs.iter().filter(|r| !r.deliveries.is_empty()).collect();
    assert_eq!(woke.len(), 1, "{bobs:?}");
    assert_eq!(
        effects_of(&woke[0].deliveries),
        [(bob.clone(), "woke".to_string())]
    );
    assert_eq!(
        signal_entries(&app, &bob).await,
        [(woke[0].signal_id.clone(), "woke".to_string())]
    );
    assert_eq!(enrollment(&app, &bob).await.status, "completed");

    // The texts: each woke its own enrollment once; the unknown number is a 404.
    for (phone, (code, text)) in &texts {
        let want = if phone == "+12125550199" { 404 } else { 200 };
        assert_eq!(*code, want, "{phone}: {text}");
    }
    for (phone, id) in &others {
        let entries = signal_entries(&app, id).await;
        assert_eq!(entries.len(), 1, "{phone}: {entries:?}");
        assert_eq!(entries[0].1, "woke", "{phone}");
        assert_eq!(enrollment(&app, id).await.status, "completed", "{phone}");
    }
    app.stop().await;
}

fn pending(
    contact: &str,
    provider_id: &str,
    replay_key: Option<&str>,
    app: &TestApp,
) -> nudge::service::signals::Pending {
    nudge::service::signals::Pending {
        account_id: "default".into(),
        arrival: nudge::service::signals::Arrival {
            contacts: vec![contact.to_string()],
            kind: nudge::inbound::SignalKind::Reply {
                channel: "email".into(),
            },
            source: nudge::service::signals::Source::Api,
            provider_id: Some(provider_id.to_string()),
            payload: json!({}),
            replay: replay_key.map(|key| nudge::service::signals::Replay {
                key: key.to_string(),
                seen_at: app.clock_now(),
            }),
            intent: None,
        },
        phone: None,
        words: None,
        now: app.clock_now(),
    }
}

/// A reply by SMS from `phone`, its contacts found in the group.
fn by_phone(phone: &str, provider_id: &str, app: &TestApp) -> nudge::service::signals::Pending {
    let mut p = pending("", provider_id, None, app);
    p.arrival.contacts.clear();
    p.arrival.kind = nudge::inbound::SignalKind::Reply {
        channel: "sms".into(),
    };
    p.phone = Some(phone.to_string());
    p
}

/// (duplicate, signal id, sorted (enrollment, effect) pairs).
type Answer = (bool, String, Vec<(String, String)>);

/// What a group answer says, or `None` for `replayed`.
fn answer_of(
    answer: &Result<nudge::service::signals::Received, nudge::service::ServiceError>,
) -> Option<Answer> {
    use nudge::service::signals::Received;
    match answer.as_ref().expect("answered") {
        Received::Replayed => None,
        Received::Done(r) => {
            let mut effects: Vec<(String, String)> = r
                .deliveries
                .iter()
                .map(|d| (d.enrollment_id.clone(), d.effect.as_str().to_string()))
                .collect();
            effects.sort();
            Some((r.duplicate, r.signal_id.clone(), effects))
        }
    }
}

/// One group holding a duplicate of a stored signal, a new signal and its duplicate, a contact
/// no one has, two signals for the same enrollment, a replayed signature, an opt-out, and
/// signals by phone number (one known, one not):
/// every answer is the one-signal answer, and a second run of the group changes nothing.
async fn a_group_answers_like_signals_one_at_a_time(backend: Backend) {
    use nudge::service::signals::{receive_group, Pending};
    let app = spawn_app(backend).await;
    let routing = create_flow(&app, ROUTING_FLOW).await;
    let two = create_flow(&app, TWO_WAITS_FLOW).await;
    contact(&app, "ann", "ann@example.com", "").await;
    contact(&app, "bob", "bob@example.com", "").await;
    contact(&app, "cy", "cy@example.com", "").await;
    contact(&app, "dee", "", "+12125550101").await;
    let ann = enroll(&app, "ann", &two).await;
    let bob = enroll(&app, "bob", &routing).await;
    let cy = enroll(&app, "cy", &routing).await;
    let dee = enroll(&app, "dee", &two).await;
    let stored = report(&app, "ann", "reply", "email", "p-old").await;

    let group = || -> Vec<Pending> {
        let mut opt_out = pending("cy", "p-stop", None, &app);
        opt_out.arrival.kind = nudge::inbound::SignalKind::OptOut {
            channel: "email".into(),
        };
        vec![
            pending("ann", "p-old", None, &app),
            pending("bob", "p-new", None, &app),
            pending("bob", "p-new", None, &app),
            pending("nobody", "p-nobody", None, &app),
            pending("ann", "p-2", None, &app),
            pending("ann", "p-3", Some("sig-1"), &app),
            pending("ann", "p-4", Some("sig-1"), &app),
            opt_out,
            by_phone("+12125550101", "p-dee", &app),
            by_phone("+12125550199", "p-unknown", &app),
        ]
    };
    let run = || async {
        let mut answers = receive_group(&app.state.core, group()).await;
        let unknown = answers.pop().unwrap();
        assert!(
            matches!(unknown, Err(nudge::service::ServiceError::NotFound { .. })),
            "{unknown:?}"
        );
        answers.iter().map(answer_of).collect::<Vec<_>>()
    };
    let answers = run().await;
    let buffered = |id: &str| vec![(id.to_string(), "buffered".to_string())];
    let (_, old_id, old_effects) = answers[0].clone().unwrap();
    assert_eq!(old_id, stored.signal_id);
    assert_eq!(
        answers[0],
        Some((true, old_id.clone(), old_effects.clone()))
    );
    assert_eq!(old_effects, effects_of(&stored.deliveries));
    let (_, new_id, _) = answers[1].clone().unwrap();
    assert_eq!(
        answers[1],
        Some((
            false,
            new_id.clone(),
            vec![(bob.clone(), "woke".to_string())]
        ))
    );
    assert_eq!(
        answers[2],
        Some((
            true,
            new_id.clone(),
            vec![(bob.clone(), "woke".to_string())]
        ))
    );
    let (dup, _, effects) = answers[3].clone().unwrap();
    assert!(!dup && effects.is_empty(), "nobody: {:?}", answers[3]);
    let (_, p2, _) = answers[4].clone().unwrap();
    assert_eq!(answers[4], Some((false, p2.clone(), buffered(&ann))));
    let (_, p3, _) = answers[5].clone().unwrap();
    assert_eq!(answers[5], Some((false, p3.clone(), buffered(&ann))));
    assert_eq!(answers[6], None, "the signature was used by p-3");
    let (_, stop, _) = answers[7].clone().unwrap();
    assert_eq!(
        answers[7],
        Some((
            false,
            stop.clone(),
            vec![(cy.clone(), "exited".to_string())]
        ))
    );
    assert_eq!(enrollment(&app, &cy).await.status, "exited");
    let (_, by_dee, _) = answers[8].clone().unwrap();
    assert_eq!(answers[8], Some((false, by_dee, buffered(&dee))));

    // Ann's journey: each signal once, in arrival order.
    let ann_journey = signal_entries(&app, &ann).await;
    assert_eq!(
        ann_journey,
        [
            (old_id.clone(), "buffered".to_string()),
            (p2.clone(), "buffered".to_string()),
            (p3.clone(), "buffered".to_string()),
        ]
    );

    // Again: every signal is a duplicate with its first answer, the signature a replay.
    let again = run().await;
    for (i, (first, second)) in answers.iter().zip(&again).enumerate() {
        match (first, second) {
            (Some((_, id, effects)), Some((dup, id2, effects2))) if i != 5 => {
                assert!(dup, "{i}");
                assert_eq!((id, effects), (id2, effects2), "{i}");
            }
            _ if i == 5 || i == 6 => assert_eq!(*second, None, "{i}: replayed"),
            _ => panic!("{i}: {first:?} then {second:?}"),
        }
    }
    assert_eq!(
        signal_entries(&app, &ann).await,
        ann_journey,
        "nothing changed"
    );
    app.stop().await;
}

/// A signal that fails the group's transaction fails alone; the others of its group are
/// routed. What fails it here: an account that does not exist (SQLite's foreign key refuses the
/// row) and a NUL in its provider id (PostgreSQL's text refuses it; it keeps no foreign keys on
/// signals). The API never lets either through; the group is called directly.
async fn a_failing_group_routes_each_signal_alone(backend: Backend) {
    use nudge::service::signals::receive_group;
    let app = spawn_app(backend).await;
    let routing = create_flow(&app, ROUTING_FLOW).await;
    contact(&app, "ann", "ann@example.com", "").await;
    contact(&app, "bob", "bob@example.com", "").await;
    let ann = enroll(&app, "ann", &routing).await;
    let bob = enroll(&app, "bob", &routing).await;
    let mut bad = pending("ann", "f-bad\0", None, &app);
    bad.account_id = "no-such-account".into();
    let group = vec![
        pending("ann", "f-1", None, &app),
        bad,
        pending("bob", "f-2", None, &app),
    ];
    let answers = receive_group(&app.state.core, group).await;
    assert!(answers[1].is_err(), "{:?}", answers[1]);
    let woke = |id: &str| vec![(id.to_string(), "woke".to_string())];
    assert_eq!(answer_of(&answers[0]).unwrap().2, woke(&ann));
    assert_eq!(answer_of(&answers[2]).unwrap().2, woke(&bob));
    assert_eq!(signal_entries(&app, &ann).await.len(), 1);
    assert_eq!(signal_entries(&app, &bob).await.len(), 1);
    app.stop().await;
}

/// A reply that wakes a wait whose next step is an approval: the group writes the approval's
/// link as a dispatch, as the planner does (the link is signed in the group's transaction).
async fn a_reply_that_leads_to_an_approval_hands_out_its_link(backend: Backend) {
    use nudge::proto::v1::dispatch_service_client::DispatchServiceClient;
    let app = spawn_app(backend).await;
    let flow = create_flow(
        &app,
        r#"{"name": "reply-then-approve", "start": "wait_reply",
  "steps": {
    "wait_reply": {"type": "wait_for", "params": {"events": ["reply"], "timeout": "3d"},
                   "next": {"reply": "ask", "timeout": "late"}},
    "ask": {"type": "approval", "params": {"title": "Call back?", "timeout": "3d"},
            "next": {"approved": "yes", "rejected": "no", "timeout": "late"}},
    "yes": {"type": "end", "params": {"outcome": "approved"}},
    "no": {"type": "end", "params": {"outcome": "rejected"}},
    "late": {"type": "end", "params": {"outcome": "late"}}}}"#,
    )
    .await;
    contact(&app, "ann", "ann@example.com", "").await;
    let id = enroll(&app, "ann", &flow).await;
    let receipt = report(&app, "ann", "reply", "email", "r-1").await;
    assert_eq!(
        effects_of(&receipt.deliveries),
        vec![(id.clone(), "woke".to_string())]
    );
    let dispatches = DispatchServiceClient::new(app.channel().await)
        .list_dispatches(app.authed(ListDispatchesRequest {
            enrollment_id: id.clone(),
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner()
        .dispatches;
    let channels: Vec<&str> = dispatches.iter().map(|d| d.channel.as_str()).collect();
    assert_eq!(channels, vec!["approval"], "{dispatches:?}");
    let params: serde_json::Value = serde_json::from_str(&dispatches[0].channel_params).unwrap();
    assert!(
        params["path"]
            .as_str()
            .unwrap_or_default()
            .starts_with("/approvals/"),
        "{params}"
    );
    app.stop().await;
}
