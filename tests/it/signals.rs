//! End-to-end tests of inbound signals (SPEC §5.2–§5.5, §7): the real server on port 0 with a
//! manual clock, flows with `wait_for` steps, signals through gRPC (`ReportSignal`,
//! `PostEvent`) and HTTP (`/events`, the webhooks, with real signatures), and what each
//! enrollment's state and journey say afterwards. Every test runs on SQLite and PostgreSQL.

use crate::common::{spawn_app, with_token, Backend, TestApp};
use chrono::Duration;
use nudge::auth::Scope;
use nudge::proto::v1::dispatch_service_client::DispatchServiceClient;
use nudge::proto::v1::enrollment_service_client::EnrollmentServiceClient;
use nudge::proto::v1::signal_service_client::SignalServiceClient;
use nudge::proto::v1::test_clock_service_client::TestClockServiceClient;
use nudge::proto::v1::*;
use nudge::signals::signing;
use serde_json::{json, Value};
use tonic::transport::Channel;
use tonic::Code;

backend_tests!(
    every_signal_kind_routes_by_the_rules,
    a_buffered_reply_is_consumed_by_the_second_wait,
    a_paused_enrollment_ignores_a_signal_but_an_opt_out_exits_it,
    a_signal_never_wakes_a_timed_wait,
    one_signal_reaches_every_enrollment_of_the_contact,
    a_duplicate_provider_id_changes_nothing,
    an_interrupted_fan_out_is_finished_by_the_retry,
    sms_stop_opts_out_and_exits_every_enrollment,
    email_reply_is_matched_to_its_thread,
    signed_webhooks_refuse_forged_stale_and_replayed_requests,
    twilio_signature_is_checked_against_the_public_url,
    calendar_event_books_a_meeting_for_attendees,
    events_over_http_follow_the_status_rules,
    post_event_over_grpc_needs_a_full_token,
    concurrent_signals_reach_each_enrollment_once,
    a_group_answers_like_signals_one_at_a_time,
    a_failing_group_routes_each_signal_alone,
);

/// Waits for one of several events; `meeting_booked` exits.
const ROUTING_FLOW: &str = r#"{
  "name": "routing",
  "start": "wait_1",
  "settings": { "exit_on": ["meeting_booked"] },
  "steps": {
    "wait_1": { "type": "wait_for",
                "params": { "events": ["reply", "reply:sms", "call_connected", "payment.received"], "timeout": "3d" },
                "next": { "reply": "end_reply", "reply:sms": "end_sms", "call_connected": "end_call",
                          "payment.received": "end_paid", "timeout": "end_timeout" } },
    "end_reply":   { "type": "end", "params": { "outcome": "reply" } },
    "end_sms":     { "type": "end", "params": { "outcome": "reply:sms" } },
    "end_call":    { "type": "end", "params": { "outcome": "call_connected" } },
    "end_paid":    { "type": "end", "params": { "outcome": "paid" } },
    "end_timeout": { "type": "end", "params": { "outcome": "timeout" } }
  }
}"#;

/// Two waits in a row: a reply during the first is kept for the second.
const TWO_WAITS_FLOW: &str = r#"{
  "name": "two-waits",
  "start": "wait_pay",
  "steps": {
    "wait_pay":   { "type": "wait_for", "params": { "events": ["payment.received"], "timeout": "1d" },
                    "next": { "payment.received": "wait_reply", "timeout": "wait_reply" } },
    "wait_reply": { "type": "wait_for", "params": { "events": ["reply"], "timeout": "1d" },
                    "next": { "reply": "end_replied", "timeout": "end_silent" } },
    "end_replied": { "type": "end", "params": { "outcome": "replied" } },
    "end_silent":  { "type": "end", "params": { "outcome": "silent" } }
  }
}"#;

/// A timed wait, then a wait for a reply.
const TIMED_FLOW: &str = r#"{
  "name": "timed",
  "start": "pause_2h",
  "steps": {
    "pause_2h":   { "type": "wait", "params": { "duration": "2h" }, "next": { "then": "wait_reply" } },
    "wait_reply": { "type": "wait_for", "params": { "events": ["reply"], "timeout": "1d" },
                    "next": { "reply": "end_replied", "timeout": "end_silent" } },
    "end_replied": { "type": "end", "params": { "outcome": "replied" } },
    "end_silent":  { "type": "end", "params": { "outcome": "silent" } }
  }
}"#;

/// An email, then a wait for an email reply.
const EMAIL_FLOW: &str = r#"{
  "name": "email-thread",
  "start": "email_1",
  "steps": {
    "email_1":    { "type": "email", "params": { "template": "intro" }, "next": { "then": "wait_reply" } },
    "wait_reply": { "type": "wait_for", "params": { "events": ["reply:email"], "timeout": "5d" },
                    "next": { "reply:email": "end_replied", "timeout": "end_silent" } },
    "end_replied": { "type": "end", "params": { "outcome": "replied" } },
    "end_silent":  { "type": "end", "params": { "outcome": "silent" } }
  }
}"#;

// ----- helpers ---------------------------------------------------------------------------------

/// Request headers, name and value.
type Headers<'a> = Vec<(&'a str, String)>;

/// Clients and the clock, beside `common`'s.
trait AppExt {
    async fn enrollments(&self) -> EnrollmentServiceClient<Channel>;
    async fn signals(&self) -> SignalServiceClient<Channel>;
    async fn dispatches(&self) -> DispatchServiceClient<Channel>;
    /// `TestClockService.Advance`: moves the manual clock, running what falls due on the way.
    async fn advance(&self, by: Duration);
    fn clock_now(&self) -> chrono::DateTime<chrono::Utc>;
}

impl AppExt for TestApp {
    async fn enrollments(&self) -> EnrollmentServiceClient<Channel> {
        EnrollmentServiceClient::new(self.channel().await)
    }

