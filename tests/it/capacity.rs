//! Sending capacity per sender (docs/capacity.md), end to end on a real server and the planner: caps
//! stored and refused through `UpsertSender`, a capped step deferred to the exact instant its
//! slot frees with a `deferred` entry naming the cap, a failed ack giving the slot back, the
//! priority order when capacity is short, and (PostgreSQL) three planners racing over 10,000
//! enrollments of 20 capped senders without ever exceeding a cap.

use crate::common::{spawn_app, Backend, TestApp};
use chrono::{DateTime, Duration, Utc};
use nudge::clock::{from_millis, Clock};
use nudge::planner::Planner;
use nudge::proto::v1::*;
use nudge::service::dispatches::{self as dispatch_service, Outcome};
use nudge::service::enrollments::{self, EnrollInput};
use nudge::store::accounts::DEFAULT_ACCOUNT_ID;
use nudge::store::dispatches::ListFilter;
use std::collections::HashMap;

backend_tests!(
    caps_are_stored_and_bad_caps_refused_with_the_field,
    the_step_over_the_daily_cap_goes_exactly_24h_after_the_first,
    a_failed_ack_gives_the_slot_back,
    a_slot_given_back_goes_at_once_to_the_first_in_line,
    moved_first_then_follow_ups_then_first_touches,
    a_linkedin_min_gap_is_kept_between_tasks,
);

/// One email, a wait, a second email, the end.
const FLOW: &str = r#"{
  "name": "capped",
  "start": "e1",
  "steps": {
    "e1": { "type": "email", "params": { "template": "one" }, "next": { "then": "w" } },
    "w":  { "type": "wait", "params": { "duration": "1h" }, "next": { "then": "e2" } },
    "e2": { "type": "email", "params": { "template": "two" }, "next": { "then": "done" } },
    "done": { "type": "end" }
  }
}"#;

fn daily(n: i64) -> SenderCaps {
    SenderCaps {
        email: Some(ChannelCaps {
            daily: Some(n),
            ..Default::default()
        }),
        ..Default::default()
    }
}

async fn upsert_sender(
    app: &TestApp,
    id: &str,
    caps: Option<SenderCaps>,
) -> Result<Sender, tonic::Status> {
    app.senders()
        .await
        .upsert_sender(app.authed(UpsertSenderRequest {
            sender: Some(Sender {
                id: id.into(),
                tz: "UTC".into(),
                caps,
                ..Default::default()
            }),
            make_default: false,
        }))
        .await
        .map(|r| r.into_inner().sender.unwrap())
}

/// One email, then the end.
const ONE: &str = r#"{
  "name": "capped",
  "start": "e1",
  "steps": {
    "e1": { "type": "email", "params": { "template": "one" }, "next": { "then": "done" } },
    "done": { "type": "end" }
  }
}"#;

async fn setup(app: &TestApp, contacts: usize, flow: &str) {
    app.flows()
        .await
        .create_flow(app.authed(CreateFlowRequest {
            definition: flow.into(),
        }))
        .await
        .unwrap();
    for i in 0..contacts {
        app.contacts()
            .await
            .upsert_contact(app.authed(UpsertContactRequest {
                contact: Some(Contact {
                    id: format!("c{i}"),
                    email: format!("p{i}@d{}.example", i % 7),
                    tz: "UTC".into(),
                    ..Default::default()
                }),
            }))
            .await
            .unwrap();
    }
}

async fn enroll(app: &TestApp, contacts: &[usize], sender: &str) -> Vec<String> {
    let items = contacts
        .iter()
        .map(|i| EnrollInput {
            contact_id: format!("c{i}"),
            flow_id: "capped".into(),
            sender_id: sender.into(),
            allow_duplicate: true,
            ..Default::default()
        })
        .collect();
    enrollments::batch_enroll(&app.state.core, DEFAULT_ACCOUNT_ID, items)
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.unwrap().0.id.into_string())
        .collect()
}

/// Every dispatch: (enrollment, step, created_at).
async fn dispatches(app: &TestApp) -> Vec<(String, String, DateTime<Utc>)> {
    let filter = ListFilter {
        enrollment_id: None,
        status: None,
        after_id: None,
    };
    nudge::store::dispatches::list(&app.state.core.db, DEFAULT_ACCOUNT_ID, &filter, 100_000)
        .await
        .unwrap()
        .into_iter()
        .map(|d| (d.enrollment_id, d.step, from_millis(d.created_at)))
        .collect()
}

