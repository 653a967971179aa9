//! `GET /metrics` (docs/operations.md) read by a real Prometheus text parser (`prometheus-parse`): every
//! family with its type, the lateness buckets from 1 ms to a minute, and values that move
//! after work (an enrollment, a dispatch, a signal, a planner wake, requests). The gauges that
//! need counting come from the background refresher (run every 50 ms here), so the test waits
//! for them with a bounded deadline instead of sleeping.

use crate::common::{http, spawn_app_with, Backend, TestApp};
use crate::explain_api::sms_flow;
use nudge::proto::v1::enrollment_service_client::EnrollmentServiceClient;
use nudge::proto::v1::signal_service_client::SignalServiceClient;
use nudge::proto::v1::test_clock_service_client::TestClockServiceClient;
use nudge::proto::v1::*;
use prometheus_parse::{Scrape, Value};
use std::time::{Duration, Instant};

backend_tests!(
    metrics_parse_and_move_after_work,
    metrics_token_is_required_when_set,
    the_wait_census_walks_a_slice_per_refresh,
);

async fn fast_app(backend: Backend, token: Option<&str>) -> TestApp {
    let token = token.map(str::to_string);
    spawn_app_with(backend, move |c| {
        c.metrics_refresh = Duration::from_millis(50);
        c.metrics_token = token;
    })
    .await
}

async fn scrape(app: &TestApp) -> Scrape {
    let answer = http::get(app.addr, "/metrics", &[]).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert!(
        answer
            .header("content-type")
            .is_some_and(|t| t.starts_with("text/plain; version=0.0.4")),
        "{:?}",
        answer.headers
    );
    Scrape::parse(answer.body.lines().map(|l| Ok(l.to_string()))).expect("Prometheus text")
}

/// The value of the counter, gauge (or untyped) sample `name` with these labels.
fn value(s: &Scrape, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    s.samples
        .iter()
        .find(|x| x.metric == name && labels.iter().all(|(k, v)| x.labels.get(k) == Some(v)))
        .and_then(|x| match x.value {
            Value::Counter(v) | Value::Gauge(v) | Value::Untyped(v) => Some(v),
            _ => None,
        })
}

fn kind(s: &Scrape, name: &str) -> Option<&'static str> {
    s.samples
        .iter()
        .find(|x| x.metric == name)
        .map(|x| match x.value {
            Value::Counter(_) => "counter",
            Value::Gauge(_) => "gauge",
            Value::Histogram(_) => "histogram",
            Value::Summary(_) => "summary",
            Value::Untyped(_) => "untyped",
        })
}

