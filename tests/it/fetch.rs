//! `fetch` end to end (docs/flows.md, "fetch"): a real nudge server calls a real local HTTP server (axum on
//! port 0). Slow past the timeout, 500 then 200 across retries (the backoff on the manual
//! clock), a redirect to a host off the list that must receive nothing, a name resolving to
//! 127.0.0.1 without `allow_private`, a 2 MB body; every attempt in the journey, the same
//! `Idempotency-Key` scheme, and the response readable by a later `branch`.

use crate::common::{detail_json, spawn_app, Backend, TestApp};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect};
use axum::routing::get;
use nudge::proto::v1::account_service_client::AccountServiceClient;
use nudge::proto::v1::enrollment_service_client::EnrollmentServiceClient;
use nudge::proto::v1::test_clock_service_client::TestClockServiceClient;
use nudge::proto::v1::*;
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};

backend_tests!(
    ok_then_branch_on_the_body,
    five_hundred_then_two_hundred_across_retries,
    slow_past_the_timeout_takes_timeout,
    redirect_off_the_list_reaches_nothing,
    a_name_resolving_to_loopback_is_refused_without_allow_private,
    a_two_megabyte_body_is_an_error,
);

/// What the peer saw: the path and `Idempotency-Key` of every request.
#[derive(Clone, Default)]
struct Seen(Arc<Mutex<Vec<(String, String)>>>);

impl Seen {
    fn record(&self, path: &str, headers: &HeaderMap) {
        let key = headers
            .get("idempotency-key")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string();
        self.0.lock().unwrap().push((path.to_string(), key));
    }
    fn all(&self) -> Vec<(String, String)> {
        self.0.lock().unwrap().clone()
    }
}

/// A peer on 127.0.0.1, port 0; `other` is where `/redirect` points.
async fn peer(seen: Seen, other: Option<u16>) -> u16 {
    let flaky = Arc::new(Mutex::new(0u32));
    let app = axum::Router::new()
        .route(
            "/ok",
            get(|State(s): State<Seen>, h: HeaderMap| async move {
                s.record("/ok", &h);
                axum::Json(json!({"stage": "won"}))
            }),
        )
        .route(
            "/flaky",
            get(move |State(s): State<Seen>, h: HeaderMap| {
                let flaky = flaky.clone();
                async move {
                    s.record("/flaky", &h);
                    let mut n = flaky.lock().unwrap();
                    *n += 1;
                    if *n == 1 {
                        (StatusCode::INTERNAL_SERVER_ERROR, "try later").into_response()
                    } else {
                        axum::Json(json!({"stage": "open"})).into_response()
                    }
                }
            }),
        )
        .route(
            "/slow",
            get(|State(s): State<Seen>, h: HeaderMap| async move {
                s.record("/slow", &h);
                // The peer never answers; nudge's budget (1s of real time) runs out.
                std::future::pending::<()>().await;
                "late"
            }),
        )
        .route(
            "/big",
            get(|State(s): State<Seen>, h: HeaderMap| async move {
                s.record("/big", &h);
                "x".repeat(2 * 1024 * 1024)
            }),
        )
        .route(
            "/redirect",
            get(move |State(s): State<Seen>, h: HeaderMap| async move {
                s.record("/redirect", &h);
                Redirect::temporary(&format!("http://127.0.0.1:{}/steal", other.unwrap_or(1)))
            }),
        )
        .route(
            "/steal",
            get(|State(s): State<Seen>, h: HeaderMap| async move {
                s.record("/steal", &h);
                "stolen"
            }),
        )
        .with_state(seen);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    port
}

async fn allow(app: &TestApp, entries: Vec<FetchAllow>) {
    AccountServiceClient::new(app.channel().await)
        .update_account(app.authed(UpdateAccountRequest {
            account: Some(Account {
                fetch_allow: entries,
                ..Default::default()
            }),
            update_mask: Some(prost_types::FieldMask {
                paths: vec!["fetch_allow".into()],
            }),
        }))
        .await
        .unwrap();
}

fn localhost(allow_private: bool) -> FetchAllow {
    FetchAllow {
        host: "localhost".into(),
        port: 0,
        allow_private,
    }
}