/// The `deferred` journey entries of an enrollment, as JSON.
async fn deferrals(app: &TestApp, id: &str) -> Vec<serde_json::Value> {
    nudge::store::enrollments::journey(&app.state.core.db, id, 0, 1_000)
        .await
        .unwrap()
        .into_iter()
        .filter(|j| j.kind == "deferred")
        .map(|j| serde_json::from_str(&j.detail).unwrap())
        .collect()
}

async fn advance(app: &TestApp, to: DateTime<Utc>) {
    Planner::new(app.state.core.clone())
        .advance_to(&app.clock, to)
        .await
        .unwrap();
}

async fn caps_are_stored_and_bad_caps_refused_with_the_field(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut caps = daily(50);
    caps.email.as_mut().unwrap().min_gap = "2m".into();
    caps.email.as_mut().unwrap().ramp = Some(Ramp {
        start: 10,
        step: 5,
        every: "1d".into(),
        from: "2026-12-01".into(),
    });
    caps.linkedin = Some(ChannelCaps {
        daily: Some(20),
        weekly: Some(100),
        ..Default::default()
    });
    let stored = upsert_sender(&app, "rep", Some(caps.clone()))
        .await
        .unwrap();
    assert_eq!(stored.caps.as_ref(), Some(&caps));

    let bad: Vec<(SenderCaps, &str)> = vec![
        (daily(0), "sender.caps.email.daily"),
        (daily(-5), "sender.caps.email.daily"),
        (
            SenderCaps {
                email: Some(ChannelCaps {
                    min_gap: "1d".into(),
                    ..Default::default()
                }),
                ..Default::default()
            },
            "sender.caps.email.min_gap",
        ),
        (
            SenderCaps {
                email: Some(ChannelCaps {
                    ramp: Some(Ramp {
                        start: 5,
                        step: 1,
                        every: "30m".into(),
                        from: "2026-12-01".into(),
                    }),
                    ..Default::default()
                }),
                ..Default::default()
            },
            "sender.caps.email.ramp.every",
        ),
        (
            SenderCaps {
                sms: Some(ChannelCaps {
                    domain_daily: Some(5),
                    ..Default::default()
                }),
                ..Default::default()
            },
            "sender.caps.sms.domain_daily",
        ),
    ];
    for (caps, field) in bad {
        let err = upsert_sender(&app, "rep", Some(caps)).await.unwrap_err();
        assert_eq!(err.code(), tonic::Code::InvalidArgument, "{field}");
        assert!(err.message().contains(field), "{field}: {}", err.message());
        // Nothing stored: the earlier caps stand.
        let got = app
            .senders()
            .await
            .get_sender(app.authed(GetSenderRequest { id: "rep".into() }))
            .await
            .unwrap()
            .into_inner()
            .sender
            .unwrap();
        assert_eq!(got.caps.as_ref(), Some(&caps_clone(&stored)), "{field}");
    }
}

fn caps_clone(s: &Sender) -> SenderCaps {
    s.caps.clone().unwrap()
}

async fn the_step_over_the_daily_cap_goes_exactly_24h_after_the_first(backend: Backend) {
    let app = spawn_app(backend).await;
    setup(&app, 6, ONE).await;
    upsert_sender(&app, "rep", Some(daily(5))).await.unwrap();
    let t0 = app.clock.now();
    // Five first emails a minute apart, then a sixth: over the cap.
    let mut ids = Vec::new();
    for i in 0..6 {
        app.clock.set(t0 + Duration::minutes(i as i64));
        ids.extend(enroll(&app, &[i], "rep").await);
        advance(&app, t0 + Duration::minutes(i as i64)).await;
    }
    let sent = dispatches(&app).await;
    assert_eq!(sent.len(), 5, "five sent, the sixth deferred: {sent:?}");
    assert!(!sent.iter().any(|(e, _, _)| e == &ids[5]));
    let d = deferrals(&app, &ids[5]).await;
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(d[0]["cap"], "CAP_DAILY");
    // Exactly 24 h after the first send (2026-12-04T20:00:00Z).
    assert_eq!(d[0]["to"], "2026-12-05T20:00:00Z");
    let row = nudge::store::enrollments::get(&app.state.core.db, DEFAULT_ACCOUNT_ID, &ids[5])
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        row.next_run_at.map(from_millis),
        Some(t0 + Duration::hours(24)),
        "the wake is the computed slot, not a poll"
    );
    // A millisecond before, nothing; at the instant, it goes.
    advance(&app, t0 + Duration::hours(24) - Duration::milliseconds(1)).await;
    assert_eq!(dispatches(&app).await.len(), 5);
    advance(&app, t0 + Duration::hours(24)).await;
    let sent = dispatches(&app).await;
    let sixth: Vec<_> = sent.iter().filter(|(e, _, _)| e == &ids[5]).collect();
    assert_eq!(sixth.len(), 1, "{:?}", deferrals(&app, &ids[5]).await);
    assert_eq!(sixth[0].2, t0 + Duration::hours(24));
}

