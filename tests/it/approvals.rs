//! Approval links end to end (docs/flows.md, "approval"): a real nudge server, a real HTTP client (reqwest),
//! and a real headless browser. The link reaches the delivery side as a dispatch on channel
//! `approval`; opening it changes nothing; forged, altered, expired, reused and paused links
//! are refused with a page and nothing changed; bad input is a 422 naming the field;
//! `SignalService.Decide` is the same decision over gRPC.

use crate::common::{browser, detail_json, spawn_app, Backend, TestApp};
use nudge::proto::v1::dispatch_service_client::DispatchServiceClient;
use nudge::proto::v1::enrollment_service_client::EnrollmentServiceClient;
use nudge::proto::v1::signal_service_client::SignalServiceClient;
use nudge::proto::v1::test_clock_service_client::TestClockServiceClient;
use nudge::proto::v1::*;
use serde_json::{json, Value};
use tonic::Code;

backend_tests!(
    the_link_is_dispatched_and_opening_it_changes_nothing,
    refusals_change_nothing,
    a_decision_by_link_moves_the_enrollment_on_once,
    decide_over_grpc,
    a_real_browser_approves,
);

const FLOW: &str = r#"{"name": "approve", "start": "ask",
  "steps": {
    "ask": {"type": "approval",
            "params": {"title": "Send the <b>contract</b>?", "description": "Deal over 10k & rising",
                       "input": {"note": "string"}, "timeout": "3d", "link_ttl": "2d"},
            "next": {"approved": "yes", "rejected": "no", "timeout": "late"}},
    "yes": {"type": "end", "params": {"outcome": "approved"}},
    "no": {"type": "end", "params": {"outcome": "rejected"}},
    "late": {"type": "end", "params": {"outcome": "late"}}}}"#;