/// Creates the flow calling `url`, enrolls a contact, returns the enrollment id.
async fn enroll(app: &TestApp, url: &str, extra: Value) -> String {
    let mut params = json!({"url": url, "timeout": "1s"});
    params
        .as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    let flow = json!({"name": "f", "start": "deal", "steps": {
        "deal": {"type": "fetch", "params": params, "next": {"ok": "check", "error": "end_err", "timeout": "end_slow"}},
        "check": {"type": "branch", "params": {"cases": [{"name": "won", "when": {"eq": ["$: fetch.body.stage", "won"]}}]},
                  "next": {"won": "end_won", "else": "end_open"}},
        "end_won": {"type": "end", "params": {"outcome": "won"}},
        "end_open": {"type": "end", "params": {"outcome": "open"}},
        "end_err": {"type": "end", "params": {"outcome": "error"}},
        "end_slow": {"type": "end", "params": {"outcome": "slow"}}}});
    app.flows()
        .await
        .create_flow(app.authed(CreateFlowRequest {
            definition: flow.to_string(),
        }))
        .await
        .unwrap();
    app.contacts()
        .await
        .upsert_contact(app.authed(UpsertContactRequest {
            contact: Some(Contact {
                id: "ann".into(),
                email: "ann@example.com".into(),
                ..Default::default()
            }),
        }))
        .await
        .unwrap();
    EnrollmentServiceClient::new(app.channel().await)
        .enroll(app.authed(EnrollRequest {
            contact_id: "ann".into(),
            flow_id: "f".into(),
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner()
        .enrollment
        .unwrap()
        .id
}

async fn enrollment(app: &TestApp, id: &str) -> Enrollment {
    EnrollmentServiceClient::new(app.channel().await)
        .get_enrollment(app.authed(GetEnrollmentRequest { id: id.into() }))
        .await
        .unwrap()
        .into_inner()
        .enrollment
        .unwrap()
}

/// Waits (bounded) until `cond` holds for the enrollment.
async fn wait_for(
    app: &TestApp,
    id: &str,
    what: &str,
    cond: impl Fn(&Enrollment) -> bool,
) -> Enrollment {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let e = enrollment(app, id).await;
        if cond(&e) {
            return e;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting for {what}: {e:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

async fn finished(app: &TestApp, id: &str) -> Enrollment {
    wait_for(app, id, "the enrollment to finish", |e| {
        e.status == "completed"
    })
    .await
}

/// The `fetch_attempt` entries: (attempt, status, error).
async fn attempts(app: &TestApp, id: &str) -> Vec<Value> {
    app.journey(id)
        .await
        .iter()
        .filter(|e| e.kind == "fetch_attempt")
        .map(detail_json)
        .collect()
}

async fn ok_then_branch_on_the_body(backend: Backend) {
    let app = spawn_app(backend).await;
    let seen = Seen::default();
    let port = peer(seen.clone(), None).await;
    allow(&app, vec![localhost(true)]).await;
    let id = enroll(&app, &format!("http://localhost:{port}/ok"), json!({})).await;
    let e = finished(&app, &id).await;
    assert_eq!(e.outcome, "won", "branch read $: fetch.body.stage");
    assert_eq!(seen.all(), [("/ok".to_string(), format!("{id}:1:1"))]);
    let a = attempts(&app, &id).await;
    assert_eq!(a.len(), 1);
    assert_eq!(a[0]["status"], 200);
    app.stop().await;
}

async fn five_hundred_then_two_hundred_across_retries(backend: Backend) {
    let app = spawn_app(backend).await;
    let seen = Seen::default();
    let port = peer(seen.clone(), None).await;
    allow(&app, vec![localhost(true)]).await;
    let id = enroll(
        &app,
        &format!("http://localhost:{port}/flaky"),
        json!({"retry": {"attempts": 3, "backoff": "10s"}}),
    )
    .await;
    // The 500 is recorded, then the retry waits its backoff on nudge's (manual) clock.
    let waiting = wait_for(&app, &id, "the retry to be scheduled", |e| {
        e.next_run_at.is_some()
    })
    .await;
    assert_eq!(
        seen.all().len(),
        1,
        "nothing more is sent before the backoff passes"
    );
    let start = crate::common::start_instant().timestamp();
    let wait = waiting.next_run_at.unwrap().seconds - start;
    assert!(
        (5..=10).contains(&wait),
        "backoff 10s, jittered by half: {wait}"
    );
    TestClockServiceClient::new(app.channel().await)
        .advance(app.authed(AdvanceRequest {
            target: Some(advance_request::Target::ByMs(10_000)),
        }))
        .await
        .unwrap();
    let e = finished(&app, &id).await;
    assert_eq!(e.outcome, "open");
    assert_eq!(
        seen.all(),
        [
            ("/flaky".to_string(), format!("{id}:1:1")),
            ("/flaky".to_string(), format!("{id}:1:2"))
        ],
        "one Idempotency-Key per attempt"
    );
    let a = attempts(&app, &id).await;
    assert_eq!(
        a.iter()
            .map(|a| (a["attempt"].clone(), a["status"].clone()))
            .collect::<Vec<_>>(),
        [(json!(1), json!(500)), (json!(2), json!(200))]
    );
    app.stop().await;
}

async fn slow_past_the_timeout_takes_timeout(backend: Backend) {
    let app = spawn_app(backend).await;
    let seen = Seen::default();
    let port = peer(seen.clone(), None).await;
    allow(&app, vec![localhost(true)]).await;
    let id = enroll(&app, &format!("http://localhost:{port}/slow"), json!({})).await;
    let e = finished(&app, &id).await;
    assert_eq!(e.outcome, "slow");
    let a = attempts(&app, &id).await;
    assert_eq!(a.len(), 1);
    assert_eq!(a[0]["error"], "timeout");
    let ms = a[0]["ms"].as_u64().unwrap();
    assert!(
        (1000..5000).contains(&ms),
        "the 1s budget ended it: {ms} ms"
    );
    app.stop().await;
}

async fn redirect_off_the_list_reaches_nothing(backend: Backend) {
    let app = spawn_app(backend).await;
    let stolen = Seen::default();
    let off_list = peer(stolen.clone(), None).await;
    let seen = Seen::default();
    let port = peer(seen.clone(), Some(off_list)).await;
    // Only `localhost` is listed; the redirect goes to 127.0.0.1 (another name) on another port.
    allow(&app, vec![localhost(true)]).await;
    let id = enroll(
        &app,
        &format!("http://localhost:{port}/redirect"),
        json!({"retry": {"attempts": 3}}),
    )
    .await;
    let e = finished(&app, &id).await;
    assert_eq!(e.outcome, "error");
    assert!(
        stolen.all().is_empty(),
        "the off-list host received nothing"
    );
    assert_eq!(
        seen.all().len(),
        1,
        "a refused redirect is one attempt, not retried"
    );
    let a = attempts(&app, &id).await;
    assert!(
        a[0]["error"].as_str().unwrap().contains("redirect"),
        "{a:?}"
    );
    app.stop().await;
}

async fn a_name_resolving_to_loopback_is_refused_without_allow_private(backend: Backend) {
    let app = spawn_app(backend).await;
    let seen = Seen::default();
    let port = peer(seen.clone(), None).await;
    allow(&app, vec![localhost(false)]).await;
    let id = enroll(&app, &format!("http://localhost:{port}/ok"), json!({})).await;
    let e = finished(&app, &id).await;
    assert_eq!(e.outcome, "error");
    assert!(
        seen.all().is_empty(),
        "nothing was sent to the loopback address"
    );
    let a = attempts(&app, &id).await;
    let error = a[0]["error"].as_str().unwrap();
    assert!(
        error.contains("private") && error.contains("allow_private"),
        "{error}"
    );
    app.stop().await;
}

async fn a_two_megabyte_body_is_an_error(backend: Backend) {
    let app = spawn_app(backend).await;
    let seen = Seen::default();
    let port = peer(seen.clone(), None).await;
    allow(&app, vec![localhost(true)]).await;
    let id = enroll(&app, &format!("http://localhost:{port}/big"), json!({})).await;
    let e = finished(&app, &id).await;
    assert_eq!(e.outcome, "error");
    let a = attempts(&app, &id).await;
    assert!(
        a[0]["error"]
            .as_str()
            .unwrap()
            .contains("larger than the limit of 65536 bytes"),
        "{a:?}"
    );
    app.stop().await;
}