async fn a_failed_ack_gives_the_slot_back(backend: Backend) {
    let app = spawn_app(backend).await;
    setup(&app, 3, ONE).await;
    upsert_sender(&app, "rep", Some(daily(1))).await.unwrap();
    let t0 = app.clock.now();
    let first = enroll(&app, &[0], "rep").await;
    advance(&app, t0).await;
    let claimed = dispatch_service::claim(&app.state.core, DEFAULT_ACCOUNT_ID, 60_000, 10, &[])
        .await
        .unwrap();
    assert_eq!(claimed.len(), 1);
    assert_eq!(claimed[0].enrollment_id.as_str(), first[0]);
    dispatch_service::ack(
        &app.state.core,
        DEFAULT_ACCOUNT_ID,
        &claimed[0].id,
        claimed[0].lease_token.as_deref().unwrap_or_default(),
        &Outcome::Failed {
            failure: "mailbox suspended".into(),
        },
    )
    .await
    .unwrap();
    // Nothing was sent, so the day's one slot is free: the next first email goes at once.
    app.clock.set(t0 + Duration::minutes(5));
    let second = enroll(&app, &[1], "rep").await;
    advance(&app, t0 + Duration::minutes(5)).await;
    assert!(
        dispatches(&app)
            .await
            .iter()
            .any(|(e, _, _)| e == &second[0]),
        "the failed dispatch's slot was given back"
    );
    assert!(deferrals(&app, &second[0]).await.is_empty());
    // That one (not failed) keeps its slot: a third waits.
    let third = enroll(&app, &[2], "rep").await;
    advance(&app, t0 + Duration::minutes(5)).await;
    let d = deferrals(&app, &third[0]).await;
    assert_eq!(d.len(), 1);
    assert_eq!(d[0]["cap"], "CAP_DAILY");
}

/// docs/capacity.md: a step waiting for capacity wakes when a slot opens, computed, not polled. A
/// failed ack opens one: the first waiter (deferred first, so first in line) takes it in the
/// ack's own transaction, with no time passing; the second keeps its computed instant.
async fn a_slot_given_back_goes_at_once_to_the_first_in_line(backend: Backend) {
    let app = spawn_app(backend).await;
    setup(&app, 3, ONE).await;
    upsert_sender(&app, "rep", Some(daily(1))).await.unwrap();
    let t0 = app.clock.now();
    let ids = enroll(&app, &[0, 1, 2], "rep").await;
    advance(&app, t0).await;
    let claimed = dispatch_service::claim(&app.state.core, DEFAULT_ACCOUNT_ID, 60_000, 10, &[])
        .await
        .unwrap();
    assert_eq!(claimed.len(), 1, "one slot a day: one sent, two deferred");
    let due_of = |id: String| {
        let db = app.state.core.db.clone();
        async move {
            nudge::store::enrollments::get(&db, DEFAULT_ACCOUNT_ID, &id)
                .await
                .unwrap()
                .unwrap()
                .next_run_at
                .map(from_millis)
        }
    };
    // Both deferred by the cap, in priority order: one to the next free slot, 24 h after the
    // send, the other a day after that.
    let mut waiting = Vec::new();
    for id in ids
        .iter()
        .filter(|id| id.as_str() != claimed[0].enrollment_id.as_str())
    {
        let d = deferrals(&app, id).await;
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0]["cap"], "CAP_DAILY");
        waiting.push((due_of(id.clone()).await.unwrap(), id.clone()));
    }
    waiting.sort();
    assert_eq!(waiting[0].0, t0 + Duration::hours(24));
    assert_eq!(waiting[1].0, t0 + Duration::hours(48));
    let (first_in_line, second) = (&waiting[0].1, &waiting[1].1);
    app.clock.set(t0 + Duration::minutes(3));
    dispatch_service::ack(
        &app.state.core,
        DEFAULT_ACCOUNT_ID,
        &claimed[0].id,
        claimed[0].lease_token.as_deref().unwrap_or_default(),
        &Outcome::Failed {
            failure: "mailbox suspended".into(),
        },
    )
    .await
    .unwrap();
    // No planner ran and no time passed: the ack itself gave the slot to the first waiter.
    let sent = dispatches(&app).await;
    let woken: Vec<_> = sent.iter().filter(|(e, _, _)| e == first_in_line).collect();
    assert_eq!(woken.len(), 1, "the first in line took the slot: {sent:?}");
    assert_eq!(woken[0].2, t0 + Duration::minutes(3));
    assert_eq!(
        due_of(first_in_line.clone()).await,
        None,
        "it sent and ended"
    );
    // The second keeps the instant computed for it: never earlier than a slot it can have.
    assert!(!sent.iter().any(|(e, _, _)| e == second));
    assert_eq!(due_of(second.clone()).await, Some(t0 + Duration::hours(48)));
}