/// Scrapes until `ok` holds (the refresher runs every 50 ms), at most 20 s.
async fn until(app: &TestApp, what: &str, ok: impl Fn(&Scrape) -> bool) -> Scrape {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let s = scrape(app).await;
        if ok(&s) {
            return s;
        }
        assert!(Instant::now() < deadline, "metrics never showed {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn metrics_parse_and_move_after_work(backend: Backend) {
    let app = fast_app(backend, None).await;
    // Before any work: the refresher's gauges are there with every label at 0.
    let s = until(&app, "the first refresh", |s| {
        value(s, "nudge_waiting_runs", &[("reason", "cap")]).is_some()
    })
    .await;
    for reason in [
        "timer",
        "signal",
        "window",
        "quiet_hours",
        "holiday",
        "cap",
        "held",
        "approval",
        "fetch",
        "paused",
    ] {
        assert_eq!(
            value(&s, "nudge_waiting_runs", &[("reason", reason)]),
            Some(0.0),
            "{reason}"
        );
    }
    assert_eq!(
        value(&s, "nudge_enrollments", &[("status", "active")]),
        Some(0.0)
    );
    assert_eq!(kind(&s, "nudge_enrollments"), Some("gauge"));
    assert_eq!(kind(&s, "nudge_dispatches_pending"), Some("gauge"));
    assert_eq!(
        kind(&s, "nudge_dispatch_oldest_pending_seconds"),
        Some("gauge")
    );
    assert_eq!(kind(&s, "nudge_db_connections"), Some("gauge"));
    assert!(value(&s, "nudge_db_connections", &[("state", "idle")]).is_some());

    // Work: one enrollment sends an SMS at once (the window is open) and waits for a reply;
    // a second one waits too, and will time out.
    sms_flow(&app).await;
    app.contacts()
        .await
        .upsert_contact(app.authed(UpsertContactRequest {
            contact: Some(Contact {
                id: "eve".into(),
                phone: "+13035550000".into(),
                tz: "America/Denver".into(),
                ..Default::default()
            }),
        }))
        .await
        .unwrap();
    let mut enrollments = EnrollmentServiceClient::new(app.channel().await);
    enrollments
        .enroll(app.authed(EnrollRequest {
            contact_id: "eve".into(),
            flow_id: "explain-sms".into(),
            ..Default::default()
        }))
        .await
        .unwrap();
    let refused = enrollments
        .explain(app.authed(ExplainRequest {
            id: "en_nosuch".into(),
        }))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), tonic::Code::NotFound);

    // The gauges are set one after another by the background refresh, so a scrape may fall
    // between two of them: wait for the refresh that has set all three.
    until(
        &app,
        "two waiting, active enrollments with two pending SMS",
        |s| {
            value(s, "nudge_waiting_runs", &[("reason", "signal")]) == Some(2.0)
                && value(s, "nudge_enrollments", &[("status", "active")]) == Some(2.0)
                && value(s, "nudge_dispatches_pending", &[("channel", "sms")]) == Some(2.0)
        },
    )
    .await;
    let s = until(&app, "the transitions counted", |s| {
        value(s, "nudge_transitions_total", &[("step_type", "wait_for")]) == Some(2.0)
    })
    .await;
    assert_eq!(kind(&s, "nudge_transitions_total"), Some("counter"));
    assert_eq!(
        value(&s, "nudge_transitions_total", &[("step_type", "sms")]),
        Some(2.0)
    );
    assert_eq!(
        value(&s, "nudge_transitions_total", &[("step_type", "wait_for")]),
        Some(2.0)
    );
    assert_eq!(kind(&s, "nudge_requests_total"), Some("counter"));
    let enroll = [
        ("interface", "grpc"),
        ("method", "/nudge.v1.EnrollmentService/Enroll"),
        ("code", "OK"),
    ];
    assert_eq!(value(&s, "nudge_requests_total", &enroll), Some(2.0));
    let not_found = [
        ("interface", "grpc"),
        ("method", "/nudge.v1.EnrollmentService/Explain"),
        ("code", "NOT_FOUND"),
    ];
    assert_eq!(value(&s, "nudge_requests_total", &not_found), Some(1.0));
    assert!(
        value(
            &s,
            "nudge_request_seconds_count",
            &[("method", "/nudge.v1.EnrollmentService/Enroll")]
        ) == Some(2.0)
    );
    let metrics_route = [
        ("interface", "http"),
        ("method", "GET /metrics"),
        ("code", "200"),
    ];
    assert!(value(&s, "nudge_requests_total", &metrics_route).is_some_and(|n| n >= 1.0));

    // A reply wakes the first; 90 s later the second's SMS has been pending for 90 s.
    SignalServiceClient::new(app.channel().await)
        .report_signal(app.authed(ReportSignalRequest {
            contact: "dee".into(),
            kind: "reply".into(),
            channel: "sms".into(),
            text: "yes, call me tomorrow at 10".into(),
            ..Default::default()
        }))
        .await
        .unwrap();
    let mut clock = TestClockServiceClient::new(app.channel().await);
    clock
        .advance(app.authed(AdvanceRequest {
            target: Some(advance_request::Target::ByMs(90_000)),
        }))
        .await
        .unwrap();
    let s = until(&app, "the reply and the pending age", |s| {
        value(s, "nudge_enrollments", &[("status", "completed")]) == Some(1.0)
            && value(
                s,
                "nudge_dispatch_oldest_pending_seconds",
                &[("channel", "sms")],
            ) == Some(90.0)
    })
    .await;
    assert_eq!(kind(&s, "nudge_signals_total"), Some("counter"));
    // The reply went through the router: one group of one signal.
    assert_eq!(kind(&s, "nudge_signal_group_size"), Some("histogram"));
    assert_eq!(value(&s, "nudge_signal_group_size_count", &[]), Some(1.0));
    assert_eq!(value(&s, "nudge_signal_group_size_sum", &[]), Some(1.0));
    assert_eq!(
        value(
            &s,
            "nudge_signals_total",
            &[("kind", "reply"), ("effect", "woke")]
        ),
        Some(1.0)
    );
    assert_eq!(
        value(&s, "nudge_waiting_runs", &[("reason", "signal")]),
        Some(1.0)
    );
    // The reply's words were read: counted by intent and channel.
    assert_eq!(kind(&s, "nudge_replies_total"), Some("counter"));
    assert_eq!(
        value(
            &s,
            "nudge_replies_total",
            &[("intent", "interested"), ("channel", "sms")]
        ),
        Some(1.0)
    );

    // Four days on, the second times out: a planner wake, with its lateness and batch time.
    clock
        .advance(app.authed(AdvanceRequest {
            target: Some(advance_request::Target::ByMs(4 * 86_400_000)),
        }))
        .await
        .unwrap();
    let s = scrape(&app).await;
    let lateness = s
        .samples
        .iter()
        .find(|x| x.metric == "nudge_timer_lateness_seconds")
        .expect("the lateness histogram");
    let Value::Histogram(buckets) = &lateness.value else {
        panic!(
            "nudge_timer_lateness_seconds is not a histogram: {:?}",
            lateness.value
        );
    };
    let bounds: Vec<f64> = buckets.iter().map(|b| b.less_than).collect();
    assert_eq!(bounds.first(), Some(&0.001), "{bounds:?}");
    assert!(
        bounds.contains(&65.536) && bounds.contains(&f64::INFINITY),
        "{bounds:?}"
    );
    // The manual clock wakes a timer exactly at its due time: lateness 0, in the first bucket.
    assert_eq!(buckets[0].count, 1.0, "{buckets:?}");
    assert_eq!(kind(&s, "nudge_planner_batch_seconds"), Some("histogram"));
    assert_eq!(
        value(&s, "nudge_planner_batch_seconds_count", &[]),
        Some(1.0)
    );
    assert_eq!(
        value(&s, "nudge_transitions_total", &[("step_type", "end")]),
        Some(2.0)
    );
    app.stop().await;
}