/// Creates the flow, a contact and an enrollment; returns the enrollment id and its link.
async fn enroll(app: &TestApp, contact: &str) -> (String, String) {
    app.flows()
        .await
        .create_flow(app.authed(CreateFlowRequest {
            definition: FLOW.into(),
        }))
        .await
        .unwrap();
    app.contacts()
        .await
        .upsert_contact(app.authed(UpsertContactRequest {
            contact: Some(Contact {
                id: contact.into(),
                email: format!("{contact}@example.com"),
                ..Default::default()
            }),
        }))
        .await
        .unwrap();
    let id = EnrollmentServiceClient::new(app.channel().await)
        .enroll(app.authed(EnrollRequest {
            contact_id: contact.into(),
            flow_id: "approve".into(),
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner()
        .enrollment
        .unwrap()
        .id;
    let dispatches = DispatchServiceClient::new(app.channel().await)
        .list_dispatches(app.authed(ListDispatchesRequest {
            enrollment_id: id.clone(),
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner()
        .dispatches;
    assert_eq!(dispatches.len(), 1, "{dispatches:?}");
    let d = &dispatches[0];
    assert_eq!(d.channel, "approval");
    let params: Value = serde_json::from_str(&d.channel_params).unwrap();
    assert_eq!(params["title"], "Send the <b>contract</b>?");
    assert_eq!(params["expires_at"], expiry());
    let path = params["path"].as_str().unwrap().to_string();
    assert!(path.starts_with("/approvals/"), "{path}");
    // The absolute link, as a person gets it (no --public-url: the address the server bound).
    let url = params["url"].as_str().unwrap().to_string();
    assert_eq!(url, format!("http://{}{path}", app.addr));
    (id, url)
}

/// The link's expiry: start + 2 days (`link_ttl`, shorter than the 3-day timeout).
fn expiry() -> String {
    let at = crate::common::start_instant() + chrono::Duration::days(2);
    nudge::engine::instant::format(at)
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

async fn journey_kinds(app: &TestApp, id: &str) -> Vec<(String, Value)> {
    EnrollmentServiceClient::new(app.channel().await)
        .get_journey(app.authed(GetJourneyRequest {
            enrollment_id: id.into(),
            page: None,
        }))
        .await
        .unwrap()
        .into_inner()
        .entries
        .iter()
        .map(|e| (e.kind.clone(), detail_json(e)))
        .collect()
}

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

async fn post(url: &str, form: &[(&str, &str)]) -> (u16, String) {
    let r = client().post(url).form(form).send().await.unwrap();
    (r.status().as_u16(), r.text().await.unwrap())
}

async fn get(url: &str) -> (u16, String) {
    let r = client().get(url).send().await.unwrap();
    (r.status().as_u16(), r.text().await.unwrap())
}

async fn the_link_is_dispatched_and_opening_it_changes_nothing(backend: Backend) {
    let app = spawn_app(backend).await;
    let (id, url) = enroll(&app, "ann").await;
    let token = url.rsplit('/').next().unwrap().to_string();
    let before = enrollment(&app, &id).await;
    let journey_before = journey_kinds(&app, &id).await;
    let r = client().get(&url).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let h = r.headers().clone();
    assert_eq!(h["cache-control"], "no-store");
    assert_eq!(h["referrer-policy"], "no-referrer");
    let csp = h["content-security-policy"].to_str().unwrap();
    assert!(
        csp.contains("default-src 'none'") && csp.contains("form-action 'self'"),
        "{csp}"
    );
    let html = r.text().await.unwrap();
    assert!(
        html.contains("Send the &lt;b&gt;contract&lt;/b&gt;?"),
        "escaped title: {html}"
    );
    assert!(html.contains("Deal over 10k &amp; rising"), "{html}");
    assert!(html.contains("ann@example.com") && html.contains("approve") && html.contains("ask"));
    assert!(html.contains(&expiry()), "the expiry is shown");
    assert!(
        html.contains("name=\"note\"")
            && html.contains("value=\"approved\"")
            && html.contains("value=\"rejected\"")
    );
    assert!(!html.contains("<script"), "works without JavaScript");
    assert!(!html.contains(&token), "the page never contains the token");
    let head = client().head(&url).send().await.unwrap();
    assert_eq!(head.status(), 200);
    assert_eq!(
        enrollment(&app, &id).await,
        before,
        "GET and HEAD change nothing"
    );
    let journey = journey_kinds(&app, &id).await;
    assert_eq!(journey, journey_before);
    let requested: Vec<&Value> = journey
        .iter()
        .filter(|(k, _)| k == "approval_requested")
        .map(|(_, d)| d)
        .collect();
    assert_eq!(requested.len(), 1);
    assert_eq!(requested[0]["expires_at"], expiry());
    assert!(
        !journey.iter().any(|(_, d)| d.to_string().contains(&token)),
        "no journey entry holds the token"
    );
    app.stop().await;
}

async fn refusals_change_nothing(backend: Backend) {
    let app = spawn_app(backend).await;
    let (id, url) = enroll(&app, "ann").await;
    let before = enrollment(&app, &id).await;
    // Forged and altered.
    let mut altered = url.clone();
    let last = altered.pop().unwrap();
    altered.push(if last == 'A' { 'B' } else { 'A' });
    let base = url.rsplit_once('/').unwrap().0.to_string();
    for bad in [
        altered.clone(),
        format!("{base}/made-up"),
        format!("{base}/x.y"),
    ] {
        let (status, html) = get(&bad).await;
        assert_eq!(status, 404, "{bad}");
        assert!(html.contains("not valid"), "{html}");
        assert_eq!(
            post(&bad, &[("decision", "approved"), ("note", "x")])
                .await
                .0,
            404
        );
    }
    // Bad input: the field is named, nothing decided.
    let (status, html) = post(&url, &[("decision", "approved")]).await;
    assert_eq!(status, 422);
    assert!(html.contains("note") && html.contains("missing"), "{html}");
    let (status, _) = post(&url, &[("decision", "maybe"), ("note", "x")]).await;
    assert_eq!(status, 422);
    // Paused: 409 for GET, HEAD and POST; the link works again after Resume.
    let mut e = EnrollmentServiceClient::new(app.channel().await);
    e.pause(app.authed(PauseRequest { id: id.clone() }))
        .await
        .unwrap();
    let (status, html) = get(&url).await;
    assert_eq!(status, 409);
    assert!(html.contains("paused"), "{html}");
    assert_eq!(client().head(&url).send().await.unwrap().status(), 409);
    assert_eq!(
        post(&url, &[("decision", "approved"), ("note", "x")])
            .await
            .0,
        409
    );
    e.resume(app.authed(ResumeRequest { id: id.clone() }))
        .await
        .unwrap();
    assert_eq!(get(&url).await.0, 200);
    let after = enrollment(&app, &id).await;
    assert_eq!(
        (after.status, after.current_step),
        (before.status.clone(), before.current_step.clone())
    );
    assert!(!journey_kinds(&app, &id)
        .await
        .iter()
        .any(|(k, _)| k == "decided"));
    // Rotating the server secret invalidates open links.
    nudge::store::link_secret::rotate(&app.state.core.db, 0)
        .await
        .unwrap();
    assert_eq!(
        get(&url).await.0,
        404,
        "a rotated secret invalidates the link"
    );
    app.stop().await;
}

async fn a_decision_by_link_moves_the_enrollment_on_once(backend: Backend) {
    let app = spawn_app(backend).await;
    let (id, url) = enroll(&app, "ann").await;
    let (status, html) = post(
        &url,
        &[
            ("decision", "approved"),
            ("note", "go <now>"),
            ("by", "boss@example.com"),
        ],
    )
    .await;
    assert_eq!(status, 200, "{html}");
    assert!(html.contains("Recorded"), "{html}");
    let e = enrollment(&app, &id).await;
    assert_eq!(
        (e.status.as_str(), e.outcome.as_str()),
        ("completed", "approved")
    );
    let journey = journey_kinds(&app, &id).await;
    let decided: Vec<&Value> = journey
        .iter()
        .filter(|(k, _)| k == "decided")
        .map(|(_, d)| d)
        .collect();
    assert_eq!(decided.len(), 1);
    assert_eq!(decided[0]["decision"], "approved");
    assert_eq!(decided[0]["input"], json!({"note": "go <now>"}));
    assert_eq!(decided[0]["by"], "boss@example.com");
    // Reused: 409, nothing changed.
    let (status, html) = post(&url, &[("decision", "rejected"), ("note", "x")]).await;
    assert_eq!(status, 409, "{html}");
    assert_eq!(get(&url).await.0, 409);
    assert_eq!(enrollment(&app, &id).await.outcome, "approved");

    // Expired: a second link, past its 2-day ttl (the 3-day timeout has not come yet).
    let (bob, bob_url) = enroll(&app, "bob").await;
    TestClockServiceClient::new(app.channel().await)
        .advance(app.authed(AdvanceRequest {
            target: Some(advance_request::Target::ByMs(2 * 86_400_000 + 1)),
        }))
        .await
        .unwrap();
    let (status, html) = get(&bob_url).await;
    assert_eq!(status, 410, "{html}");
    assert!(html.contains("expired"), "{html}");
    assert_eq!(
        post(&bob_url, &[("decision", "approved"), ("note", "x")])
            .await
            .0,
        410
    );
    assert_eq!(enrollment(&app, &bob).await.status, "active");
    app.stop().await;
}

async fn decide_over_grpc(backend: Backend) {
    let app = spawn_app(backend).await;
    let (id, url) = enroll(&app, "ann").await;
    let mut s = SignalServiceClient::new(app.channel().await);
    let bad = s
        .decide(app.authed(DecideRequest {
            enrollment_id: id.clone(),
            decision: "yes".into(),
            input: "[1]".into(),
            by: String::new(),
        }))
        .await
        .unwrap_err();
    assert_eq!(bad.code(), Code::InvalidArgument, "{bad:?}");
    let wrong_type = s
        .decide(app.authed(DecideRequest {
            enrollment_id: id.clone(),
            decision: "rejected".into(),
            input: r#"{"note": 5}"#.into(),
            by: String::new(),
        }))
        .await
        .unwrap_err();
    assert_eq!(wrong_type.code(), Code::InvalidArgument, "{wrong_type:?}");
    let e = s
        .decide(app.authed(DecideRequest {
            enrollment_id: id.clone(),
            decision: "rejected".into(),
            input: r#"{"note": "too expensive"}"#.into(),
            by: "crm-user-7".into(),
        }))
        .await
        .unwrap()
        .into_inner()
        .enrollment
        .unwrap();
    assert_eq!(e.outcome, "rejected");
    let again = s
        .decide(app.authed(DecideRequest {
            enrollment_id: id.clone(),
            decision: "approved".into(),
            input: r#"{"note": "x"}"#.into(),
            by: String::new(),
        }))
        .await
        .unwrap_err();
    assert_eq!(again.code(), Code::FailedPrecondition);
    assert_eq!(
        get(&url).await.0,
        409,
        "the link of a decided run is closed"
    );
    app.stop().await;
}

/// A real headless chromium opens the link, fills the form, clicks Approve, and the
/// enrollment moves on.
async fn a_real_browser_approves(backend: Backend) {
    let app = spawn_app(backend).await;
    let (id, url) = enroll(&app, "ann").await;
    let text = tokio::task::spawn_blocking(move || {
        let browser = browser::launch();
        let tab = browser.new_tab().unwrap();
        tab.navigate_to(&url)
            .unwrap()
            .wait_until_navigated()
            .unwrap();
        tab.wait_for_element("#f-note")
            .unwrap()
            .type_into("ship it")
            .unwrap();
        tab.wait_for_element("button[value=approved]")
            .unwrap()
            .click()
            .unwrap();
        let status = tab.wait_for_element("[role=status]").unwrap();
        let _ = tab
            .capture_screenshot(
                headless_chrome::protocol::cdp::Page::CaptureScreenshotFormatOption::Png,
                None,
                None,
                true,
            )
            .map(|png| std::fs::write(browser::screenshot_path("approval"), png));
        status.get_inner_text().unwrap()
    })
    .await
    .unwrap();
    assert!(text.contains("approved"), "{text}");
    let e = enrollment(&app, &id).await;
    assert_eq!(
        (e.status.as_str(), e.outcome.as_str()),
        ("completed", "approved")
    );
    let journey = journey_kinds(&app, &id).await;
    let decided = journey.iter().find(|(k, _)| k == "decided").unwrap();
    assert_eq!(decided.1["input"], json!({"note": "ship it"}));
    app.stop().await;
}