async fn moved_first_then_follow_ups_then_first_touches(backend: Backend) {
    let app = spawn_app(backend).await;
    setup(&app, 5, FLOW).await;
    upsert_sender(&app, "rep", Some(daily(2))).await.unwrap();
    let t0 = app.clock.now();
    // A and B send their first emails at t0: the day's two slots.
    let ab = enroll(&app, &[0, 1], "rep").await;
    advance(&app, t0).await;
    assert_eq!(dispatches(&app).await.len(), 2);
    // An hour later A and B want their follow-up; C and D their first touch; all wait.
    app.clock.set(t0 + Duration::minutes(30));
    let cd = enroll(&app, &[2, 3], "rep").await;
    advance(&app, t0 + Duration::hours(2)).await;
    assert_eq!(dispatches(&app).await.len(), 2);
    // An operator moves D back onto its first email: first in line.
    let who = nudge::auth::Principal {
        account_id: DEFAULT_ACCOUNT_ID.into(),
        token_id: "test".into(),
        scope: nudge::auth::Scope::Full,
    };
    enrollments::act(
        &app.state.core,
        &who,
        &cd[1].as_str().into(),
        nudge::engine::Input::MoveTo { step: "e1".into() },
    )
    .await
    .unwrap();
    advance(&app, t0 + Duration::hours(2)).await;
    // At t0 + 24 h two slots free: D (moved), then a follow-up (A: earliest due, lower id than
    // B when due ties); C (a first touch) and B wait.
    advance(&app, t0 + Duration::hours(24)).await;
    let at_24: HashMap<String, String> = dispatches(&app)
        .await
        .into_iter()
        .filter(|(_, _, at)| *at == t0 + Duration::hours(24))
        .map(|(e, s, _)| (e, s))
        .collect();
    assert_eq!(at_24.len(), 2, "{at_24:?}");
    assert_eq!(
        at_24.get(&cd[1]).map(String::as_str),
        Some("e1"),
        "moved first"
    );
    let follow = if ab[0] < ab[1] { &ab[0] } else { &ab[1] };
    assert_eq!(
        at_24.get(follow).map(String::as_str),
        Some("e2"),
        "then a follow-up"
    );
    assert!(!at_24.contains_key(&cd[0]), "the first touch waits");
    // Each waiter wakes at its own computed slot. At t0 + 48 h the other follow-up and D's
    // follow-up (D sent at t0 + 24 h) take both slots; C, the first touch, goes a day later.
    advance(&app, t0 + Duration::hours(73)).await;
    let all = dispatches(&app).await;
    let when = |id: &str, step: &str| {
        all.iter()
            .find(|(e, s, _)| e == id && s == step)
            .map(|(_, _, at)| *at)
    };
    let other = if follow == &ab[0] { &ab[1] } else { &ab[0] };
    let b = when(other, "e2").expect("the other follow-up sent");
    let c = when(&cd[0], "e1").expect("the first touch sent");
    assert_eq!(b, t0 + Duration::hours(48));
    assert_eq!(when(&cd[1], "e2"), Some(t0 + Duration::hours(48)));
    assert_eq!(
        c,
        t0 + Duration::hours(72),
        "first touch after every follow-up"
    );
}