async fn metrics_token_is_required_when_set(backend: Backend) {
    let app = fast_app(backend, Some("s3cret-metrics")).await;
    let none = http::get(app.addr, "/metrics", &[]).await;
    assert_eq!(none.status, 401, "{}", none.body);
    assert!(!none.body.contains("nudge_"), "{}", none.body);
    let wrong = http::get(app.addr, "/metrics", &[("Authorization", "Bearer nope")]).await;
    assert_eq!(wrong.status, 401);
    // An API token is not the metrics token.
    let api = format!("Bearer {}", app.token);
    assert_eq!(
        http::get(app.addr, "/metrics", &[("Authorization", &api)])
            .await
            .status,
        401
    );
    let right = http::get(
        app.addr,
        "/metrics",
        &[("Authorization", "Bearer s3cret-metrics")],
    )
    .await;
    assert_eq!(right.status, 200);
    assert!(
        right.body.contains("nudge_db_connections"),
        "{}",
        right.body
    );
    app.stop().await;
}

/// The refresher's census of wait reasons reads at most its budget of pages per refresh and
/// goes on where it stopped; the counts are the last complete pass (before one, the counts so
/// far), so a huge table costs each refresh the same as a small one.
async fn the_wait_census_walks_a_slice_per_refresh(backend: Backend) {
    use nudge::engine::WaitReason;
    use nudge::runtime::metrics::{census_pace, count, Census, SCAN_BUDGET};
    use nudge::service::contacts::{self as contacts, ContactInput};
    use nudge::service::enrollments::{self, EnrollInput};
    use nudge::store::accounts::DEFAULT_ACCOUNT_ID;
    let app = crate::common::spawn_app(backend).await;
    let core = &app.state.core;
    let now = nudge::clock::Clock::now(core.clock.as_ref());
    let flow = r#"{"name": "hold", "start": "w", "steps": {
        "w": {"type": "wait", "params": {"duration": "1d"}, "next": {"then": "done"}},
        "done": {"type": "end"}}}"#;
    nudge::service::flows::create(core, DEFAULT_ACCOUNT_ID, flow, now)
        .await
        .unwrap();
    let contact = ContactInput {
        id: "c".into(),
        email: "c@example.com".into(),
        ..Default::default()
    };
    contacts::upsert(core, DEFAULT_ACCOUNT_ID, contact, now)
        .await
        .unwrap();
    let items = (0..2_500)
        .map(|_| EnrollInput {
            contact_id: "c".into(),
            flow_id: "hold".into(),
            allow_duplicate: true,
            ..Default::default()
        })
        .collect();
    let results = enrollments::batch_enroll(core, DEFAULT_ACCOUNT_ID, items)
        .await
        .unwrap();
    assert!(results.iter().all(|r| r.is_ok()));

    // One page (1,000) per refresh: 1,000, 2,000 counted so far, then the pass ends at 2,500,
    // and the next refresh, starting a new pass, still shows that pass.
    // Statuses are counted as each pass begins: one more enrollment after the third refresh
    // (which ended the pass) shows at the fourth, which begins the next.
    let mut census = Census::default();
    let (mut timers, mut active) = (Vec::new(), Vec::new());
    for refresh in 0..4 {
        if refresh == 3 {
            let one = EnrollInput {
                contact_id: "c".into(),
                flow_id: "hold".into(),
                allow_duplicate: true,
                ..Default::default()
            };
            let added = enrollments::batch_enroll(core, DEFAULT_ACCOUNT_ID, vec![one])
                .await
                .unwrap();
            assert!(added[0].is_ok());
        }
        let counts = count(core, &mut census, 1, Duration::ZERO).await.unwrap();
        timers.push(counts.waiting[&WaitReason::Timer]);
        active.push(counts.enrollments["active"]);
    }
    assert_eq!(timers, [1_000, 2_000, 2_500, 2_500]);
    assert_eq!(active, [2_500, 2_500, 2_500, 2_501]);
    // A whole pass in one refresh when the budget allows it.
    let mut census = Census::default();
    let counts = count(core, &mut census, 100, Duration::ZERO).await.unwrap();
    assert_eq!(counts.waiting[&WaitReason::Timer], 2_501);
    // Paced, the same pass pauses before each page after the first (three pages: two pauses),
    // and counts the same.
    let pace = Duration::from_millis(250);
    let started = Instant::now();
    let paced = count(core, &mut Census::default(), 100, pace)
        .await
        .unwrap();
    assert!(started.elapsed() >= 2 * pace, "{:?}", started.elapsed());
    assert_eq!(paced, counts);
    // The refresher's pace spreads a whole refresh over half its interval.
    let every = Duration::from_secs(15);
    assert_eq!(census_pace(every) * SCAN_BUDGET as u32, every / 2);
    app.stop().await;
}