    async fn signals(&self) -> SignalServiceClient<Channel> {
        SignalServiceClient::new(self.channel().await)
    }

    async fn dispatches(&self) -> DispatchServiceClient<Channel> {
        DispatchServiceClient::new(self.channel().await)
    }

    async fn advance(&self, by: Duration) {
        TestClockServiceClient::new(self.channel().await)
            .advance(self.authed(AdvanceRequest {
                target: Some(advance_request::Target::ByMs(by.num_milliseconds())),
            }))
            .await
            .expect("the clock advances");
    }

    fn clock_now(&self) -> chrono::DateTime<chrono::Utc> {
        use nudge::clock::Clock;
        self.clock.now()
    }
}

async fn create_flow(app: &TestApp, definition: &str) -> String {
    let reply = app
        .flows()
        .await
        .create_flow(app.authed(CreateFlowRequest {
            definition: definition.into(),
        }))
        .await
        .expect("the flow is valid")
        .into_inner();
    reply.flow.expect("a flow").id
}

async fn contact(app: &TestApp, id: &str, email: &str, phone: &str) {
    app.contacts()
        .await
        .upsert_contact(app.authed(UpsertContactRequest {
            contact: Some(Contact {
                id: id.into(),
                email: email.into(),
                phone: phone.into(),
                ..Default::default()
            }),
        }))
        .await
        .expect("the contact is valid");
}

async fn enroll(app: &TestApp, contact_id: &str, flow_id: &str) -> String {
    let reply = app
        .enrollments()
        .await
        .enroll(app.authed(EnrollRequest {
            contact_id: contact_id.into(),
            flow_id: flow_id.into(),
            allow_duplicate: true,
            ..Default::default()
        }))
        .await
        .expect("enrolled")
        .into_inner();
    reply.enrollment.expect("an enrollment").id
}

async fn enrollment(app: &TestApp, id: &str) -> Enrollment {
    app.enrollments()
        .await
        .get_enrollment(app.authed(GetEnrollmentRequest { id: id.into() }))
        .await
        .expect("the enrollment exists")
        .into_inner()
        .enrollment
        .expect("an enrollment")
}

/// The journey as (kind, detail) pairs.
async fn journey(app: &TestApp, id: &str) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    let mut token = String::new();
    loop {
        let page = app
            .enrollments()
            .await
            .get_journey(app.authed(GetJourneyRequest {
                enrollment_id: id.into(),
                page: Some(PageRequest {
                    page_size: 500,
                    page_token: token.clone(),
                }),
            }))
            .await
            .expect("a journey")
            .into_inner();
        for e in page.entries {
            out.push((
                e.kind,
                serde_json::from_str(&e.detail).expect("JSON detail"),
            ));
        }
        if page.next_page_token.is_empty() {
            return out;
        }
        token = page.next_page_token;
    }
}