mod replicas {
    //! Three planners racing on one PostgreSQL over 10,000 enrollments of 20 capped senders.
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    #[ignore = "needs PostgreSQL: set NUDGE_TEST_DATABASE_URL and run with --ignored"]
    async fn three_planners_never_exceed_a_cap_and_send_each_once() {
        let app = spawn_app(Backend::Postgres).await;
        const N: usize = 10_000;
        const SENDERS: usize = 20;
        const CAP: usize = 150;
        app.flows()
            .await
            .create_flow(app.authed(CreateFlowRequest {
                definition: r#"{"name": "one", "start": "e1", "steps": {
                    "e1": { "type": "email", "params": { "template": "t" }, "next": { "then": "done" } },
                    "done": { "type": "end" } } }"#
                    .into(),
            }))
            .await
            .unwrap();
        app.contacts()
            .await
            .upsert_contact(app.authed(UpsertContactRequest {
                contact: Some(Contact {
                    id: "c".into(),
                    email: "p@example.com".into(),
                    tz: "UTC".into(),
                    ..Default::default()
                }),
            }))
            .await
            .unwrap();
        for s in 0..SENDERS {
            upsert_sender(&app, &format!("s{s}"), Some(daily(CAP as i64)))
                .await
                .unwrap();
        }
        let items: Vec<EnrollInput> = (0..N)
            .map(|i| EnrollInput {
                contact_id: "c".into(),
                flow_id: "one".into(),
                sender_id: format!("s{}", i % SENDERS),
                allow_duplicate: true,
                ..Default::default()
            })
            .collect();
        let mut sender_of: HashMap<String, String> = HashMap::new();
        for chunk in items.chunks(1_000) {
            let r = enrollments::batch_enroll(&app.state.core, DEFAULT_ACCOUNT_ID, chunk.to_vec())
                .await
                .unwrap();
            for (item, r) in chunk.iter().zip(r) {
                sender_of.insert(r.unwrap().0.id.into_string(), item.sender_id.clone());
            }
        }
        // 500 per sender at 150 a day: four days. Three planners drain every due instant.
        let mut now = app.clock.now();
        let end = now + Duration::days(5);
        loop {
            let runs: Vec<_> = (0..3)
                .map(|_| {
                    let p = Planner {
                        core: app.state.core.clone(),
                        batch: 300,
                        workers: 2,
                    };
                    tokio::spawn(async move { p.drain(now).await.unwrap() })
                })
                .collect();
            for r in runs {
                r.await.unwrap();
            }
            match nudge::store::enrollments::next_due(&app.state.core.db)
                .await
                .unwrap()
            {
                Some(due) if due <= end => {
                    now = due.max(now);
                    app.clock.set(now);
                }
                _ => break,
            }
        }
        // Every enrollment sent exactly once.
        let sent = dispatches(&app).await;
        assert_eq!(sent.len(), N);
        let mut per_enrollment: HashMap<&str, usize> = HashMap::new();
        for (e, _, _) in &sent {
            *per_enrollment.entry(e.as_str()).or_default() += 1;
        }
        assert!(per_enrollment.values().all(|n| *n == 1));
        // No rolling 24 h of any sender holds more than the cap.
        let mut by_sender: HashMap<String, Vec<DateTime<Utc>>> = HashMap::new();
        for (e, _, at) in &sent {
            by_sender.entry(sender_of[e].clone()).or_default().push(*at);
        }
        assert_eq!(by_sender.len(), SENDERS);
        for (s, mut times) in by_sender {
            times.sort();
            for (i, t) in times.iter().enumerate() {
                let in_window = times[..=i]
                    .iter()
                    .filter(|u| **u > *t - Duration::hours(24))
                    .count();
                assert!(
                    in_window <= CAP,
                    "sender {s}: {in_window} in the 24 h before {t}"
                );
            }
        }
    }
}

mod campaign {
    //! docs/service.md's campaign simulation: the whole campaign under one sender's caps, per
    //! enrollment with its deferrals, and the same send instants as the real planner.
    use super::*;
    use nudge::engine::campaign::simulate_campaign;
    use nudge::engine::simulate::Scenario;
    use nudge::proto::v1::timing_service_client::TimingServiceClient;

    fn scenario(contacts: usize) -> serde_json::Value {
        serde_json::json!({
            "start": "2026-12-04T20:00:00Z",
            "horizon": "2026-12-20T00:00:00Z",
            "sender": {"tz": "UTC", "caps": {"email": {"daily": 3, "min_gap": "10m"}}},
            "contacts": (0..contacts).map(|i| serde_json::json!({
                "id": format!("c{i}"), "tz": "UTC", "email": format!("p{i}@d{}.example", i % 7)
            })).collect::<Vec<_>>(),
        })
    }

    fn flow() -> nudge::flow::Flow {
        crate::engine_support::flow(serde_json::from_str(FLOW).unwrap())
    }

    /// A LinkedIn cap's `min_gap` keeps tasks apart in a simulation too: with two
    /// contacts enrolled at 14:00, the second's `linkedin_connect` task is created at 14:10
    /// (it was shown at 14:00, as planned at entry, with only a deferral saying otherwise).
    #[test]
    fn a_linkedin_min_gap_moves_the_second_task() {
        let s: Scenario = serde_json::from_value(serde_json::json!({
            "start": "2026-12-07T14:00:00Z",
            "horizon": "2026-12-10T00:00:00Z",
            "sender": {"tz": "UTC",
                       "caps": {"linkedin": {"daily": 2, "weekly": 5, "min_gap": "10m"}}},
            "contacts": [{"id": "a", "tz": "UTC"}, {"id": "b", "tz": "UTC"}, {"id": "c", "tz": "UTC"}],
        }))
        .unwrap();
        let flow = crate::engine_support::flow(serde_json::from_str(CONNECT).unwrap());
        let c = simulate_campaign(&flow, &s).unwrap();
        let at: Vec<Option<DateTime<Utc>>> =
            c.enrollments.iter().map(|e| e.runs[0].scheduled).collect();
        let t0: DateTime<Utc> = "2026-12-07T14:00:00Z".parse().unwrap();
        assert_eq!(
            at,
            vec![
                Some(t0),
                Some(t0 + Duration::minutes(10)),
                // Over the daily cap of 2: 24 h after the first.
                Some(t0 + Duration::hours(24)),
            ]
        );
    }

    /// Every email send instant of the simulation, sorted.
    fn simulated_sends(c: &nudge::engine::campaign::Campaign) -> Vec<DateTime<Utc>> {
        let mut out: Vec<DateTime<Utc>> = c
            .enrollments
            .iter()
            .flat_map(|e| e.runs.iter())
            .filter(|r| r.step_type == "email" && r.branch.as_deref() == Some("then"))
            .filter_map(|r| r.closed)
            .collect();
        out.sort();
        out
    }

    #[test]
    fn a_campaign_answers_per_enrollment_with_its_deferrals() {
        let s: Scenario = serde_json::from_value(scenario(8)).unwrap();
        let c = simulate_campaign(&flow(), &s).unwrap();
        assert_eq!(c.enrollments.len(), 8);
        assert_eq!(c.enrollments[3].contact, "c3");
        let sends = simulated_sends(&c);
        assert_eq!(sends.len(), 16, "two emails each");
        for (i, t) in sends.iter().enumerate() {
            let day = sends[..=i]
                .iter()
                .filter(|u| **u > *t - Duration::hours(24))
                .count();
            assert!(day <= 3, "{day} in the 24 h before {t}");
            if i > 0 {
                assert!(*t - sends[i - 1] >= Duration::minutes(10), "gap at {t}");
            }
        }
        let deferred: Vec<&str> = c
            .enrollments
            .iter()
            .flat_map(|e| e.runs.iter())
            .flat_map(|r| r.deferrals.iter())
            .filter_map(|d| match d.reason {
                Some(nudge::engine::simulate::DeferralReason::Cap(c)) => Some(c.as_str()),
                _ => None,
            })
            .collect();
        assert!(deferred.contains(&"CAP_DAILY"), "{deferred:?}");
        assert!(deferred.contains(&"CAP_GAP"), "{deferred:?}");
        let json = serde_json::to_value(&c).unwrap();
        assert!(json["enrollments"][7]["runs"][0]["deferrals"][0]["reason"].is_string());
        assert_eq!(c.per_day.values().sum::<usize>(), 16);
        let table = nudge::engine::campaign::render_campaign(&c);
        assert!(table.contains("day  sends"), "{table}");
    }

    async fn simulate_and_reality_agree(backend: Backend) {
        let app = spawn_app(backend).await;
        setup(&app, 8, FLOW).await;
        let mut caps = daily(3);
        caps.email.as_mut().unwrap().min_gap = "10m".into();
        upsert_sender(&app, "rep", Some(caps)).await.unwrap();
        enroll(&app, &(0..8).collect::<Vec<_>>(), "rep").await;
        let end = DateTime::parse_from_rfc3339("2026-12-20T00:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        advance(&app, end).await;
        let mut real: Vec<DateTime<Utc>> =
            dispatches(&app).await.into_iter().map(|d| d.2).collect();
        real.sort();

        // The same campaign through TimingService.Simulate.
        let answer = TimingServiceClient::new(app.channel().await)
            .simulate(app.authed(SimulateRequest {
                flow: Some(simulate_request::Flow::Definition(FLOW.into())),
                scenario: scenario(8).to_string(),
            }))
            .await
            .unwrap()
            .into_inner();
        let c: nudge::engine::campaign::Campaign = serde_json::from_str(&answer.timeline).unwrap();
        assert_eq!(simulated_sends(&c), real, "simulate and reality agree");
    }

    backend_tests!(simulate_and_reality_agree);
}

mod crash {
    //! SIGKILL between reservation and ack: the real binary (SQLite, manual clock) reserves two
    //! slots with their dispatches, a worker claims them, the server is killed before any ack,
    //! and restarted. The slots are neither lost nor counted twice: the ledger holds exactly
    //! the keys of the dispatches, the re-claimed dispatches ack once, and the deferred steps
    //! go when the two slots free, not earlier and not more.
    use crate::common::process::{connect, create_flow_and_contact, free_port, serve, NUDGE};
    use crate::common::with_token as authed;
    use nudge::proto::v1::dispatch_service_client::DispatchServiceClient;
    use nudge::proto::v1::enrollment_service_client::EnrollmentServiceClient;
    use nudge::proto::v1::sender_service_client::SenderServiceClient;
    use nudge::proto::v1::test_clock_service_client::TestClockServiceClient;
    use nudge::proto::v1::*;
    use std::process::Command;