/// The journey's signal entries for `signal_id`: their `effect`s.
async fn signal_effects(app: &TestApp, enrollment_id: &str, signal_id: &str) -> Vec<String> {
    journey(app, enrollment_id)
        .await
        .into_iter()
        .filter(|(kind, d)| kind == "signal" && d["signal"] == signal_id)
        .map(|(_, d)| d["effect"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// The `run_closed` entry that a signal woke.
async fn closed_by(app: &TestApp, enrollment_id: &str, signal_id: &str) -> Option<Value> {
    journey(app, enrollment_id)
        .await
        .into_iter()
        .find(|(kind, d)| kind == "run_closed" && d["woken_by"] == signal_id)
        .map(|(_, d)| d)
}

async fn report(
    app: &TestApp,
    contact: &str,
    kind: &str,
    channel: &str,
    provider_id: &str,
) -> SignalReceipt {
    app.signals()
        .await
        .report_signal(app.authed(ReportSignalRequest {
            contact: contact.into(),
            kind: kind.into(),
            channel: channel.into(),
            provider_id: provider_id.into(),
        }))
        .await
        .unwrap_or_else(|e| panic!("{kind}/{channel}: {e:?}"))
        .into_inner()
}

async fn post_event(app: &TestApp, contact: &str, key: &str, payload: &str) -> SignalReceipt {
    app.signals()
        .await
        .post_event(app.authed(PostEventRequest {
            key: key.into(),
            contact: contact.into(),
            payload: payload.into(),
            provider_id: String::new(),
        }))
        .await
        .unwrap_or_else(|e| panic!("{key}: {e:?}"))
        .into_inner()
}

/// A minimal HTTP/1.1 client: the status and the body.
async fn http(app: &TestApp, path: &str, headers: &[(&str, String)], body: &[u8]) -> (u16, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(app.addr).await.unwrap();
    let mut request = format!(
        "POST {path} HTTP/1.1\r\nHost: nudge.test\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    // A server may answer (413) before reading the whole body and close: ignore write errors.
    let _ = stream.write_all(body).await;
    let mut out = Vec::new();
    let _ = stream.read_to_end(&mut out).await;
    let text = String::from_utf8_lossy(&out).to_string();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status in {text:?}"));
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (status, body)
}

fn json_body(body: &str) -> Value {
    serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}"))
}

async fn webhook_secret(app: &TestApp) -> String {
    nudge::store::signals::webhook_keys(&app.state.db, "default")
        .await
        .unwrap()
        .unwrap()
        .0
}

fn signed(secret: &str, t: i64, body: &[u8]) -> Vec<(&'static str, String)> {
    vec![
        ("Content-Type", "application/json".into()),
        ("X-Nudge-Signature", signing::sign(secret, t, body)),
    ]
}

async fn sms(app: &TestApp, from: &str, text: &str, sid: &str) -> (u16, String) {
    let params: Vec<(String, String)> = [
        ("From", from),
        ("To", "+18005551212"),
        ("Body", text),
        ("MessageSid", sid),
        ("AccountSid", "AC123"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let body = serde_urlencoded::to_string(&params).unwrap();
    let url = "http://nudge.test/webhooks/sms/twilio";
    let signature = signing::twilio_sign(TWILIO_TOKEN, url, &params);
    http(
        app,
        "/webhooks/sms/twilio",
        &[
            (
                "Content-Type",
                "application/x-www-form-urlencoded".to_string(),
            ),
            ("X-Twilio-Signature", signature),
        ],
        body.as_bytes(),
    )
    .await
}

const TWILIO_TOKEN: &str = "twilio-test-token";

async fn set_twilio_token(app: &TestApp) {
    assert!(nudge::store::signals::set_twilio_auth_token(
        &app.state.db,
        "default",
        Some(TWILIO_TOKEN)
    )
    .await
    .unwrap());
}

// ----- routing (SPEC §5.2, §5.3) ----------------------------------------------------------------

/// Every row of §5.2 through the service, against one `wait_for` listing `reply`, `reply:sms`,
/// `call_connected` and `payment.received`, with `exit_on: ["meeting_booked"]`.
async fn every_signal_kind_routes_by_the_rules(backend: Backend) {
    let app = spawn_app(backend).await;
    set_twilio_token(&app).await;
    let flow = create_flow(&app, ROUTING_FLOW).await;

    /// (name, how the signal arrives, expected status, outcome or reason, effect, branch)
    type Row<'a> = (&'a str, Via, &'a str, &'a str, &'a str, Option<&'a str>);
    enum Via {
        Report(&'static str, &'static str),
        Event(&'static str, &'static str),
        Sms(&'static str),
    }
    // (name, how the signal arrives, expected status, outcome or reason, effect, branch)
    let rows: Vec<Row> = vec![
        (
            "email reply: reply (reply:email not listed)",
            Via::Report("reply", "email"),
            "completed",
            "reply",
            "woke",
            Some("reply"),
        ),
        (
            "SMS reply: reply:sms beats reply",
            Via::Report("reply", "sms"),
            "completed",
            "reply:sms",
            "woke",
            Some("reply:sms"),
        ),
        (
            "LinkedIn reply: reply",
            Via::Report("reply", "linkedin"),
            "completed",
            "reply",
            "woke",
            Some("reply"),
        ),
        (
            "connected call: call_connected beats reply",
            Via::Report("call_connected", ""),
            "completed",
            "call_connected",
            "woke",
            Some("call_connected"),
        ),
        (
            "connection accepted: not listed, buffered",
            Via::Report("connection_accepted", ""),
            "active",
            "",
            "buffered",
            None,
        ),
        (
            "meeting booked: exit_on exits",
            Via::Report("meeting_booked", ""),
            "exited",
            "exit_on:meeting_booked",
            "exited",
            None,
        ),
        (
            "custom event listed",
            Via::Event("payment.received", r#"{"amount": 5}"#),
            "completed",
            "paid",
            "woke",
            Some("payment.received"),
        ),
        (
            "custom event not listed: buffered",
            Via::Event("payment.refunded", ""),
            "active",
            "",
            "buffered",
            None,
        ),
        (
            "email opt-out exits",
            Via::Report("opt_out", "email"),
            "exited",
            "opt_out:email",
            "exited",
            None,
        ),
        (
            "inbound SMS by webhook",
            Via::Sms("yes please"),
            "completed",
            "reply:sms",
            "woke",
            Some("reply:sms"),
        ),
        (
            "SMS STOP by webhook",
            Via::Sms(" Stop\n"),
            "exited",
            "opt_out:sms",
            "exited",
            None,
        ),
    ];
    for (i, (name, via, status, detail, effect, branch)) in rows.into_iter().enumerate() {
        let id = format!("c{i}");
        let phone = format!("+1212555{:04}", 1000 + i);
        contact(&app, &id, &format!("c{i}@example.com"), &phone).await;
        let enrollment_id = enroll(&app, &id, &flow).await;
        let signal_id = match via {
            Via::Report(kind, channel) => report(&app, &id, kind, channel, "").await.signal_id,
            Via::Event(key, payload) => post_event(&app, &id, key, payload).await.signal_id,
            Via::Sms(text) => {
                let (code, body) = sms(&app, &phone, text, &format!("SM{i}")).await;
                assert_eq!(code, 200, "{name}: {body}");
                assert!(body.contains("<Response/>"), "{name}: {body}");
                // The webhook answers TwiML; the signal id is in the journey.
                journey(&app, &enrollment_id)
                    .await
                    .into_iter()
                    .find(|(k, _)| k == "signal")
                    .map(|(_, d)| d["signal"].as_str().unwrap().to_string())
                    .unwrap_or_else(|| panic!("{name}: no signal in the journey"))
            }
        };
        let e = enrollment(&app, &enrollment_id).await;
        assert_eq!(e.status, status, "{name}");
        match status {
            "completed" => assert_eq!(e.outcome, detail, "{name}"),
            "exited" => assert_eq!(e.reason, detail, "{name}"),
            _ => assert_eq!(e.current_step, "wait_1", "{name}: still waiting"),
        }
        assert_eq!(
            signal_effects(&app, &enrollment_id, &signal_id).await,
            [effect],
            "{name}"
        );
        let closed = closed_by(&app, &enrollment_id, &signal_id).await;
        match (effect, branch) {
            ("woke", Some(b)) => assert_eq!(closed.unwrap()["branch"], b, "{name}"),
            ("exited", _) => assert_eq!(
                closed.unwrap()["branch"],
                "exit",
                "{name}: run closes on exit"
            ),
            _ => assert!(closed.is_none(), "{name}: {closed:?}"),
        }
        if name.contains("opt-out") || name.contains("STOP") {
            let c = app
                .contacts()
                .await
                .get_contact(app.authed(GetContactRequest { id: id.clone() }))
                .await
                .unwrap()
                .into_inner()
                .contact
                .unwrap();
            let channel = if name.contains("STOP") {
                "sms"
            } else {
                "email"
            };
            assert_eq!(c.opted_out, [channel], "{name}");
        }
    }
    app.stop().await;
}

async fn a_buffered_reply_is_consumed_by_the_second_wait(backend: Backend) {
    let app = spawn_app(backend).await;
    let flow = create_flow(&app, TWO_WAITS_FLOW).await;
    contact(&app, "ann", "ann@example.com", "").await;
    let id = enroll(&app, "ann", &flow).await;

    let reply = report(&app, "ann@example.com", "reply", "email", "").await;
    assert_eq!(reply.deliveries.len(), 1);
    assert_eq!(reply.deliveries[0].effect, "buffered");
    assert_eq!(enrollment(&app, &id).await.current_step, "wait_pay");

    let paid = post_event(&app, "ann", "payment.received", "null").await;
    assert_eq!(paid.deliveries[0].effect, "woke");
    assert_eq!(paid.deliveries[0].branch, "payment.received");
    let e = enrollment(&app, &id).await;
    assert_eq!(
        (e.status.as_str(), e.outcome.as_str()),
        ("completed", "replied")
    );
    // The second wait took the buffered reply when it was entered.
    assert_eq!(
        signal_effects(&app, &id, &reply.signal_id).await,
        ["buffered", "consumed"]
    );
    let closed = closed_by(&app, &id, &reply.signal_id).await.unwrap();
    assert_eq!(closed["step"], "wait_reply");
    assert_eq!(closed["branch"], "reply");
    // A null payload arrived as {}.
    let woke = closed_by(&app, &id, &paid.signal_id).await.unwrap();
    assert_eq!(woke["step"], "wait_pay");
    app.stop().await;
}

async fn a_paused_enrollment_ignores_a_signal_but_an_opt_out_exits_it(backend: Backend) {
    let app = spawn_app(backend).await;
    let flow = create_flow(&app, ROUTING_FLOW).await;
    contact(&app, "ann", "ann@example.com", "+12125550100").await;
    let id = enroll(&app, "ann", &flow).await;
    let mut enrollments = app.enrollments().await;
    enrollments
        .pause(app.authed(EnrollmentActionRequest { id: id.clone() }))
        .await
        .unwrap();

    let reply = report(&app, "ann", "reply", "sms", "").await;
    assert_eq!(reply.deliveries[0].effect, "ignored_paused");
    let e = enrollment(&app, &id).await;
    assert_eq!(
        (e.status.as_str(), e.current_step.as_str()),
        ("paused", "wait_1")
    );

    // Not buffered: after resume the wait still waits, and the old reply never wakes it.
    enrollments
        .resume(app.authed(EnrollmentActionRequest { id: id.clone() }))
        .await
        .unwrap();
    let e = enrollment(&app, &id).await;
    assert_eq!(
        (e.status.as_str(), e.current_step.as_str()),
        ("active", "wait_1")
    );

    // A meeting (exit_on) while paused is ignored too; an opt-out exits even a paused one.
    enrollments
        .pause(app.authed(EnrollmentActionRequest { id: id.clone() }))
        .await
        .unwrap();
    let booked = report(&app, "ann", "meeting_booked", "", "").await;
    assert_eq!(booked.deliveries[0].effect, "ignored_paused");
    let out = report(&app, "+1 212 555 0100", "opt_out", "sms", "").await;
    assert_eq!(out.deliveries[0].effect, "exited");
    let e = enrollment(&app, &id).await;
    assert_eq!(
        (e.status.as_str(), e.reason.as_str()),
        ("exited", "opt_out:sms")
    );
    app.stop().await;
}

async fn a_signal_never_wakes_a_timed_wait(backend: Backend) {
    let app = spawn_app(backend).await;
    let flow = create_flow(&app, TIMED_FLOW).await;
    contact(&app, "ann", "ann@example.com", "").await;
    let id = enroll(&app, "ann", &flow).await;
    let reply = report(&app, "ann", "reply", "email", "").await;
    assert_eq!(reply.deliveries[0].effect, "buffered");
    let e = enrollment(&app, &id).await;
    assert_eq!(
        (e.status.as_str(), e.current_step.as_str()),
        ("active", "pause_2h")
    );
    // When the wait ends, the next wait_for takes the kept reply at once.
    app.advance(Duration::hours(2)).await;
    let e = enrollment(&app, &id).await;
    assert_eq!(
        (e.status.as_str(), e.outcome.as_str()),
        ("completed", "replied")
    );
    assert_eq!(
        signal_effects(&app, &id, &reply.signal_id).await,
        ["buffered", "consumed"]
    );
    app.stop().await;
}

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
    let Inserted::New { reach, .. } = insert(&app.state.db, &row, None).await.unwrap() else {
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

async fn sms_stop_opts_out_and_exits_every_enrollment(backend: Backend) {
    let app = spawn_app(backend).await;
    set_twilio_token(&app).await;
    let routing = create_flow(&app, ROUTING_FLOW).await;
    let timed = create_flow(&app, TIMED_FLOW).await;
    // Two records share the number: a STOP blocks SMS to both.
    contact(&app, "ann", "ann@example.com", "+12125550100").await;
    contact(&app, "ann-dup", "", "+1 212 555 0100").await;
    let e1 = enroll(&app, "ann", &routing).await;
    let e2 = enroll(&app, "ann", &timed).await;
    let e3 = enroll(&app, "ann-dup", &routing).await;
    // A NUL in a form field (here the id that deduplicates): 422 naming it, nothing changed.
    let (code, body) = sms(&app, "+12125550100", "STOP", "SM\0stop").await;
    assert_eq!(code, 422, "{body}");
    assert!(body.contains("MessageSid"), "{body}");
    assert_eq!(enrollment(&app, &e1).await.status, "active");
    let (code, body) = sms(&app, "+12125550100", "STOP", "SM-stop").await;
    assert_eq!(code, 200, "{body}");
    for id in [&e1, &e2, &e3] {
        let e = enrollment(&app, id).await;
        assert_eq!(
            (e.status.as_str(), e.reason.as_str()),
            ("exited", "opt_out:sms"),
            "{id}"
        );
    }
    for id in ["ann", "ann-dup"] {
        let c = app
            .contacts()
            .await
            .get_contact(app.authed(GetContactRequest { id: id.into() }))
            .await
            .unwrap()
            .into_inner()
            .contact
            .unwrap();
        assert_eq!(c.opted_out, ["sms"], "{id}");
    }
    // The same message again (Twilio retries): nothing changes.
    let before = journey(&app, &e1).await;
    let (code, _) = sms(&app, "+12125550100", "STOP", "SM-stop").await;
    assert_eq!(code, 200);
    assert_eq!(journey(&app, &e1).await, before);
    // An unknown number is 404 and stores nothing.
    let (code, body) = sms(&app, "+12125550199", "hi", "SM-x").await;
    assert_eq!(code, 404, "{body}");
    app.stop().await;
}

async fn email_reply_is_matched_to_its_thread(backend: Backend) {
    let app = spawn_app(backend).await;
    let flow = create_flow(&app, EMAIL_FLOW).await;
    contact(&app, "ann", "ann@example.com", "").await;
    let id = enroll(&app, "ann", &flow).await;
    app.advance(Duration::seconds(1)).await;
    let claimed = app
        .dispatches()
        .await
        .claim_dispatches(app.authed(ClaimDispatchesRequest {
            lease_ms: 60_000,
            max_count: 10,
        }))
        .await
        .unwrap()
        .into_inner()
        .dispatches;
    let dispatch = claimed
        .iter()
        .find(|d| d.enrollment_id == id)
        .expect("the email was dispatched");
    assert!(!dispatch.message_id.is_empty());
    assert_eq!(enrollment(&app, &id).await.current_step, "wait_reply");

    let secret = webhook_secret(&app).await;
    let now = app.clock_now().timestamp();
    // Mail in no nudge thread: 202, ignored, nothing stored.
    let stray = json!({"headers": {"Message-ID": "<x1@mail>", "In-Reply-To": "<other@gmail.com>"},
                       "from": "ann@example.com", "subject": "hello"})
    .to_string();
    let (code, body) = http(
        &app,
        "/webhooks/email",
        &signed(&secret, now, stray.as_bytes()),
        stray.as_bytes(),
    )
    .await;
    assert_eq!(code, 202, "{body}");
    assert_eq!(json_body(&body)["status"], "ignored");
    assert_eq!(enrollment(&app, &id).await.current_step, "wait_reply");

    // A NUL in a header (it would become the provider id): 422 naming it, nothing stored.
    let nul =
        json!({"headers": {"Message-ID": "<r0\u{0}@mail>", "In-Reply-To": dispatch.message_id},
                     "from": "ann@example.com", "subject": "hi"})
        .to_string();
    let (code, body) = http(
        &app,
        "/webhooks/email",
        &signed(&secret, now, nul.as_bytes()),
        nul.as_bytes(),
    )
    .await;
    assert_eq!(code, 422, "{body}");
    assert!(body.contains("/headers/Message-ID"), "{body}");
    assert_eq!(enrollment(&app, &id).await.current_step, "wait_reply");

    // A reply that names the thread in References only (folded, with another id first).
    let reply = json!({
        "headers": {"message-id": "<r1@mail.example.com>",
                    "References": format!("<older@x>\r\n {}", dispatch.message_id)},
        "from": "Ann <ann@example.com>", "to": "rep@acme.com",
        "subject": "Re: intro", "text": "Sounds good"})
    .to_string();
    let (code, body) = http(
        &app,
        "/webhooks/email",
        &signed(&secret, now, reply.as_bytes()),
        reply.as_bytes(),
    )
    .await;
    assert_eq!(code, 200, "{body}");
    let receipt = json_body(&body);
    assert_eq!(receipt["deliveries"][0]["effect"], "woke");
    assert_eq!(receipt["deliveries"][0]["branch"], "reply:email");
    let e = enrollment(&app, &id).await;
    assert_eq!(
        (e.status.as_str(), e.outcome.as_str()),
        ("completed", "replied")
    );
    app.stop().await;
}

async fn signed_webhooks_refuse_forged_stale_and_replayed_requests(backend: Backend) {
    let app = spawn_app(backend).await;
    let flow = create_flow(&app, ROUTING_FLOW).await;
    contact(&app, "ann", "ann@example.com", "").await;
    let id = enroll(&app, "ann", &flow).await;
    app.senders()
        .await
        .upsert_sender(app.authed(UpsertSenderRequest {
            sender: Some(Sender {
                id: "rep".into(),
                email: "rep@acme.com".into(),
                tz: "UTC".into(),
                calendar: "rep@acme.com".into(),
                ..Default::default()
            }),
            make_default: false,
        }))
        .await
        .unwrap();
    let secret = webhook_secret(&app).await;
    let now = app.clock_now().timestamp();
    let event = |id: &str| {
        json!({"id": id, "organizer": "rep@acme.com", "attendees": ["ann@example.com"],
               "start": "2026-12-10T15:00:00Z"})
        .to_string()
    };
    let path = "/webhooks/calendar";
    let body = event("evt-1");
    let b = body.as_bytes();
    let refusals: Vec<(&str, Headers, &[u8], u16, &str)> = vec![
        ("no signature", vec![], b, 401, "X-Nudge-Signature"),
        (
            "forged",
            signed("not-the-secret", now, b),
            b,
            401,
            "does not match",
        ),
        (
            "altered body",
            signed(&secret, now, b),
            br#"{"id":"evt-1"}"#,
            401,
            "does not match",
        ),
        (
            "5 min 1 s old",
            signed(&secret, now - 301, b),
            b,
            401,
            "301s away",
        ),
        (
            "malformed",
            vec![("X-Nudge-Signature", "sha256=abc".into())],
            b,
            401,
            "malformed",
        ),
        (
            "bad JSON, signed",
            signed(&secret, now, b"{nope"),
            b"{nope",
            422,
            "does not parse",
        ),
        (
            "missing fields, signed",
            signed(&secret, now, b"{}"),
            b"{}",
            422,
            "does not parse",
        ),
    ];
    for (name, headers, body, status, hint) in refusals {
        let (code, text) = http(&app, path, &headers, body).await;
        assert_eq!(code, status, "{name}: {text}");
        assert!(
            json_body(&text)["error"]["message"]
                .as_str()
                .unwrap()
                .contains(hint),
            "{name}: {text}"
        );
    }
    assert_eq!(
        enrollment(&app, &id).await.status,
        "active",
        "nothing was stored"
    );
    assert!(journey(&app, &id).await.iter().all(|(k, _)| k != "signal"));

    // Exactly 5 minutes old is still accepted.
    let headers = signed(&secret, now - 300, b);
    let (code, text) = http(&app, path, &headers, b).await;
    assert_eq!(code, 200, "{text}");
    assert_eq!(json_body(&text)["deliveries"][0]["effect"], "exited");
    assert_eq!(enrollment(&app, &id).await.reason, "exit_on:meeting_booked");
    // The same request again is a replay.
    let (code, text) = http(&app, path, &headers, b).await;
    assert_eq!(code, 401, "{text}");
    assert!(text.contains("already used"), "{text}");
    // Signed anew, the same event id is a duplicate: the first result, nothing changes.
    let (code, text) = http(&app, path, &signed(&secret, now + 1, b), b).await;
    assert_eq!(code, 200, "{text}");
    assert_eq!(json_body(&text)["duplicate"], true);

    // The server's (manual) clock decides what is stale.
    app.clock.advance(Duration::minutes(6));
    let fresh = event("evt-2");
    let (code, text) = http(
        &app,
        path,
        &signed(&secret, now, fresh.as_bytes()),
        fresh.as_bytes(),
    )
    .await;
    assert_eq!(code, 401, "{text}");
    app.stop().await;
}

async fn twilio_signature_is_checked_against_the_public_url(backend: Backend) {
    let app = spawn_app(backend).await;
    contact(&app, "ann", "", "+12125550100").await;
    // No auth token set: refused.
    let (code, text) = sms(&app, "+12125550100", "hi", "SM1").await;
    assert_eq!(code, 401, "{text}");
    assert!(text.contains("twilio-token set"), "{text}");
    set_twilio_token(&app).await;
    let (code, text) = sms(&app, "+12125550100", "hi", "SM1").await;
    assert_eq!(code, 200, "{text}");

    let params = vec![
        ("From".to_string(), "+12125550100".to_string()),
        ("Body".to_string(), "hello".to_string()),
        ("MessageSid".to_string(), "SM2".to_string()),
    ];
    let body = serde_urlencoded::to_string(&params).unwrap();
    let form = (
        "Content-Type",
        "application/x-www-form-urlencoded".to_string(),
    );
    let cases: Vec<(&str, Headers, u16)> = vec![
        ("no signature", vec![form.clone()], 401),
        (
            "signed for another URL",
            vec![
                form.clone(),
                (
                    "X-Twilio-Signature",
                    signing::twilio_sign(
                        TWILIO_TOKEN,
                        "https://elsewhere/webhooks/sms/twilio",
                        &params,
                    ),
                ),
            ],
            401,
        ),
        (
            "signed with another token",
            vec![
                form.clone(),
                (
                    "X-Twilio-Signature",
                    signing::twilio_sign("other", "http://nudge.test/webhooks/sms/twilio", &params),
                ),
            ],
            401,
        ),
        // Behind a proxy: the URL Twilio called is rebuilt from X-Forwarded-*.
        (
            "forwarded https",
            vec![
                form.clone(),
                ("X-Forwarded-Proto", "https".into()),
                ("X-Forwarded-Host", "nudge.example.com".into()),
                (
                    "X-Twilio-Signature",
                    signing::twilio_sign(
                        TWILIO_TOKEN,
                        "https://nudge.example.com/webhooks/sms/twilio",
                        &params,
                    ),
                ),
            ],
            200,
        ),
    ];
    for (name, headers, status) in cases {
        let (code, text) = http(&app, "/webhooks/sms/twilio", &headers, body.as_bytes()).await;
        assert_eq!(code, status, "{name}: {text}");
    }
    // A correctly signed form without `From` (or with a number that is not E.164) does not
    // parse into an SMS.
    for from in [None, Some("12125550100")] {
        let mut params = vec![("Body".to_string(), "hi".to_string())];
        if let Some(f) = from {
            params.push(("From".to_string(), f.to_string()));
        }
        let body = serde_urlencoded::to_string(&params).unwrap();
        let sig = signing::twilio_sign(
            TWILIO_TOKEN,
            "http://nudge.test/webhooks/sms/twilio",
            &params,
        );
        let headers = [form.clone(), ("X-Twilio-Signature", sig)];
        let (code, text) = http(&app, "/webhooks/sms/twilio", &headers, body.as_bytes()).await;
        assert_eq!(code, 422, "{from:?}: {text}");
    }
    app.stop().await;
}

async fn calendar_event_books_a_meeting_for_attendees(backend: Backend) {
    let app = spawn_app(backend).await;
    let flow = create_flow(&app, ROUTING_FLOW).await;
    contact(&app, "ann", "ann@example.com", "").await;
    contact(&app, "bob", "BOB@example.com", "").await;
    contact(&app, "cat", "cat@example.com", "").await;
    let ann = enroll(&app, "ann", &flow).await;
    let bob = enroll(&app, "bob", &flow).await;
    let cat = enroll(&app, "cat", &flow).await;
    app.senders()
        .await
        .upsert_sender(app.authed(UpsertSenderRequest {
            sender: Some(Sender {
                id: "rep".into(),
                email: "rep@acme.com".into(),
                tz: "UTC".into(),
                calendar: "cal-rep@acme.com".into(),
                ..Default::default()
            }),
            make_default: false,
        }))
        .await
        .unwrap();
    let secret = webhook_secret(&app).await;
    let now = app.clock_now().timestamp();
    let send = |body: String| {
        let headers = signed(&secret, now, body.as_bytes());
        let app = &app;
        async move { http(app, "/webhooks/calendar", &headers, body.as_bytes()).await }
    };
    // Not a sender's calendar (the sender's email is not its calendar): 404.
    let (code, text) = send(json!({"id": "e0", "organizer": "rep@acme.com", "attendees": ["ann@example.com"], "start": "2026-12-10T15:00:00Z"}).to_string()).await;
    assert_eq!(code, 404, "{text}");
    // No attendee is a contact: 404.
    let (code, text) = send(json!({"id": "e1", "organizer": "cal-rep@acme.com", "attendees": ["x@y.com"], "start": "2026-12-10T15:00:00Z"}).to_string()).await;
    assert_eq!(code, 404, "{text}");
    // Two attendees are contacts (one as an object, in another case).
    let (code, text) = send(json!({"id": "e2", "organizer": {"email": "CAL-rep@acme.com"},
        "attendees": ["cal-rep@acme.com", "ann@example.com", {"email": "bob@EXAMPLE.com"}, "stranger@z.com"],
        "start": "2026-12-10T15:00:00+01:00"}).to_string()).await;
    assert_eq!(code, 200, "{text}");
    assert_eq!(json_body(&text)["deliveries"].as_array().unwrap().len(), 2);
    for id in [&ann, &bob] {
        let e = enrollment(&app, id).await;
        assert_eq!(
            (e.status.as_str(), e.reason.as_str()),
            ("exited", "exit_on:meeting_booked")
        );
    }
    assert_eq!(enrollment(&app, &cat).await.status, "active");
    app.stop().await;
}

async fn events_over_http_follow_the_status_rules(backend: Backend) {
    let app = spawn_app(backend).await;
    let flow = create_flow(&app, ROUTING_FLOW).await;
    contact(&app, "ann", "ann@example.com", "+12125550100").await;
    let id = enroll(&app, "ann", &flow).await;
    let bearer = |t: &str| ("Authorization", format!("Bearer {t}"));
    let enrollment_token = app.token(Scope::Enrollment(id.clone())).await;
    let full = bearer(&app.token);
    let big = format!("{{\"x\": \"{}\"}}", "a".repeat(65 * 1024));
    let cases: Vec<(&str, String, Headers, Vec<u8>, u16)> = vec![
        (
            "no token",
            "/events/payment.received?contact=ann".into(),
            vec![],
            b"{}".to_vec(),
            401,
        ),
        (
            "bad token",
            "/events/payment.received?contact=ann".into(),
            vec![bearer("nudge_nope")],
            b"{}".to_vec(),
            401,
        ),
        (
            "enrollment token",
            "/events/payment.received?contact=ann".into(),
            vec![bearer(&enrollment_token)],
            b"{}".to_vec(),
            403,
        ),
        (
            "65 KiB",
            "/events/payment.received?contact=ann".into(),
            vec![full.clone()],
            big.into_bytes(),
            413,
        ),
        (
            "bad JSON",
            "/events/payment.received?contact=ann".into(),
            vec![full.clone()],
            b"{\"amount\": }".to_vec(),
            422,
        ),
        (
            "unknown contact",
            "/events/payment.received?contact=nobody".into(),
            vec![full.clone()],
            b"{}".to_vec(),
            404,
        ),
        (
            "unknown phone",
            "/events/payment.received?contact=%2B12125559999".into(),
            vec![full.clone()],
            b"{}".to_vec(),
            404,
        ),
        (
            "no contact",
            "/events/payment.received".into(),
            vec![full.clone()],
            b"{}".to_vec(),
            400,
        ),
        (
            "built-in key",
            "/events/reply?contact=ann".into(),
            vec![full.clone()],
            b"{}".to_vec(),
            400,
        ),
    ];
    for (name, path, headers, body, status) in cases {
        let (code, text) = http(&app, &path, &headers, &body).await;
        assert_eq!(code, status, "{name}: {text}");
        assert!(
            json_body(&text)["error"]["message"].is_string(),
            "{name}: {text}"
        );
    }
    let e = enrollment(&app, &id).await;
    assert_eq!(e.status, "active", "nothing was stored by a refusal");
    assert!(journey(&app, &id).await.iter().all(|(k, _)| k != "signal"));

    // An unlisted key with an empty body is buffered with {}; then the listed one wakes the
    // wait (the contact named by its phone number), with its payload; a retry with the same
    // Idempotency-Key is a duplicate.
    let (code, text) = http(
        &app,
        "/events/payment.pending?contact=ann@example.com",
        std::slice::from_ref(&full),
        b"",
    )
    .await;
    assert_eq!(code, 200, "{text}");
    assert_eq!(json_body(&text)["deliveries"][0]["effect"], "buffered");
    let signal = json_body(&text)["signal_id"].as_str().unwrap().to_string();
    let buffered = journey(&app, &id).await;
    assert!(buffered
        .iter()
        .any(|(k, d)| k == "signal" && d["signal"] == signal.as_str()));
    let headers = vec![full.clone(), ("Idempotency-Key", "pay-1".to_string())];
    let (code, text) = http(
        &app,
        "/events/payment.received?contact=%2B12125550100",
        &headers,
        br#"{"amount": 42}"#,
    )
    .await;
    assert_eq!(code, 200, "{text}");
    let first = json_body(&text);
    assert_eq!(first["deliveries"][0]["branch"], "payment.received");
    let e = enrollment(&app, &id).await;
    assert_eq!(
        (e.status.as_str(), e.outcome.as_str()),
        ("completed", "paid")
    );
    let (code, text) = http(
        &app,
        "/events/payment.received?contact=ann",
        &headers,
        br#"{"amount": 42}"#,
    )
    .await;
    assert_eq!(code, 200, "{text}");
    let second = json_body(&text);
    assert_eq!(second["duplicate"], true);
    assert_eq!(second["signal_id"], first["signal_id"]);
    app.stop().await;
}

async fn post_event_over_grpc_needs_a_full_token(backend: Backend) {
    let app = spawn_app(backend).await;
    let flow = create_flow(&app, ROUTING_FLOW).await;
    contact(&app, "ann", "ann@example.com", "").await;
    let id = enroll(&app, "ann", &flow).await;
    let scoped = app.token(Scope::Enrollment(id.clone())).await;
    let request = || PostEventRequest {
        key: "payment.received".into(),
        contact: "ann".into(),
        payload: String::new(),
        provider_id: String::new(),
    };
    let e = app
        .signals()
        .await
        .post_event(with_token(request(), &scoped))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::PermissionDenied, "{e:?}");
    let big = PostEventRequest {
        payload: format!("\"{}\"", "x".repeat(64 * 1024)),
        ..request()
    };
    let e = app
        .signals()
        .await
        .post_event(app.authed(big))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument, "{e:?}");
    assert!(e.message().contains("64 KiB"), "{}", e.message());
    let bad = PostEventRequest {
        payload: "{".into(),
        ..request()
    };
    let e = app
        .signals()
        .await
        .post_event(app.authed(bad))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument, "{e:?}");
    assert_eq!(enrollment(&app, &id).await.status, "active");
    let ok = post_event(&app, "ann", "payment.received", "").await;
    assert_eq!(ok.deliveries[0].effect, "woke");
    app.stop().await;
}

/// `nudge webhook-secret show` prints the secret the webhooks are checked with;
/// `nudge twilio-token set -` stores the Twilio auth token read from stdin.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cli_shows_the_webhook_secret_and_sets_the_twilio_token() {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("nudge.db").display());
    let nudge = env!("CARGO_BIN_EXE_nudge");
    let show = || {
        Command::new(nudge)
            .args(["webhook-secret", "show", "--database-url", &url])
            .output()
            .unwrap()
    };
    let first = show();
    assert!(first.status.success(), "{first:?}");
    let secret = String::from_utf8(first.stdout).unwrap().trim().to_string();
    assert_eq!(secret.len(), 64, "{secret}");
    assert!(secret.chars().all(|c| c.is_ascii_hexdigit()));
    assert_eq!(String::from_utf8(show().stdout).unwrap().trim(), secret);

    let mut child = Command::new(nudge)
        .args(["twilio-token", "set", "-", "--database-url", &url])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"tw-secret\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let db = nudge::store::Db::connect(&nudge::config::DatabaseUrl::parse(&url).unwrap())
        .await
        .unwrap();
    let keys = nudge::store::signals::webhook_keys(&db, "default")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(keys, (secret, Some("tw-secret".to_string())));

    let unknown = Command::new(nudge)
        .args([
            "webhook-secret",
            "show",
            "--account",
            "nope",
            "--database-url",
            &url,
        ])
        .output()
        .unwrap();
    assert!(!unknown.status.success());
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("no account `nope`"));
}

// ----- group commit (docs/signals.md, Throughput) ------------------------------------------------

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
        let stored = nudge::store::signals::deliveries(&app.state.db, signal)
            .await
            .unwrap();
        assert_eq!(stored.len(), 1, "{signal}");
        assert_eq!(
            (stored[0].enrollment_id.as_str(), stored[0].effect.as_str()),
            (ann.as_str(), "buffered")
        );
    }

    // Bob: exactly one reply woke him; the rest found him completed and reached nothing.
    let bobs: Vec<&SignalReceipt> = receipts
        .iter()
        .filter(|(who, _, _)| *who == "bob")
        .map(|(_, _, r)| r)
        .collect();
    let woke: Vec<&&SignalReceipt> = bobs.iter().filter(|r| !r.deliveries.is_empty()).collect();
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
            kind: nudge::signals::SignalKind::Reply {
                channel: "email".into(),
            },
            source: "api",
            provider_id: Some(provider_id.to_string()),
            payload: json!({}),
            replay_key: replay_key.map(str::to_string),
        },
        phone: None,
        now: app.clock_now(),
    }
}

/// A reply by SMS from `phone`, its contacts found in the group.
fn by_phone(phone: &str, provider_id: &str, app: &TestApp) -> nudge::service::signals::Pending {
    let mut p = pending("", provider_id, None, app);
    p.arrival.contacts.clear();
    p.arrival.kind = nudge::signals::SignalKind::Reply {
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
                .map(|d| (d.enrollment_id.clone(), d.effect.clone()))
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
        opt_out.arrival.kind = nudge::signals::SignalKind::OptOut {
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
        let mut answers = receive_group(&app.state, group()).await;
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
    let answers = receive_group(&app.state, group).await;
    assert!(answers[1].is_err(), "{:?}", answers[1]);
    let woke = |id: &str| vec![(id.to_string(), "woke".to_string())];
    assert_eq!(answer_of(&answers[0]).unwrap().2, woke(&ann));
    assert_eq!(answer_of(&answers[2]).unwrap().2, woke(&bob));
    assert_eq!(signal_entries(&app, &ann).await.len(), 1);
    assert_eq!(signal_entries(&app, &bob).await.len(), 1);
    app.stop().await;
}