    fn strings(db: &str, sql: &str) -> Vec<String> {
        use diesel::prelude::*;
        #[derive(QueryableByName)]
        struct S {
            #[diesel(sql_type = diesel::sql_types::Text)]
            s: String,
        }
        let mut conn = diesel::SqliteConnection::establish(db).unwrap();
        let mut v: Vec<String> = diesel::sql_query(sql)
            .load::<S>(&mut conn)
            .unwrap()
            .into_iter()
            .map(|r| r.s)
            .collect();
        v.sort();
        v
    }

    async fn advance(ch: &tonic::transport::Channel, token: &str, ms: i64) {
        TestClockServiceClient::new(ch.clone())
            .advance(authed(
                AdvanceRequest {
                    target: Some(advance_request::Target::ByMs(ms)),
                },
                token,
            ))
            .await
            .unwrap();
    }

    async fn advance_to(ch: &tonic::transport::Channel, token: &str, ms: i64) {
        TestClockServiceClient::new(ch.clone())
            .advance(authed(
                AdvanceRequest {
                    target: Some(advance_request::Target::To(prost_types::Timestamp {
                        seconds: ms.div_euclid(1_000),
                        nanos: (ms.rem_euclid(1_000) * 1_000_000) as i32,
                    })),
                },
                token,
            ))
            .await
            .unwrap();
    }

    async fn claim(ch: &tonic::transport::Channel, token: &str) -> Vec<Dispatch> {
        DispatchServiceClient::new(ch.clone())
            .claim_dispatches(authed(
                ClaimDispatchesRequest {
                    lease_ms: 60_000,
                    max_count: 100,
                    channels: vec![],
                },
                token,
            ))
            .await
            .unwrap()
            .into_inner()
            .dispatches
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sigkill_between_reservation_and_ack_neither_loses_nor_doubles_a_slot() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("nudge.db").to_string_lossy().into_owned();
        let ok = |args: &[&str]| {
            let out = Command::new(NUDGE).args(args).output().unwrap();
            assert!(out.status.success(), "{out:?}");
            String::from_utf8(out.stdout).unwrap().trim().to_string()
        };
        ok(&["migrate", "--database-url", &db]);
        let token = ok(&["token", "create", "--database-url", &db]);

        let port = free_port();
        let mut first = serve(&db, port);
        let ch = connect(port).await;
        create_flow_and_contact(&ch, &token, super::ONE).await;
        SenderServiceClient::new(ch.clone())
            .upsert_sender(authed(
                UpsertSenderRequest {
                    sender: Some(Sender {
                        id: "rep".into(),
                        tz: "UTC".into(),
                        caps: Some(super::daily(2)),
                        ..Default::default()
                    }),
                    make_default: false,
                },
                &token,
            ))
            .await
            .unwrap();
        let items = (0..5)
            .map(|i| EnrollRequest {
                contact_id: "c".into(),
                flow_id: "capped".into(),
                sender_id: "rep".into(),
                client_key: format!("k{i}"),
                allow_duplicate: true,
                ..Default::default()
            })
            .collect();
        EnrollmentServiceClient::new(ch.clone())
            .batch_enroll(authed(BatchEnrollRequest { items }, &token))
            .await
            .unwrap();
        advance(&ch, &token, 1).await;
        let claimed = claim(&ch, &token).await;
        assert_eq!(claimed.len(), 2, "two slots reserved with their dispatches");
        // Killed while both dispatches are claimed and unacked.
        first.kill().unwrap();
        first.wait().unwrap();

        let ledger = "SELECT key AS s FROM capacity_ledger";
        let keys = "SELECT idempotency_key AS s FROM dispatches";
        assert_eq!(strings(&db, ledger), strings(&db, keys));
        assert_eq!(strings(&db, ledger).len(), 2);

        let port = free_port();
        let mut second = serve(&db, port);
        let ch = connect(port).await;
        // The leases lapse; the worker claims both again (at-least-once) and acks them.
        advance(&ch, &token, 61_000).await;
        let again = claim(&ch, &token).await;
        assert_eq!(again.len(), 2);
        for d in &again {
            DispatchServiceClient::new(ch.clone())
                .ack_dispatch(authed(
                    AckDispatchRequest {
                        id: d.id.clone(),
                        lease_token: d.lease_token.clone(),
                        provider_message_id: format!("m-{}", d.id),
                        ..Default::default()
                    },
                    &token,
                ))
                .await
                .unwrap();
        }
        assert_eq!(strings(&db, ledger).len(), 2, "counted once");
        // Just before the slots free nothing more goes; at 24 h two more, one still waits. (The
        // restarted server's manual clock starts at the host's time again: aim at instants.)
        let sent_at: i64 = strings(
            &db,
            "SELECT CAST(MIN(created_at) AS TEXT) AS s FROM dispatches",
        )[0]
        .parse()
        .unwrap();
        advance_to(&ch, &token, sent_at + 24 * 3_600_000 - 1).await;
        assert_eq!(strings(&db, keys).len(), 2);
        advance_to(&ch, &token, sent_at + 24 * 3_600_000).await;
        assert_eq!(strings(&db, keys).len(), 4);
        assert_eq!(strings(&db, ledger), strings(&db, keys));
        second.kill().unwrap();
        second.wait().unwrap();
    }
}

/// One LinkedIn connection request, then the end.
const CONNECT: &str = r#"{
  "name": "capped",
  "start": "l1",
  "steps": {
    "l1": { "type": "linkedin_connect", "params": { "instructions": "connect" },
            "next": { "then": "done" } },
    "done": { "type": "end" }
  }
}"#;

/// With `caps.linkedin = {daily: 2, weekly: 5, min_gap: "10m"}`, two contacts enrolled
/// at the same instant get their `linkedin_connect` tasks 10 minutes apart, not both at once.
async fn a_linkedin_min_gap_is_kept_between_tasks(backend: Backend) {
    let app = spawn_app(backend).await;
    setup(&app, 3, CONNECT).await;
    let caps = SenderCaps {
        linkedin: Some(ChannelCaps {
            daily: Some(2),
            weekly: Some(5),
            min_gap: "10m".into(),
            ..Default::default()
        }),
        ..Default::default()
    };
    upsert_sender(&app, "rep", Some(caps)).await.unwrap();
    let t0 = app.clock.now();
    let ids = enroll(&app, &[0, 1, 2], "rep").await;
    let tasks = || async {
        let filter = nudge::store::tasks::ListFilter::default();
        let mut rows: Vec<(String, DateTime<Utc>)> =
            nudge::store::tasks::list(&app.state.core.db, DEFAULT_ACCOUNT_ID, &filter, 100)
                .await
                .unwrap()
                .into_iter()
                .map(|t| (t.enrollment_id, from_millis(t.created_at)))
                .collect();
        rows.sort_by_key(|(_, at)| *at);
        rows
    };
    advance(&app, t0).await;
    let now = tasks().await;
    assert_eq!(
        now.len(),
        1,
        "one task at once, the others wait for the gap: {now:?}"
    );
    assert_eq!(now[0].1, t0);
    advance(&app, t0 + Duration::minutes(10)).await;
    let later = tasks().await;
    assert_eq!(later.len(), 2, "{later:?}");
    assert_eq!(
        later[1].1,
        t0 + Duration::minutes(10),
        "the second 10 minutes after the first"
    );
    // The third is over the daily cap of 2: exactly 24 h after the first.
    advance(&app, t0 + Duration::hours(23)).await;
    assert_eq!(tasks().await.len(), 2);
    let third = ids
        .iter()
        .find(|id| !later.iter().any(|(e, _)| e == *id))
        .unwrap();
    let d = deferrals(&app, third).await;
    assert_eq!(d.last().unwrap()["cap"], "CAP_DAILY", "{d:?}");
    advance(&app, t0 + Duration::hours(24)).await;
    let all = tasks().await;
    assert_eq!(all.len(), 3, "{all:?}");
    assert_eq!(all[2].1, t0 + Duration::hours(24));
}
